"""Japanese patterns over Sudachi's analysis: what chat users say about themselves and their life.

Each rule reads one sentence's morphemes and returns drafts. Rules give up rather than guess: a question, a
wish, a condition, hearsay or an unknown subject (彼, あの人) yields nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from nodes.text.tokenize import Morpheme, morphemes

from .dates import find_date, local_day
from .draft import Draft, Registry
from .ja_grammar import (
    FIRST_PERSON, Mood, clause_start, is_hiragana, is_katakana, is_question, is_unreal, key_of, mood_after,
    noun_span_after, noun_span_before, reports_speech, strip_honorific, surface_of,
)
from .models import USER
from .params import KnowledgeParams

_LIKE = frozenset(("好き", "大好き"))
_DISLIKE = frozenset(("嫌い", "大嫌い", "苦手"))
_HOOKED = frozenset(("嵌まる", "はまる"))
_QUIT = frozenset(("やめる", "止める", "辞める"))
_SWITCH = frozenset(("する", "変える", "切り替える", "乗り換える", "替える", "換える"))
_NO_LONGER = frozenset(("もう", "もはや", "今", "今は"))
_USED_TO = frozenset(("昔", "前", "以前", "子供", "小さい頃", "学生"))
_OBJECT_PARTICLES = frozenset(("が", "は", "も", "を", "って"))
_NAME_FOLLOW = frozenset(("は", "が", "も", "って", "と", "、", "。", "!", "を", "に", "の"))
_STRICT_NAME_FOLLOW = frozenset(("は", "が", "も", "って", "と", "、", "。", "!"))
_NON_ACTIVITY = frozenset("なる ある いる 思う 言う 降る 晴れる 曇る 疲れる 眠る 困る 分かる 出来る できる 見える 聞こえる".split())
_PLAN_NOUNS = frozenset(("予定", "つもり"))


@dataclass
class JaSentence:
    text: str
    toks: tuple[Morpheme, ...]
    params: KnowledgeParams
    registry: Registry
    said_at: float
    zone: ZoneInfo

    def draft(self, attribute: str, span: list[Morpheme] | tuple[Morpheme, ...], pattern: str, **kw) -> Draft | None:
        value = surface_of(span)
        if not value or len(value) > self.params.max_value_chars:
            return None
        key = kw.pop("value_key", None) or key_of(span)
        category = kw.pop("category", None)
        if category is None:
            category = self.params.categories.get(value) or self.params.categories.get(key, "")
        return Draft(attribute=attribute, value=value, value_key=key, pattern=pattern, category=category, **kw)


# --- who the sentence is about -------------------------------------------------------------------------------

@dataclass(frozen=True)
class About:
    subject: str | None
    """USER, a name or relation noun; None: someone unknown (彼, あの人): the sentence is skipped."""
    context: str = ""


def about(s: JaSentence, before: int) -> About:
    """The topic phrases (…は, …が, …って) before index ``before`` decide whose fact it is and in what context."""
    subject: str | None = USER
    context = ""
    for k in range(before):
        t = s.toks[k]
        if not (t.pos[0] == "助詞" and t.surface in ("は", "が", "も", "って")):
            continue
        if k > 0 and s.toks[k - 1].pos[0] == "代名詞":
            pronoun = s.toks[k - 1].surface
            subject = USER if pronoun in FIRST_PERSON else None
            continue
        span = noun_span_before(s.toks, k)
        if span is None:
            if k > 0 and s.toks[k - 1].surface in FIRST_PERSON:
                subject = USER
            elif k > 0 and s.toks[k - 1].surface in s.params.context_words:
                context = s.toks[k - 1].surface  # 週末は (a time word, not a noun phrase)
            continue
        words = s.toks[span[0]:span[1]]
        word = surface_of(words)
        name = surface_of(strip_honorific(words))
        if word in FIRST_PERSON:
            subject = USER
        elif word in s.params.context_words or (k >= 2 and s.toks[k - 1].surface == "に" and word in s.params.context_words):
            context = word
        elif name in s.registry.names:
            subject = name
        elif word in s.params.relations:
            subject = word  # 「妹は…」: the relation as said (the sibling item links it to a name)
        elif words[-1].pos[1] == "固有名詞" and words[-1].pos[2] == "人名":
            subject = name
    return About(subject, context)


# --- objects -----------------------------------------------------------------------------------------------

def object_before(s: JaSentence, i: int, particles: frozenset[str]) -> tuple[int, list[Morpheme]] | None:
    """(start, morphemes) of the thing the predicate at ``i`` is about: 「コーヒーが」, 「猫」, 「走るのが」."""
    end = _skip_adverbs(s.toks, i)
    if end > 0 and s.toks[end - 1].pos[0] == "助詞":
        if s.toks[end - 1].surface not in particles:
            return None
        end -= 1
    if end > 0 and s.toks[end - 1].surface in ("の", "こと") and end > 1 and s.toks[end - 2].pos[0] == "動詞":
        verb = s.toks[end - 2]
        start = end - 2
        if start > 1 and s.toks[start - 1].surface == "を":
            span = noun_span_before(s.toks, start - 1)
            if span:
                return span[0], [*s.toks[span[0]:start], verb._replace(surface=verb.dictionary)]
        return start, [verb._replace(surface=verb.dictionary)]
    span = noun_span_before(s.toks, end)
    if span is None:
        return None
    return span[0], list(s.toks[span[0]:span[1]])


_ADVERB_PHRASES = ("どうしても", "本当に", "ほんとに", "ほんと", "マジで", "めっちゃ", "一番", "いちばん", "結構", "けっこう",
                   "相変わらず", "やっぱり", "やっぱ", "今でも", "未だに", "昔から", "ずっと", "意外と", "実は")


def _skip_adverbs(toks: tuple[Morpheme, ...], end: int) -> int:
    """Index before the adverbs that sit between an object and its predicate (どうしても好き, 相変わらず大好き)."""
    moved = True
    while moved and end > 0:
        moved = False
        if toks[end - 1].pos[0] in ("副詞", "補助記号") and toks[end - 1].surface != "?":
            end, moved = end - 1, True
            continue
        for phrase in _ADVERB_PHRASES:
            text, k = "", end
            while k > 0 and len(text) < len(phrase):
                k -= 1
                text = toks[k].surface + text
            if text == phrase:
                end, moved = k, True
                break
    return end


def _compound(t: Morpheme, words: frozenset[str]) -> tuple[str, str] | None:
    """「猫好き」 is one morpheme: (thing, predicate) when a noun ends with a like/dislike word."""
    if t.pos[0] != "名詞":
        return None
    for w in words:
        if t.surface.endswith(w) and len(t.surface) > len(w):
            return t.surface[: -len(w)], w
    return None


# --- rules -------------------------------------------------------------------------------------------------

def likes(s: JaSentence) -> list[Draft]:
    out: list[Draft] = []
    for i, t in enumerate(s.toks):
        like = t.normalized in _LIKE or t.surface in _LIKE
        dislike = t.normalized in _DISLIKE or t.surface in _DISLIKE
        hooked = t.normalized in _HOOKED and t.pos[0] == "動詞"
        compound = _compound(t, _LIKE | _DISLIKE)
        if not (like or dislike or hooked or compound):
            continue
        mood = mood_after(s.toks, i)
        if mood.unreal or _modifies_noun(s.toks, i, mood):
            continue
        if compound:
            thing, word = compound
            like, dislike = word in _LIKE, word in _DISLIKE
            obj_start, span = i, list(morphemes(thing))
        else:
            found = object_before(s, i, frozenset(("に",)) if hooked else _OBJECT_PARTICLES)
            if found is None:
                continue
            obj_start, span = found
        who = about(s, obj_start)
        if who.subject is None:
            continue
        start = clause_start(s.toks, obj_start)
        no_longer = mood.stopped or any(x.surface in _NO_LONGER for x in s.toks[start:obj_start])
        used_to = mood.past and any(x.surface in _USED_TO for x in s.toks[start:obj_start])
        positive_like = like or hooked
        if mood.became and not mood.negated:
            attribute, polarity = ("likes" if positive_like else "dislikes"), "positive"  # 好きになった
        elif mood.negated:
            if no_longer:
                attribute, polarity = ("likes" if positive_like else "dislikes"), "negative"
            elif positive_like and not hooked:
                attribute, polarity = "dislikes", "positive"  # 好きじゃない
            else:
                continue  # 嫌いじゃない says little
        elif used_to:
            attribute, polarity = ("likes" if positive_like else "dislikes"), "negative"
        elif mood.past and not mood.progressive and not hooked:
            continue  # 好きだった with no 昔: not sure it ended
        else:
            attribute, polarity = ("likes" if positive_like else "dislikes"), "positive"
        d = s.draft(attribute, span, "ja.hooked" if hooked else "ja.like" if positive_like else "ja.dislike",
                    subject=who.subject, polarity=polarity, context=who.context)
        if d:
            out.append(d)
    return out


def _modifies_noun(toks: tuple[Morpheme, ...], i: int, mood: Mood) -> bool:
    """「好きな映画」「妹が好きなケーキ」: the predicate describes a noun, it states nothing by itself."""
    j = i + 1
    if j < len(toks) and toks[j].surface in ("な", "の") and toks[j].pos[0] == "助動詞":
        j += 1
    elif mood.end > i + 1:
        j = mood.end
    return j < len(toks) and toks[j].pos[0] == "名詞" and j == i + 2 and toks[j].pos[1] != "数詞"


def favourite(s: JaSentence) -> list[Draft]:
    """「好きな飲み物は紅茶」「一番好きな映画はインセプション」."""
    out: list[Draft] = []
    toks = s.toks
    for i in range(len(toks) - 4):
        if toks[i].normalized not in _LIKE or toks[i + 1].surface != "な" or toks[i + 3].surface != "は":
            continue
        noun = toks[i + 2]
        span = noun_span_after(toks, i + 4)
        if span is None or noun.pos[0] != "名詞":
            continue
        mood = mood_after(toks, span[1] - 1)
        if mood.unreal or mood.negated:
            continue
        who = about(s, max(i - 1, 0))
        if who.subject is None:
            continue
        attribute = s.params.favourite_nouns.get(noun.surface, "likes")
        d = s.draft(attribute, toks[span[0]:span[1]], "ja.favourite", subject=who.subject,
                    detail="" if attribute != "likes" else noun.surface, context=who.context)
        if d:
            out.append(d)
    return out


def quits_and_switches(s: JaSentence) -> list[Draft]:
    """「タバコやめた」「コーヒーやめて紅茶にした」「コーヒーから紅茶に変えた」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks):
        if t.pos[0] != "動詞":
            continue
        if t.dictionary in _QUIT or t.normalized in _QUIT:
            mood = mood_after(toks, i)
            later_past = any(x.pos[0] == "助動詞" and x.dictionary == "た" for x in toks[mood.end:])
            if mood.unreal or mood.negated or not (mood.past or (mood.te_form and later_past)):
                continue
            found = object_before(s, i, frozenset(("を", "は", "も")))
            if found is None:
                continue
            obj_start, span = found
            who = about(s, obj_start)
            if who.subject is None:
                continue
            attributes = ("works_at",) if t.dictionary == "辞める" else ("likes", "habit")
            for attribute in attributes:
                d = s.draft(attribute, span, "ja.quit", subject=who.subject, polarity="negative", context=who.context)
                if d:
                    out.append(d)
        elif t.dictionary in _SWITCH and i >= 2 and toks[i - 1].surface == "に":
            mood = mood_after(toks, i)
            if mood.unreal or mood.negated or not mood.past:
                continue
            span = noun_span_before(toks, i - 1)
            if span is None:
                continue
            new = list(toks[span[0]:span[1]])
            old_span = noun_span_before(toks, span[0] - 1) if span[0] > 1 and toks[span[0] - 1].surface == "から" else None
            quit_before = any(x.dictionary in _QUIT for x in toks[:span[0]])
            if t.dictionary == "する" and old_span is None and not quit_before:
                continue  # 「紅茶にした」 alone is a choice made once, not a switch
            who = about(s, span[0])
            if who.subject is None:
                continue
            value = surface_of(new)
            category = s.params.categories.get(value) or s.params.categories.get(key_of(new), "")
            attribute = category if category in s.params.policy and category in ("drink", "food") else "likes"
            d = s.draft(attribute, new, "ja.switch", subject=who.subject, context=who.context)
            if d:
                out.append(d)
            if old_span is not None:
                d = s.draft("likes", toks[old_span[0]:old_span[1]], "ja.switch", subject=who.subject,
                            polarity="negative", context=who.context)
                if d:
                    out.append(d)
    return out


def _verb_with_place(s: JaSentence, verbs: frozenset[str], particles: tuple[str, ...]) -> list[tuple[int, list[Morpheme], Mood]]:
    """(verb index, place, mood) for 「<place>に住む」-shaped phrases."""
    found = []
    for i, t in enumerate(s.toks):
        if t.dictionary not in verbs and t.normalized not in verbs:
            continue
        k = i - 1
        if k >= 0 and s.toks[k].surface in ("は", "も"):
            k -= 1
        if k < 1 or s.toks[k].surface not in particles:
            continue
        span = noun_span_before(s.toks, k)
        if span is None:
            continue
        found.append((i, list(s.toks[span[0]:span[1]]), mood_after(s.toks, i)))
    return found


def places(s: JaSentence) -> list[Draft]:
    """住んでる, 引っ越した, 出身, 勤めてる, 働いてる, 在住, 生まれ, 就職した."""
    out: list[Draft] = []
    toks = s.toks

    def add(attribute: str, span: list[Morpheme], pattern: str, at: int, polarity: str = "positive") -> None:
        who = about(s, at)
        if who.subject is None:
            return
        d = s.draft(attribute, span, pattern, subject=who.subject, polarity=polarity, context=who.context)
        if d:
            out.append(d)

    for i, span, mood in _verb_with_place(s, frozenset(("住む",)), ("に",)):
        if mood.unreal or (mood.past and not mood.negated):
            continue  # 住んでた: where she used to live is not where she lives
        start = clause_start(toks, i)
        if mood.negated:
            if any(x.surface in _NO_LONGER for x in toks[start:i]):
                add("lives_in", span, "ja.lives", i, "negative")
            continue
        add("lives_in", span, "ja.lives", i)
    for i, span, mood in _verb_with_place(s, frozenset(("引っ越す", "越す", "移住", "引越す")), ("に", "へ")):
        if mood.unreal or mood.negated or not mood.past:
            continue
        add("lives_in", span, "ja.moved", i)
    for i, span, mood in _verb_with_place(s, frozenset(("勤める",)), ("に",)):
        if not mood.unreal and not mood.negated and (mood.progressive or not mood.past):
            add("works_at", span, "ja.works", i)
    for i, span, mood in _verb_with_place(s, frozenset(("働く",)), ("で",)):
        if not mood.unreal and not mood.negated and (mood.progressive or not mood.past):
            add("works_at", span, "ja.works", i)
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.surface in ("在住", "出身", "生まれ", "勤務", "就職") and t.pos[0] == "名詞":
            attribute = {"在住": "lives_in", "出身": "from", "生まれ": "from", "勤務": "works_at", "就職": "works_at"}[t.surface]
            pattern = {"lives_in": "ja.lives", "from": "ja.from", "works_at": "ja.works"}[attribute]
            mood = mood_after(toks, i)
            if mood.unreal or mood.negated:
                continue
            if t.surface in ("勤務", "就職"):
                if nxt is None or nxt.dictionary != "する" or i < 2 or toks[i - 1].surface not in ("に", "で"):
                    continue
                mood = mood_after(toks, i + 1)
                if mood.unreal or mood.negated or (t.surface == "勤務" and mood.past and not mood.progressive):
                    continue
                span = noun_span_before(toks, i - 1)
            elif nxt is not None and nxt.surface == "は":  # 出身は北海道
                span = noun_span_after(toks, i + 2)
                if span is None or mood_after(toks, span[1] - 1).unreal:
                    continue
            else:
                before = i - 1 if i > 0 and toks[i - 1].surface == "の" else i
                span = noun_span_before(toks, before)
            if span:
                add(attribute, list(toks[span[0]:span[1]]), pattern, min(span[0], i))
        if t.surface == "と" and nxt is not None and nxt.dictionary == "する" and i + 3 < len(toks):
            if toks[i + 2].surface in ("て", "で") and toks[i + 3].dictionary == "働く":
                mood = mood_after(toks, i + 3)
                span = noun_span_before(toks, i)
                if span and not mood.unreal and not mood.negated and (mood.progressive or not mood.past):
                    add("job", list(toks[span[0]:span[1]]), "ja.job", span[0])
        if t.surface in ("仕事", "職業") and nxt is not None and nxt.surface == "は" and i + 2 < len(toks):
            span = noun_span_after(toks, i + 2)
            if span is not None and span[1] == len(toks) or span is not None and toks[span[1]].pos[0] in ("助動詞", "補助記号", "助詞"):
                mood = mood_after(toks, span[1] - 1)
                if not mood.unreal and not mood.negated and not mood.past:
                    add("job", list(toks[span[0]:span[1]]), "ja.job", i)
    return out


def names(s: JaSentence) -> list[Draft]:
    """「名前はさくら」「山田花子と申します」「猫の名前はモカ」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks):
        if t.surface == "名前" and i + 2 < len(toks) and toks[i + 1].surface == "は":
            span = noun_span_after(toks, i + 2)
            if span is None:
                continue
            mood = mood_after(toks, span[1] - 1)
            if mood.unreal or mood.negated:
                continue
            name = strip_honorific(toks[span[0]:span[1]])
            owner = toks[i - 2] if i >= 2 and toks[i - 1].surface == "の" else None
            if owner is None or owner.surface in FIRST_PERSON:
                who = about(s, i)
                if who.subject == USER:
                    d = s.draft("name", name, "ja.name")
                    if d:
                        out.append(d)
            elif owner.surface in s.params.relations or owner.normalized in s.params.relations:
                relation = owner.surface
                attribute = s.params.relations.get(relation) or s.params.relations[owner.normalized]
                d = s.draft(attribute, name, "ja.named", detail=relation)
                if d:
                    s.registry.add(d.value, attribute, relation)
                    out.append(d)
        if t.dictionary in ("申す", "言う", "いう") and i >= 2 and toks[i - 1].surface in ("と", "って"):
            mood = mood_after(toks, i)
            polite = any(x.dictionary == "ます" for x in toks[i + 1:mood.end])
            if mood.unreal or mood.negated or mood.past or not polite:
                continue
            span = noun_span_before(toks, i - 1)
            if span is None or about(s, span[0]).subject != USER or span[0] > 2:
                continue
            d = s.draft("name", strip_honorific(toks[span[0]:span[1]]), "ja.name")
            if d:
                out.append(d)
    return out


def _looks_like_name(s: JaSentence, span: tuple[int, int]) -> bool:
    words = strip_honorific(s.toks[span[0]:span[1]])
    text = surface_of(words)
    honorific = span[1] - span[0] > len(words)
    if text in s.params.not_names or text in s.params.relations or text in s.params.categories:
        return False
    nxt = s.toks[span[1]].surface if span[1] < len(s.toks) else "。"
    if all(w.pos[1] == "固有名詞" and w.pos[2] == "人名" for w in words):
        return nxt in _NAME_FOLLOW
    if len(words) == 1 and (is_katakana(text) or (honorific and is_hiragana(text))) and len(text) <= 8:
        return nxt in _STRICT_NAME_FOLLOW
    return False


def people_and_pets(s: JaSentence) -> list[Draft]:
    """「妹の美咲」「猫のモカ」「友達のケンタくん」, and 「犬を飼ってる」「モカって猫を飼ってる」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks[:-2]):
        relation = t.surface if t.surface in s.params.relations else t.normalized if t.normalized in s.params.relations else None
        if relation is None or toks[i + 1].surface != "の" or t.pos[0] != "名詞":
            continue
        if i >= 2 and toks[i - 1].surface == "の" and toks[i - 2].surface not in FIRST_PERSON:
            continue  # 友達の妹の美咲: someone else's sister
        end = i + 2
        while end < len(toks) and (toks[end].pos[0] == "名詞" and toks[end].pos[1] != "数詞" or
                                   toks[end].surface in ("さん", "ちゃん", "くん", "君")):
            end += 1
        if end == i + 2 or not _looks_like_name(s, (i + 2, end)):
            continue
        attribute = s.params.relations[relation]
        d = s.draft(attribute, strip_honorific(toks[i + 2:end]), "ja.named", detail=t.surface)
        if d:
            s.registry.add(d.value, attribute, t.surface)
            out.append(d)
    for i, t in enumerate(toks):
        if t.dictionary != "飼う" or i < 2 or toks[i - 1].surface != "を":
            continue
        mood = mood_after(toks, i)
        if mood.unreal or mood.negated or (mood.past and not mood.progressive) or about(s, i).subject != USER:
            continue
        span = noun_span_before(toks, i - 1)
        if span is None:
            continue
        species = surface_of(toks[span[0]:span[1]])
        if s.params.relations.get(species) != "pet" and s.params.relations.get(key_of(toks[span[0]:span[1]])) != "pet":
            continue
        k = span[0]
        if k >= 2 and toks[k - 1].surface in ("って", "という", "っていう") or (k >= 3 and toks[k - 1].dictionary in ("言う", "いう")):
            back = k - 1 if toks[k - 1].surface in ("って", "という", "っていう") else k - 2
            if toks[back].surface in ("と", "って") or toks[k - 1].surface in ("って", "という", "っていう"):
                name_span = noun_span_before(toks, back)
                if name_span is not None:
                    d = s.draft("pet", strip_honorific(toks[name_span[0]:name_span[1]]), "ja.named", detail=species)
                    if d:
                        s.registry.add(d.value, "pet", species)
                        out.append(d)
                    continue
        d = s.draft("pet", toks[span[0]:span[1]], "ja.pet_kept", detail=species)
        if d:
            out.append(d)
    return out


def ages(s: JaSentence) -> list[Draft]:
    """「猫のモカは3歳」「モカ4歳になった」「私は25歳です」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks[:-1]):
        if t.pos[1] != "数詞" or toks[i + 1].surface not in ("歳", "才"):
            continue
        j = i + 2
        nxt = toks[j].surface if j < len(toks) else "。"
        if nxt == "に" and j + 1 < len(toks) and toks[j + 1].dictionary == "なる":
            mood = mood_after(toks, j + 1)
            if mood.unreal or mood.negated or not mood.past:
                continue
        elif nxt in ("です", "だ", "よ", "ね", "。", "!", "、", "だよ", "な", "なの", "なん"):
            mood = mood_after(toks, i + 1)
            if mood.unreal or mood.negated or mood.past:
                continue
        else:
            continue  # 3歳の時, 3歳から, 3歳になる猫
        subject: str | None = None
        start = i
        if i >= 2 and toks[i - 1].surface == "で" and toks[i - 2].surface in ("今年", "今日", "今月"):
            start = i - 2  # 今年で30歳
        if start > 0 and toks[start - 1].pos[0] == "名詞" and toks[start - 1].pos[1] != "数詞":
            span = noun_span_before(toks, start)
            if span is not None:
                name = surface_of(strip_honorific(toks[span[0]:span[1]]))
                if name in s.registry.names or all(w.pos[2] == "人名" for w in toks[span[0]:span[1]]):
                    subject = name
        if subject is None:
            who = about(s, start)
            subject = who.subject
            if subject == USER and not any(x.surface in FIRST_PERSON for x in toks[:start]):
                subject = None  # 「3歳になった」 alone: whose age?
        if subject is None:
            continue
        value = t.normalized if t.normalized.isdigit() else t.surface
        out.append(Draft(attribute="age", value=value, value_key=value, pattern="ja.age", subject=subject))
    return out


def possessions(s: JaSentence) -> list[Draft]:
    """「車を持ってる」「新しいiPhoneを買った」「車を売った」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks):
        if t.dictionary not in ("持つ", "買う", "売る", "手放す") or i < 2 or toks[i - 1].surface != "を":
            continue
        span = noun_span_before(toks, i - 1)
        if span is None:
            continue
        words = toks[span[0]:span[1]]
        is_new = span[0] > 0 and toks[span[0] - 1].dictionary in ("新しい",)
        known = surface_of(words) in s.params.possessions or words[-1].surface in s.params.possessions
        if not (known or is_new):
            continue
        mood = mood_after(toks, i)
        if mood.unreal or about(s, span[0]).subject != USER:
            continue
        if t.dictionary == "持つ":
            if mood.past and not mood.progressive:
                continue
            start = clause_start(toks, span[0])
            if mood.negated and not any(x.surface in _NO_LONGER for x in toks[start:span[0]]):
                continue
            polarity = "negative" if mood.negated else "positive"
        elif mood.negated or not mood.past:
            continue
        else:
            polarity = "positive" if t.dictionary == "買う" else "negative"
        d = s.draft("has", words, "ja.has", polarity=polarity)
        if d:
            out.append(d)
    return out


def _predicate_value(s: JaSentence, start: int) -> tuple[list[Morpheme], int] | None:
    """The phrase from ``start`` to the clause's main verb (dictionary form), with the verb's index."""
    toks = s.toks
    for j in range(start, len(toks)):
        t = toks[j]
        if t.pos[0] == "補助記号" or (t.pos[0] == "助詞" and t.pos[1] == "接続助詞" and t.surface not in ("て", "で")):
            return None
        helper = j > 0 and toks[j - 1].pos[1] == "接続助詞" and toks[j - 1].surface in ("て", "で")
        if t.pos[0] == "動詞" and (t.pos[1] != "非自立可能" or not helper):
            if t.dictionary == "する" and j > start and toks[j - 1].pos[0] == "名詞":
                span = list(toks[start:j])  # ジョギングする → ジョギング
            else:
                span = [*toks[start:j], t._replace(surface=t.dictionary)]
            while span and span[0].pos[0] in ("助詞", "補助記号"):
                span.pop(0)
            return (span, j) if span else None
    return None


def plans(s: JaSentence) -> list[Draft]:
    """「12月5日に京都に行く」「明日は歯医者の予定」「昨日京都に行った」 (day resolved against the turn's time)."""
    toks = s.toks
    mention = find_date(s.text, s.said_at, s.zone, future=True, english=False)
    if mention is None:
        return []
    # the morpheme right after the date expression
    pos = 0
    after = None
    for k, t in enumerate(toks):
        pos += len(t.surface)
        if pos >= mention.end:
            after = k + 1
            break
    if after is None:
        return []
    while after < len(toks) and toks[after].surface in ("に", "は", "、", "も", "の"):
        after += 1
    today = local_day(s.said_at, s.zone)
    found = _predicate_value(s, after)
    if found is None:
        # 「明日は歯医者の予定」: a noun and 予定
        span = noun_span_after(toks, after)
        if span is None or span[1] + 1 >= len(toks) or toks[span[1]].surface != "の" or toks[span[1] + 1].surface not in _PLAN_NOUNS:
            return []
        if mention.day is not None and mention.day < today:
            return []
        d = s.draft("plan", toks[span[0]:span[1]], "ja.plan", event_date=mention.day, when_text=mention.text)
        return [d] if d else []
    span, verb = found
    if toks[verb].dictionary in _NON_ACTIVITY or about(s, verb).subject != USER:
        return []
    if any(x.pos[0] == "助詞" and x.surface == "が" for x in toks[after:verb]):
        return []  # 雨が降る: the sentence is about something else
    mood = mood_after(toks, verb)
    if mood.unreal or mood.negated:
        return []
    if mood.progressive and not mood.past:
        return []  # 住んでる, 飲んでる: what is going on, not what is planned
    if mood.past:
        past = find_date(s.text, s.said_at, s.zone, future=False, english=False)
        day = past.day if past else None
        if day is not None and day > today:
            return []
        d = s.draft("event", span, "ja.event", event_date=day, when_text=mention.text)
        return [d] if d else []
    if mention.day is not None and mention.day < today:
        return []
    d = s.draft("plan", span, "ja.plan", event_date=mention.day, when_text=mention.text)
    return [d] if d else []


_GENERIC_VERBS = frozenset("飲む 食べる する やる 吸う 見る 聴く 聞く 読む 弾く".split())


def _habit_key(span: list[Morpheme]) -> str:
    """「コーヒーを飲む」 is keyed by コーヒー, so 「コーヒーやめた」 ends it."""
    if len(span) >= 3 and span[-1].dictionary in _GENERIC_VERBS and span[-2].surface in ("を", "は", "も"):
        noun = noun_span_before(tuple(span), len(span) - 2)
        if noun is not None:
            return key_of(span[noun[0]:noun[1]])
    return key_of(span)


def habits(s: JaSentence) -> list[Draft]:
    """「毎朝ジョギングしてる」「毎日コーヒーを飲む」「毎週末テニスしてる」."""
    toks = s.toks
    markers = s.params.habit_markers_ja
    for k, t in enumerate(toks):
        marker = t.surface
        end = k + 1
        if t.surface == "毎" and k + 1 < len(toks):  # 毎 + 週末
            marker, end = t.surface + toks[k + 1].surface, k + 2
        if marker not in markers:
            continue
        while end < len(toks) and toks[end].surface in ("は", "に", "、", "の"):
            end += 1
        found = _predicate_value(s, end)
        if found is None:
            return []
        span, verb = found
        if toks[verb].dictionary in _NON_ACTIVITY or about(s, verb).subject != USER:
            return []
        mood = mood_after(toks, verb)
        if mood.unreal or mood.negated or (mood.past and not mood.progressive) or mood.past:
            return []
        d = s.draft("habit", span, "ja.habit", detail=marker, category="", value_key=_habit_key(span))
        return [d] if d else []
    return []


RULES: tuple[Callable[[JaSentence], list[Draft]], ...] = (
    people_and_pets, names, likes, favourite, quits_and_switches, places, ages, possessions, plans, habits,
)


def extract_ja(text: str, params: KnowledgeParams, registry: Registry, said_at: float) -> list[Draft]:
    """Drafts from one Japanese sentence; a question or reported speech yields none."""
    toks = morphemes(text)
    if not toks or is_question(text, toks) or reports_speech(toks) or is_unreal(text, toks):
        return []
    s = JaSentence(text, toks, params, registry, said_at, params.zone())
    drafts: list[Draft] = []
    for rule in RULES:
        drafts.extend(rule(s))
    return drafts
