"""English patterns: what chat users say about themselves and their life, read with regular expressions.

Each rule (``en_tastes``, ``en_life``, ``en_time``) anchors on a subject (I, my sister, our dog Rex, a name already
met) and a verb; the object is cut at the first clause word (but, because, now, anymore …). Questions, wishes
(I'd like), conditions (if I …) and pronoun objects (I love it) yield nothing: a missed fact costs less than an
invented one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .draft import Draft, Registry
from .en_life import ages, identity_and_places, life_in_words, people_and_pets, possessions
from .en_sentence import EnSentence
from .en_tastes import favourite, likes, quits_and_switches, tastes_in_words
from .en_time import habits, plans, taking_up, visited
from .params import KnowledgeParams


RULES: tuple[Callable[[EnSentence], list[Draft]], ...] = (
    people_and_pets, identity_and_places, life_in_words, likes, favourite, tastes_in_words, quits_and_switches,
    ages, possessions, plans, habits, taking_up, visited,
)

# A chat line often drops its "I": "Switched from coffee to tea", "Spent a few days in Lisbon".
_IMPLICIT_I = re.compile(
    r"^(?:Switched|Swapped|Moved|Quit|Started|Spent|Went|Got|Bought|Visited|Made it|Also made it|Just got back|"
    r"Pretty much live|Love|Loving|Hate|Can't stand|Still living|Finally done moving)\b"
)


def _self_asked(text: str, params: KnowledgeParams) -> str:
    """The attribute the user asks themself before answering it: "My favourite food?", "…my name, did I?"."""
    m = re.match(r"^\s*(?:my\s+)?favou?rite\s+([a-z]+)(?:\s+ever)?\s*\?\s*$", text, re.I)
    if m:
        return params.favourite_nouns.get(m.group(1).lower(), "")
    return "name" if re.search(r"\btold you my name\b", text, re.I) else ""


def extract_en(text: str, params: KnowledgeParams, registry: Registry, said_at: float) -> list[Draft]:
    """Drafts from one English sentence; a question or a reported statement yields none."""
    text = re.sub(r"[’‘]", "'", text)
    text = re.sub(r"\bi(?=(?:'m|'ve|'ll|'d|\s))", "I", text)
    text = _IMPLICIT_I.sub(lambda m: "I " + m.group(0)[0].lower() + m.group(0)[1:], text)
    asked, registry.asked = registry.asked, ""
    if "?" in text or re.match(r"\s*(?:do|does|did|are|is|can|could|would|will|what|who|where|when|why|how)\b", text, re.I):
        registry.asked = _self_asked(text, params)
        return []
    if re.search(r"\b(?:said|says|told me|thinks|heard)\b", text, re.I):
        return []
    s = EnSentence(text, params, registry, said_at, params.zone(), asked=asked)
    drafts: list[Draft] = []
    for rule in RULES:
        drafts.extend(rule(s))
    return drafts
