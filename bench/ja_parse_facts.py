"""Facts from the predicates of a parsed Japanese sentence (``bench.ja_parse``): a table of predicates, the cases of the
arguments they take for each attribute, and what negation, tense and aspect make of the statement.

A predicate that describes a noun (「大阪に住んでる友達」), a wish, a condition, someone else as subject or an
argument in an unexpected case yields nothing: the parse gives up rather than guess, as the rules do.
"""

from __future__ import annotations

from dataclasses import dataclass

from lumina_memory.nodes.knowledge.draft import Draft, Registry
from lumina_memory.nodes.knowledge.ja_grammar import (
    FIRST_PERSON, clause_start, is_question, is_unreal, reports_speech, surface_of,
)
from bench.ja_parse import Arg, Predicate, predicates
from lumina_memory.nodes.knowledge.ja_sentence import _ADVERB_PHRASES, NO_LONGER, JaSentence, about
from lumina_memory.nodes.knowledge.ja_time import _NOT_HABITS
from lumina_memory.nodes.knowledge.params import KnowledgeParams
from lumina_memory.nodes.text.tokenize import morphemes

STATE, CHANGE, TASTE, QUIT, TAKE_UP, CHOSEN = "state", "change", "taste", "quit", "take_up", "chosen"
_OBJECT = ("を", "が", "は", "も", "って", "しか", "ばかり", "だけ")


@dataclass(frozen=True)
class Reading:
    """One way a predicate states a fact: the attribute, the cases of the argument that holds the value, the kind
    of statement (a state, a change, a taste …) and whether the value must be a proper noun (a place)."""

    attribute: str
    cases: tuple[str, ...]
    kind: str
    proper: bool = False
    polarity: str = "positive"


_LIVES = Reading("lives_in", ("に",), STATE, proper=True)
_LIVES_AT = Reading("lives_in", ("で", "に"), STATE, proper=True)
_MOVED = Reading("lives_in", ("に", "へ"), CHANGE, proper=True)
_WORKS = Reading("works_at", ("で", "に"), STATE)
_JOINED = Reading("works_at", ("に",), CHANGE)
_LIKE = Reading("likes", _OBJECT, TASTE)
_DISLIKE = Reading("dislikes", _OBJECT, TASTE)

READINGS: dict[str, tuple[Reading, ...]] = {
    "住む": (_LIVES,), "暮らす": (_LIVES_AT,), "一人暮らし": (_LIVES_AT,), "独り暮らし": (_LIVES_AT,),
    "引っ越す": (_MOVED,), "引越す": (_MOVED,), "越す": (_MOVED,), "移住": (_MOVED,), "引っ越し": (_MOVED,),
    "働く": (_WORKS, Reading("job", ("として",), STATE)), "勤める": (_WORKS,), "勤務": (_WORKS,),
    "就職": (_JOINED,), "転職": (_JOINED,), "入社": (_JOINED,),
    "飼う": (Reading("pet", _OBJECT, STATE),),
    "持つ": (Reading("has", _OBJECT, STATE),),
    "飲む": (Reading("drink", _OBJECT, STATE),), "飲める": (Reading("drink", _OBJECT, STATE),),
    "する": (Reading("drink", ("に",), CHOSEN), Reading("food", ("に",), CHOSEN)),
    "始める": (Reading("habit", ("を", "も"), TAKE_UP),),
    "やめる": (Reading("likes", _OBJECT, QUIT, polarity="negative"), Reading("habit", _OBJECT, QUIT, polarity="negative")),
    "止める": (Reading("likes", _OBJECT, QUIT, polarity="negative"), Reading("habit", _OBJECT, QUIT, polarity="negative")),
    "好き": (_LIKE,), "大好き": (_LIKE,), "はまる": (Reading("likes", ("に",), TASTE),),
    "嵌まる": (Reading("likes", ("に",), TASTE),), "ハマる": (Reading("likes", ("に",), TASTE),),
    "嫌い": (_DISLIKE,), "大嫌い": (_DISLIKE,), "苦手": (_DISLIKE,), "無理": (Reading("dislikes", ("だけ",), TASTE),),
}
_DRINK_ENDINGS = ("茶", "ティー", "コーヒー", "ジュース", "ラテ", "ミルク", "ビール", "ワイン")


def parsed_drafts(text: str, params: KnowledgeParams, registry: Registry, said_at: float) -> list[Draft]:
    """Drafts the parse reads in one sentence, after the same gate as the rules (``ja_patterns.extract_ja``): a
    question, reported speech, a wish or a condition yields none."""
    toks = morphemes(text)
    if not toks or is_question(text, toks) or reports_speech(toks) or is_unreal(text, toks):
        return []
    return extract_parsed(JaSentence(text, toks, params, registry, said_at, params.zone()))


def extract_parsed(s: JaSentence) -> list[Draft]:
    """Drafts read from the dependency parse of one sentence (pattern ``ja.parse.<attribute>``)."""
    out: list[Draft] = []
    for p in predicates(s):
        readings = READINGS.get(p.lemma) or READINGS.get(s.toks[p.start].dictionary, ())
        if p.modifies_noun or p.mood.unreal or not readings:
            continue
        for reading in readings:
            # the argument nearest the predicate: 「実はお寿司あんまり好きじゃない」 is about お寿司
            arg = next((a for a in reversed(p.args) if a.has(*reading.cases) and _fits(s, reading, a)), None)
            if arg is None:
                continue
            found = _statement(s, reading, p, arg)
            if found is None:
                continue
            attribute, polarity = found
            who = about(s, arg.start)
            if who.subject is None:
                continue
            d = s.draft(attribute, s.toks[arg.start:arg.end], f"ja.parse.{reading.attribute}", subject=who.subject,
                        polarity=polarity, context=who.context, **_detail(s, attribute, arg))
            if d:
                out.append(d)
    return out


def _fits(s: JaSentence, reading: Reading, arg: Arg) -> bool:
    words = s.toks[arg.start:arg.end]
    value = surface_of(words)
    if value in FIRST_PERSON or value in s.params.context_words or value + arg.case in _ADVERB_PHRASES:
        return False
    if reading.proper and words[-1].pos[1] != "固有名詞":
        return False
    if reading.attribute == "pet":
        return s.params.relations.get(value) == "pet"
    if reading.kind == CHOSEN:
        return s.params.categories.get(value) == reading.attribute or (
            reading.attribute == "drink" and value.endswith(_DRINK_ENDINGS))
    if reading.kind == TAKE_UP:
        return value not in _NOT_HABITS and (words[-1].pos[2] == "サ変可能" or words[-1].pos[0] == "名詞")
    return True


def _no_longer(s: JaSentence, p: Predicate, arg: Arg) -> bool:
    """もう / 今は before the predicate, or …なくなった: a negation that says the fact ended."""
    start = clause_start(s.toks, min(arg.start, p.start))
    return p.mood.stopped or any(t.surface in NO_LONGER for t in s.toks[start:p.at])


def _statement(s: JaSentence, reading: Reading, p: Predicate, arg: Arg) -> tuple[str, str] | None:
    """(attribute, polarity) the predicate's mood makes of the reading, or None when it states no fact."""
    mood = p.mood
    if reading.kind == STATE:
        if mood.negated:
            if arg.has("しか"):
                return reading.attribute, "positive"  # 軽自動車しか持ってない
            return (reading.attribute, "negative") if _no_longer(s, p, arg) else None
        if mood.past and not _started(s, p):
            return None  # 住んでた, 飼ってた: what used to be (飼い始めた: what began)
        if reading.attribute == "drink" and not (_is_drink(s, arg) and (mood.progressive or _habitual(s, p))):
            return None  # 「コーヒーを飲む」 alone may be a plan, 「薬を飲んでる」 no drink
        return reading.attribute, "positive"
    if reading.kind == CHOSEN:  # 「今はチャイにしてる」: what one has these days (「チャイにした」 may be once)
        return (reading.attribute, "positive") if mood.progressive and not (mood.past or mood.negated) else None
    if reading.kind == CHANGE:
        return (reading.attribute, "positive") if mood.past and not mood.negated else None
    if reading.kind in (QUIT, TAKE_UP):
        if mood.negated or not (mood.past or mood.progressive or mood.te_form):
            return None
        return reading.attribute, reading.polarity
    # a taste
    like = reading.attribute == "likes"
    if mood.became and not mood.negated:
        return reading.attribute, "positive"  # 好きになった
    if mood.negated:
        if _no_longer(s, p, arg):
            return reading.attribute, "negative"
        return ("dislikes", "positive") if like and p.lemma in ("好き", "大好き") else None  # 好きじゃない
    if mood.past and not mood.progressive:
        return None  # 好きだった: not sure it ended
    return reading.attribute, "positive"


def _started(s: JaSentence, p: Predicate) -> bool:
    return any(t.dictionary in ("始める", "出す") for t in s.toks[p.at + 1:p.mood.end])


def _is_drink(s: JaSentence, arg: Arg) -> bool:
    value = surface_of(s.toks[arg.start:arg.end])
    return s.params.categories.get(value) == "drink" or value.endswith(_DRINK_ENDINGS)


def _habitual(s: JaSentence, p: Predicate) -> bool:
    return any(t.surface in s.params.habit_markers_ja for t in s.toks[:p.at])


def _detail(s: JaSentence, attribute: str, arg: Arg) -> dict[str, str]:
    if attribute == "pet":
        return {"detail": surface_of(s.toks[arg.start:arg.end])}
    if attribute in ("habit", "drink"):
        marker = next((t.surface for t in s.toks if t.surface in s.params.habit_markers_ja), "")
        return {"detail": marker} if attribute == "habit" else {}
    return {}
