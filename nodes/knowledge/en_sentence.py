"""One English sentence as the patterns read it, and the regular-expression pieces the patterns share
(a subject, adverbs, an object cut at the first clause word)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ..text.calendar.names import EN_MONTHS, EN_WEEKDAYS
from ..text.noun_lemma import noun_lemma
from .draft import Draft, Registry
from .models import USER
from .params import KnowledgeParams

ADV = r"(?:(?:really|absolutely|totally|just|also|still|truly|honestly|actually|kinda|so|do|definitely|seriously|genuinely|simply|now|recently|finally|pretty much|basically|mostly|usually|only|officially|happily|currently)\s+)*"
GAP = r"(?:\s+|(?='))"
ANYMORE = r"\s+(?i:anymore|any more|these days|nowadays)\b"
OBJ = r"(?P<obj>[^.,!?;:()\"]+)"
SUBJ = (
    r"(?P<subj>\bI\b|\b(?i:we)\b|\b(?i:my|our)\s+(?P<rel>[a-z]+)(?:,?\s+(?P<relname>[A-Z][a-z]+)(?![a-z]))?"
    r"|\b(?P<name>[A-Z][a-z]+)\b)"
)
CUT = re.compile(
    r"\s+(?:and then|but|because|cause|so|since|when|whenever|while|although|though|if|as|now|anymore|any more|"
    r"these days|nowadays|lately|recently|too|again|as well|a lot|so much|very much|more than|at the moment|right now|instead|"
    r"lol|haha|though|ever since|for (?:years|months|ages|a while|now)|which|who|that|last \w+|"
    r"this (?:week|month|year|morning|evening)|a day|a week|per day|yesterday|today|tonight|every \w+)\b.*$",
    re.I,
)
PLACE_CUT = re.compile(
    r"\s+(?:last|next|this|a few|in \d{4}|for|with|ago|since|because|but|and|now|anymore|any more|years?|months?|weeks?|"
    r"is|was|are|were|has|had)\b.*$",
    re.I,
)
DETERMINERS = re.compile(r"^(?:the|a|an|some|my|our|lots of|a lot of|all|any|many|much|two|three|\d+)\s+", re.I)
PRONOUNS = frozenset("lol haha lmao omg it that this them you him her those these one everything something nothing anything "
                      "myself yourself us me what how when where why who which the way there here".split())
_OTHERS = re.compile(r"^(?:your|his|her|their|its|our)\b", re.I)
_THINKING = frozenset("think say know believe guess suppose mean see hear talk chat".split())
WEEK_MONTH = frozenset(name.capitalize() for name in (*EN_WEEKDAYS, *EN_MONTHS)) | {"Today", "Tomorrow", "Yesterday"}
PAST_IRREGULAR = frozenset("went ran ate had was were did saw met got took made flew bought drove swam wrote read sang "
                            "gave found left came became began drank slept spent told thought felt kept".split())
NOT_EVENTS = frozenset("wanted needed loved liked hated used tried thought was were felt guess wish hoped "
                        "forgot remembered said told asked".split())


def en_key(value: str) -> str:
    """Lower-cased lemmas: "Cats" and "cat" are one value."""
    return " ".join(noun_lemma(w) for w in re.findall(r"[\w'&+-]+", DETERMINERS.sub("", value)))


@dataclass
class EnSentence:
    text: str
    params: KnowledgeParams
    registry: Registry
    said_at: float
    zone: ZoneInfo
    asked: str = ""
    """An attribute the previous sentence of the turn announced (Favourite movie ever?)."""

    def draft(self, attribute: str, value: str, pattern: str, **kw) -> Draft | None:
        value = DETERMINERS.sub("", value.strip(" '\"-"))
        if not value or len(value) > self.params.max_value_chars:
            return None
        key = kw.pop("value_key", None) or en_key(value)
        category = kw.pop("category", None)
        if category is None:
            category = self.params.categories.get(key) or self.params.categories.get(key.split()[-1] if key else "", "")
        return Draft(attribute=attribute, value=value, value_key=key, pattern=pattern, category=category, **kw)

    def subject(self, m: re.Match[str], we: bool = False) -> str | None:
        """USER, a name or a relation noun; None when the subject is no one we can name. ``we``: "we" is the
        user's household (where the user lives), not a taste of the user's."""
        if m.group("subj") == "I":
            return USER
        if m.group("subj").lower() == "we":  # the user's household: "we moved to …", "we live in …"
            return USER if we else None
        rel, relname, name = m.group("rel"), m.group("relname"), m.group("name")
        if rel is not None:
            attribute = self.params.relations.get(rel.lower())
            if attribute is None:
                return None
            if relname and relname not in self.params.not_names and relname not in WEEK_MONTH:
                self.registry.add(relname, attribute, rel.lower())
                return relname
            return rel.lower()  # "my sister loves …": the relation as said, grounded in the sentence
        return name if name in self.registry.names else None


def noun_phrases(raw: str, cut: re.Pattern[str] = CUT, split: bool = True, max_words: int = 5) -> list[str]:
    """The noun phrases of a captured object: cut at clause words, determiners dropped, 'A and B' split."""
    raw = cut.sub("", raw.strip())
    parts = re.split(r"\s+(?:and|&)\s+|,\s*", raw) if split else [raw]
    out = []
    for part in parts:
        part = part.strip()
        if not part or _OTHERS.match(part):
            continue
        part = re.sub(r"^(?:honestly|really|still|just|probably|definitely|totally|basically)\s+", "", part, flags=re.I)
        part = DETERMINERS.sub("", part)
        part = re.sub(r"^to\s+", "", part)
        part = re.sub(r"[^\w'&+\- ]+.*$", "", part).strip()  # an emoji or symbol ends the phrase
        words = part.split()
        if not words or len(words) > max_words or words[0].lower() in PRONOUNS or words[0].lower() in _THINKING:
            continue
        out.append(part)
    return out


def rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
