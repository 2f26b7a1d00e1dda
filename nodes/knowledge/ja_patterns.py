"""Japanese patterns over Sudachi's analysis: what chat users say about themselves and their life.

Each rule reads one sentence's morphemes and returns drafts (``ja_tastes``, ``ja_life``, ``ja_time``). Rules give
up rather than guess: a question, a wish, a condition, hearsay or an unknown subject (彼, あの人) yields nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from lumina_memory.nodes.text.tokenize import morphemes

from .draft import Draft, Registry
from .ja_grammar import is_question, is_unreal, reports_speech
from .ja_life import ages, names, people_and_pets, places, possessions
from .ja_sentence import JaSentence
from .ja_tastes import asks_own_favourite, favourite, likes, quits_and_switches, tastes_in_words
from .ja_time import habits, plans, taking_up, visited
from .params import KnowledgeParams

RULES: tuple[Callable[[JaSentence], list[Draft]], ...] = (
    people_and_pets, names, likes, favourite, tastes_in_words, quits_and_switches, places, ages, possessions,
    plans, habits, taking_up, visited,
)


def extract_ja(text: str, params: KnowledgeParams, registry: Registry, said_at: float) -> list[Draft]:
    """Drafts from one Japanese sentence; a question or reported speech yields none."""
    toks = morphemes(text)
    if not toks:
        return []
    s = JaSentence(text, toks, params, registry, said_at, params.zone(), asked=registry.asked)
    registry.asked = ""
    for t in toks:
        if t.surface in registry.names:
            registry.recent = t.surface  # 「今日はソラの誕生日！」 then 「6歳になりました」
    if is_question(text, toks):
        registry.asked = asks_own_favourite(s)
        return []
    if reports_speech(toks) or is_unreal(text, toks):
        return []
    drafts: list[Draft] = []
    for rule in RULES:
        drafts.extend(rule(s))
    return drafts

