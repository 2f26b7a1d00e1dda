"""F2 emotion reading of one turn, offline: intensity, valence, arousal, tags and category.

The scales are the design notes' (seeds/forgetting-memory-design.ja.md, 感情分類システム):
intensity 0–100 (0–20 indifferent/administrative … 81–100 intense), valence positive/negative/
neutral, arousal 0–100 (calm: long sentences, 「……」; excited: short sentences, 「！」, strong words,
repetition), tags from the notes' list only, and the F1 decay family casual/work/decision/emotional.
The lexicon lives in ``emotion_lexicon``; every pattern is compiled once here, at import, because
this runs for every turn at ingest. ``emotion_model`` reads the same fields with a chat model.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, Sequence, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from . import emotion_lexicon as lex
from .protect import protect_request

__all__ = ["EMOTION_TAGS", "CATEGORIES", "EmotionReading", "read_emotion", "memory_emotion", "protect_request",
           "valence_label"]

Valence = Literal["positive", "negative", "neutral"]
Category = Literal["casual", "work", "decision", "emotional"]
EmotionTag = Literal[
    "joy", "satisfaction", "relief", "excitement", "gratitude", "pride", "hope", "love", "curiosity",
    "sadness", "anger", "frustration", "anxiety", "fear", "disgust", "regret", "loneliness", "guilt", "resignation",
    "nostalgia", "surprise", "confusion", "determination",
]
EMOTION_TAGS: tuple[str, ...] = get_args(EmotionTag)
# Ordered by how long F1 keeps a memory of that family (casual decays fastest).
CATEGORIES: tuple[str, ...] = get_args(Category)

VALENCE_THRESHOLD = 0.12  # |score| below this reads as neutral
NEUTRAL_AROUSAL = 0.30  # the notes' 「了解、やっておく」: plain talk, no emotional words
MAX_TAGS = 5


class EmotionReading(BaseModel):
    """How one turn (or, aggregated, one memory) feels, on the design notes' scales."""

    model_config = ConfigDict(frozen=True)

    intensity: int = Field(ge=0, le=100, description="Emotional intensity 0–100; F1's starting retention.")
    valence: Valence = Field(description="positive / negative / neutral.")
    valence_score: float = Field(ge=-1.0, le=1.0, description="Signed valence −1..1; its sign agrees with `valence`.")
    arousal: int = Field(ge=0, le=100, description="0 calm … 100 excited or tense.")
    tags: tuple[EmotionTag, ...] = Field(default=(), description="Detailed emotions, strongest first.")
    category: Category = Field(default="casual", description="F1 decay family.")
    path: Literal["lexicon", "model"] = Field(default="lexicon", description="Which reader produced this.")
    fallback: str | None = Field(
        default=None, description="Why a requested model reading was replaced by the lexicon one (None otherwise)."
    )

    @model_validator(mode="after")
    def _label_agrees_with_score(self) -> "EmotionReading":
        if (self.valence == "positive" and self.valence_score <= 0) or (
            self.valence == "negative" and self.valence_score >= 0
        ):
            raise ValueError(f"valence {self.valence!r} disagrees with valence_score {self.valence_score}")
        return self


def valence_label(score: float) -> Valence:
    if score >= VALENCE_THRESHOLD:
        return "positive"
    if score <= -VALENCE_THRESHOLD:
        return "negative"
    return "neutral"


# --- compiled once ----------------------------------------------------------------------------------
_JA_WORD = "ぁ-ゖァ-ヶー一-龥々"
_JA_ENDINGS = "ねよぁーっんわぞ"  # particles that may follow a clause-final term (できたね, やったー)
# English words end at a non-letter; an apostrophe ends one only before a possessive 's
# (so "won" is not found in "won't", but "mom" is in "mom's").
_EN_EDGE_BEFORE, _EN_EDGE_AFTER = r"(?<![a-z0-9'])", r"(?![a-z0-9])(?!'(?!s\b))"

Entry = tuple[float, float, tuple[str, ...]]


def _ja_alternative(term: str) -> tuple[str, str]:
    core = term.strip("^$")
    pattern = re.escape(core)
    if term.startswith("^"):
        pattern = rf"(?<![{_JA_WORD}]){pattern}"
    if term.endswith("$"):
        pattern = rf"{pattern}(?!(?![{_JA_ENDINGS}])[{_JA_WORD}])"
    return core, pattern


def _en_alternative(term: str) -> tuple[str, str]:
    core = term.rstrip("*")
    return core, re.escape(core) + (r"[a-z']*" if term.endswith("*") else "")


def _compile_rows(
    rows: Sequence[lex.Row], english: bool
) -> tuple[re.Pattern[str], dict[str, Entry], tuple[str, ...]]:
    entries: dict[str, Entry] = {}
    stems: list[str] = []
    alternatives: list[tuple[str, str]] = []
    for terms, valence, arousal, tags in rows:
        for term in terms.split("|"):
            core, pattern = (_en_alternative if english else _ja_alternative)(term)
            entries[core] = (valence, arousal, tuple(tags.split()))
            if english and term.endswith("*"):
                stems.append(core)
            alternatives.append((core, pattern))
    # Longest first: at one position the regex takes the first alternative that matches.
    alternatives.sort(key=lambda item: len(item[0]), reverse=True)
    body = "|".join(p for _, p in alternatives)
    pattern = rf"{_EN_EDGE_BEFORE}(?:{body}){_EN_EDGE_AFTER}" if english else f"(?:{body})"
    return re.compile(pattern), entries, tuple(sorted(stems, key=len, reverse=True))


def _words(ja: Sequence[str], en: Sequence[str]) -> re.Pattern[str]:
    """One pattern from Japanese (substring) and English (whole-word) regex fragments."""
    ja_part = "|".join(sorted(ja, key=len, reverse=True))
    en_part = "|".join(sorted(en, key=len, reverse=True))
    return re.compile(rf"{ja_part}|{_EN_EDGE_BEFORE}(?:{en_part}){_EN_EDGE_AFTER}")


def _plain(ja: Sequence[str], en: Sequence[str]) -> re.Pattern[str]:
    """``_words`` for plain word lists (English ``*`` = any ending)."""
    return _words([re.escape(w) for w in ja], [_en_alternative(w)[1] for w in en])


_JA_LEXICON, _JA_ENTRIES, _ = _compile_rows(lex.JA_ROWS, english=False)
_EN_LEXICON, _EN_ENTRIES, _EN_STEMS = _compile_rows(lex.EN_ROWS, english=True)
_INTENSIFIER = _plain(lex.JA_INTENSIFIERS, lex.EN_INTENSIFIERS)
_HEDGE = _plain(lex.JA_HEDGES, lex.EN_HEDGES)
_CONTRAST = _words(["けど", "けれど", "しかし", rf"(?<![{_JA_WORD}])でも"], lex.EN_CONTRAST)
_DECISION = _words(lex.JA_DECISION, lex.EN_DECISION)
_WORK = _plain(lex.JA_WORK, lex.EN_WORK)
_PERSONAL = _plain(lex.JA_PERSONAL, lex.EN_PERSONAL)

# 嬉しくない, 不安じゃない, 心配しないで: a negation right after a Japanese term.
_JA_NEGATION_AFTER = re.compile(r"[ぁ-ゖ]{0,2}?(?:ない|なかった|なく|ません|ねえ|ねぇ)")
# "not happy", "don't really like", "no fun": a negator up to two words before an English term
# ("can't stop crying", "couldn't help laughing" reinforce rather than negate).
_EN_NEGATION_BEFORE = re.compile(
    r"(?:\b(?:not|never|no|hardly|barely|without|nothing|dont|cant|wont|isnt|wasnt|didnt|doesnt|arent)\b|n't)"
    r"(?!\s+(?:stop|help)\b)\s+(?:[a-z']+\s+){0,2}$"
)
_ELLIPSIS = re.compile(r"\.{2,}|・{2,}")
_CHAR_RUN = re.compile(r"([^\s\d.・\-=_*/#~〜])\1{2,}")  # すごーーい, !!!, noooo
_WORD_RUN = re.compile(r"\b([a-z]{2,})(?:\s+\1\b)+")  # no no no, very very
_CAPS_WORD = re.compile(r"\b[A-Z]{2,}\b")
_SURPRISE_PUNCT = re.compile(r"!\?|\?!")
_JA_CHAR = re.compile(rf"[{_JA_WORD}]")
_EN_WORD = re.compile(r"[a-z]+")
_SHORT_UNITS, _LONG_UNITS = 14, 90  # Japanese characters; an English word counts as two


@dataclass(frozen=True, slots=True)
class _Hit:
    term: str
    valence: float
    arousal: float
    tags: tuple[str, ...]
    weight: float


@dataclass(frozen=True, slots=True)
class _Cues:
    exclamations: int
    ellipsis: bool
    repetition: bool
    shouting: bool
    surprise: bool
    intensified: bool
    hedged: bool
    short: bool
    long: bool


def _normalise(text: str) -> tuple[str, str]:
    """(NFKC text, its lower-cased form with typographic apostrophes made plain)."""
    nfkc = unicodedata.normalize("NFKC", text)
    return nfkc, nfkc.lower().replace("’", "'").replace("‘", "'")


def _entry(term: str, english: bool) -> Entry:
    if not english:
        return _JA_ENTRIES[term]
    found = _EN_ENTRIES.get(term)
    if found is None:
        found = _EN_ENTRIES[next(s for s in _EN_STEMS if term.startswith(s))]
    return found


def _is_negated(norm: str, start: int, end: int, english: bool) -> bool:
    if english:
        return _EN_NEGATION_BEFORE.search(norm, max(0, start - 40), start) is not None
    tail = _JA_NEGATION_AFTER.match(norm, end)
    if tail is None:
        return False
    # 最高じゃない！/ 最高じゃないか means "it's great", not "it isn't".
    return not (tail.group().endswith("じゃない") and norm[tail.end() : tail.end() + 1] in ("?", "!", "か"))


def _hits(norm: str) -> list[_Hit]:
    contrast_at = max((m.end() for m in _CONTRAST.finditer(norm)), default=-1)
    hits: list[_Hit] = []
    for pattern, english in ((_JA_LEXICON, False), (_EN_LEXICON, True)):
        for match in pattern.finditer(norm):
            term = match.group()
            valence, arousal, tags = _entry(term, english)
            if _is_negated(norm, match.start(), match.end(), english):
                valence, arousal, tags = -0.5 * valence, 0.7 * arousal, ()
            # What follows "but"/「けど」 is what the speaker means (VADER's rule: 0.5 before, 1.5 after).
            weight = 1.0 if contrast_at < 0 else (1.5 if match.start() >= contrast_at else 0.5)
            hits.append(_Hit(term, valence, arousal, tags, weight))
    return hits


def _cues(nfkc: str, norm: str, hits: Sequence[_Hit]) -> _Cues:
    terms = [h.term for h in hits]
    units = len(_JA_CHAR.findall(norm)) + 2 * len(_EN_WORD.findall(norm))
    return _Cues(
        exclamations=norm.count("!"),
        ellipsis=_ELLIPSIS.search(norm) is not None,
        repetition=bool(_CHAR_RUN.search(norm) or _WORD_RUN.search(norm)) or len(terms) > len(set(terms)),
        shouting=any(w.lower() in terms for w in _CAPS_WORD.findall(nfkc)),
        surprise=_SURPRISE_PUNCT.search(norm) is not None,
        intensified=_INTENSIFIER.search(norm) is not None,
        hedged=_HEDGE.search(norm) is not None,
        short=units <= _SHORT_UNITS,
        long=units >= _LONG_UNITS,
    )


def _valence_score(hits: Sequence[_Hit], cues: _Cues) -> float:
    if not hits:
        return 0.0
    score = sum(h.valence * h.weight for h in hits) / sum(h.weight for h in hits)
    score *= (1.2 if cues.intensified else 1.0) * (0.85 if cues.hedged else 1.0)
    score *= 1.0 + 0.05 * min(cues.exclamations, 3) + (0.1 if cues.repetition else 0.0)
    return max(-1.0, min(1.0, score))


def _arousal(hits: Sequence[_Hit], cues: _Cues) -> float:
    if hits:
        peak = max(h.arousal for h in hits)
        mean = sum(h.arousal * h.weight for h in hits) / sum(h.weight for h in hits)
        base = 0.6 * peak + 0.4 * mean
    else:
        base = NEUTRAL_AROUSAL
    # The notes' cues: 「！」, repetition, strong words raise it; 「……」 and long sentences lower it.
    base += 0.08 * min(cues.exclamations, 3) + 0.1 * cues.repetition + 0.1 * cues.shouting + 0.05 * cues.surprise
    base += 0.08 * cues.intensified - 0.08 * cues.hedged - 0.12 * cues.ellipsis - 0.08 * cues.long
    base += 0.05 * (cues.short and bool(hits))
    return max(0.0, min(1.0, base))


def _tags(hits: Sequence[_Hit], cues: _Cues) -> tuple[str, ...]:
    strength: dict[str, float] = {}
    for hit in hits:
        for tag in hit.tags:
            strength[tag] = strength.get(tag, 0.0) + hit.weight * (abs(hit.valence) + hit.arousal)
    if cues.surprise:
        strength.setdefault("surprise", 0.0)
    return tuple(sorted(strength, key=lambda t: -strength[t])[:MAX_TAGS])


def _decided(norm: str) -> bool:
    for match in _DECISION.finditer(norm):
        if not _EN_NEGATION_BEFORE.search(norm, max(0, match.start() - 40), match.start()):
            return True
    return False


def _intensity(hits: Sequence[_Hit], cues: _Cues, score: float, arousal: float, decided: bool, work: bool,
               personal: bool) -> int:
    if hits:
        strength = 0.55 * abs(score) + 0.45 * arousal
        value = 10 + 75 * strength + 4 * (min(len({h.term for h in hits}), 3) - 1)
        value += 5 * cues.intensified + 5 * cues.repetition
    else:
        value = 12 + 3 * min(cues.exclamations, 1)  # 0–20: indifferent, administrative
    if work:
        value = max(value, 25)  # 21–40: ordinary work
    if decided:
        value = max(value, 50)  # a decision was made: clear involvement, more if it is emotional
    if personal and hits:
        value += 8
    return int(round(max(0.0, min(100.0, value))))


def _category(intensity: int, score: float, decided: bool, work: bool, personal: bool, charged: bool) -> Category:
    if (intensity >= 70 and abs(score) >= 0.4) or (personal and charged and intensity >= 45):
        return "emotional"
    if decided:
        return "decision"
    return "work" if work else "casual"


def read_emotion(text: str) -> EmotionReading:
    """Offline F2 reading of one turn (Japanese, English or both)."""
    nfkc, norm = _normalise(text)
    hits = _hits(norm)
    cues = _cues(nfkc, norm, hits)
    score = _valence_score(hits, cues)
    arousal = _arousal(hits, cues) if norm.strip() else 0.0
    decided, work, personal = _decided(norm), _WORK.search(norm) is not None, _PERSONAL.search(norm) is not None
    intensity = _intensity(hits, cues, score, arousal, decided, work, personal) if norm.strip() else 0
    label = valence_label(score)
    return EmotionReading(
        intensity=intensity,
        valence=label,
        valence_score=round(score, 4),
        arousal=int(round(arousal * 100)),
        tags=_tags(hits, cues),
        category=_category(intensity, score, decided, work, personal, bool(hits)),
        path="lexicon",
    )


def memory_emotion(readings: Sequence[EmotionReading]) -> EmotionReading:
    """One memory's emotion from its turns' readings (peak-weighted).

    - valence_score and arousal: mean weighted by (1 + intensity)², so the strongest turns speak
      for the memory and small talk around them barely moves it;
    - intensity: the peak turn's (people remember an episode by its peak), plus 3 per further turn
      at 60 or more, up to +10 (a sustained emotion outlasts a single spike);
    - tags: every turn's, ranked by the summed weight of the turns carrying them;
    - category: the longest-kept family (casual < work < decision < emotional) among turns at
      least half as intense as the peak, so a weak aside cannot promote the memory;
    - path: "model" only when every turn was read by the model; fallback: the first turn's reason.
    """
    if not readings:
        raise ValueError("memory_emotion needs at least one turn's reading")
    weights = [(1 + r.intensity) ** 2 for r in readings]
    total = sum(weights)
    score = sum(w * r.valence_score for w, r in zip(weights, readings)) / total
    arousal = sum(w * r.arousal for w, r in zip(weights, readings)) / total
    peak = max(r.intensity for r in readings)
    sustained = sum(1 for r in readings if r.intensity >= 60) - (1 if peak >= 60 else 0)
    tag_weight: dict[str, float] = {}
    for w, r in zip(weights, readings):
        for tag in r.tags:
            tag_weight[tag] = tag_weight.get(tag, 0.0) + w
    significant = [r.category for r in readings if r.intensity * 2 >= peak]
    return EmotionReading(
        intensity=min(100, peak + min(10, 3 * sustained)),
        valence=valence_label(score),
        valence_score=round(max(-1.0, min(1.0, score)), 4),
        arousal=int(round(arousal)),
        tags=tuple(sorted(tag_weight, key=lambda t: -tag_weight[t])[:MAX_TAGS]),
        category=max(significant, key=CATEGORIES.index),
        path="model" if all(r.path == "model" for r in readings) else "lexicon",
        fallback=next((r.fallback for r in readings if r.fallback), None),
    )
