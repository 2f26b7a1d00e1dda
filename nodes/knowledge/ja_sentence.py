"""One Japanese sentence as the patterns read it: its morphemes, who it is about, the object of a predicate."""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo

from lumina_memory.nodes.text.tokenize import Morpheme

from .draft import Draft, Registry
from .ja_grammar import FIRST_PERSON, key_of, noun_span_before, strip_honorific, surface_of
from .models import USER
from .params import KnowledgeParams

NO_LONGER = frozenset(("もう", "もはや", "今", "今は"))
"""Words before a negated predicate that make it "no longer" (もう好きじゃない)."""


@dataclass
class JaSentence:
    text: str
    toks: tuple[Morpheme, ...]
    params: KnowledgeParams
    registry: Registry
    said_at: float
    zone: ZoneInfo
    asked: str = ""
    """The attribute of 「一番好きな食べ物？」 if the user asked it themself just before this sentence."""

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
        elif span[0] >= 2 and s.toks[span[0] - 1].surface == "の" and s.toks[span[0] - 2].surface in s.params.relations:
            subject = name  # 兄の誠が…: a named relation, whatever Sudachi calls the name
        elif t.surface == "が":
            subject = None  # someone or something else does it (友達が…, 同僚が…)
    return About(subject, context)


# --- objects -----------------------------------------------------------------------------------------------

def object_before(s: JaSentence, i: int, particles: frozenset[str]) -> tuple[int, list[Morpheme]] | None:
    """(start, morphemes) of the thing the predicate at ``i`` is about: 「コーヒーが」, 「猫」, 「走るのが」."""
    end = _skip_adverbs(s.toks, i)
    if end > 1 and s.toks[end - 1].surface in ("も", "は") and s.toks[end - 2].surface in particles - {"は", "も"}:
        end -= 1  # ボードゲームにもハマる
    if end > 2 and s.toks[end - 1].surface == "が" and s.toks[end - 2].surface in ("ほう", "方") and s.toks[end - 3].surface == "の":
        span = noun_span_before(s.toks, end - 3)  # 餃子のほうが好き
        return (span[0], list(s.toks[span[0]:span[1]])) if span else None
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


_ADVERB_PHRASES = ("世界で一番", "どうしても", "本当に", "ほんとに", "ほんと", "マジで", "めっちゃ", "一番", "いちばん", "結構", "けっこう",
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
