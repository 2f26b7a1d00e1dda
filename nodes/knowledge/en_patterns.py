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
from .en_life import ages, identity_and_places, people_and_pets, possessions
from .en_sentence import EnSentence
from .en_tastes import favourite, likes, quits_and_switches
from .en_time import habits, plans
from .params import KnowledgeParams


RULES: tuple[Callable[[EnSentence], list[Draft]], ...] = (
    people_and_pets, identity_and_places, likes, favourite, quits_and_switches, ages, possessions, plans, habits,
)


def extract_en(text: str, params: KnowledgeParams, registry: Registry, said_at: float) -> list[Draft]:
    """Drafts from one English sentence; a question or a reported statement yields none."""
    text = re.sub(r"[’‘]", "'", text)
    text = re.sub(r"\bi(?=(?:'m|'ve|'ll|'d|\s))", "I", text)
    if "?" in text or re.match(r"\s*(?:do|does|did|are|is|can|could|would|will|what|who|where|when|why|how)\b", text, re.I):
        return []
    if re.search(r"\b(?:said|says|told me|thinks|heard)\b", text, re.I):
        return []
    s = EnSentence(text, params, registry, said_at, params.zone())
    drafts: list[Draft] = []
    for rule in RULES:
        drafts.extend(rule(s))
    return drafts
