"""English patterns: what chat users say about themselves and their life, read with regular expressions.

Each rule (``en_tastes``, ``en_life``, ``en_time``) anchors on a subject (I, my sister, our dog Rex, a name already
met; "we" where the user lives) and a class of verbs in any tense (live/based/settled, moved/relocated, work,
drink …), not on the wording of one sentence; the object is cut at the first clause word (but, because, now,
anymore …) or, for a place, to its capitalised name. Questions, wishes
(I'd like), conditions (if I …) and pronoun objects (I love it) yield nothing: a missed fact costs less than an
invented one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lumina_memory.nodes.text.tokenize import stem

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

# A chat line often drops its "I": "Switched from coffee to tea", "Spent a few days in Lisbon", "Still living in
# Leeds". A sentence that opens (after a few adverbs) on a verb of the kinds the rules read gets its "I" back:
# the verb is recognised by its Snowball stem, whatever its tense.
_OPENING_ADVERBS = re.compile(r"^((?:(?:also|just|still|finally|recently|lately|pretty much|basically|only|mostly|now|"
                              r"and|oh|so|okay|ok|well|anyway),?\s+)*)([A-Za-z]+)\b", re.I)
_IMPLICIT_VERBS = frozenset(stem(v) for v in (
    "live love like hate enjoy adore work drink quit switch swap move relocate start spend go get buy visit adopt "
    "stop give change finish leave join land take settle rescue fly travel book").split())
_IRREGULAR = {"went": "go", "got": "get", "spent": "spend", "bought": "buy", "gave": "give", "left": "leave",
              "took": "take", "flew": "fly", "began": "begin", "done": "finish"}


def _implicit_i(text: str) -> str:
    m = _OPENING_ADVERBS.match(text)
    if m is None or not text[:1].isupper() or re.match(r"^(?:I|We|My|Our)\b", text):
        return text
    word = m.group(2).lower()
    lemma = _IRREGULAR.get(word, word)
    if stem(lemma) not in _IMPLICIT_VERBS or not (m.group(1) or word.endswith(("ed", "ing")) or word in _IRREGULAR
                                                 or word in ("love", "hate", "quit")):
        return text
    return "I " + text[0].lower() + text[1:]


def _self_asked(text: str, params: KnowledgeParams) -> str:
    """The attribute the user asks themself before answering it: "My favourite food?"."""
    m = re.match(r"^\s*(?:my\s+)?favou?rite\s+([a-z]+)(?:\s+ever)?\s*\?\s*$", text, re.I)
    return params.favourite_nouns.get(m.group(1).lower(), "") if m else ""


def extract_en(text: str, params: KnowledgeParams, registry: Registry, said_at: float) -> list[Draft]:
    """Drafts from one English sentence; a question or a reported statement yields none."""
    text = re.sub(r"[’‘]", "'", text)
    text = re.sub(r"\bi(?=(?:'m|'ve|'ll|'d|\s))", "I", text)
    text = _implicit_i(text)
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
