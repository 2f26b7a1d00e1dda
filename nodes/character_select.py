"""Who answers: the character the user names, else the one who has spoken least in this segment."""

from __future__ import annotations

import unicodedata
from typing import Mapping

from lumina_memory.nodes.characters import CAST, CHARACTERS

NAMES: dict[str, tuple[str, ...]] = {c.id: c.spellings for c in CAST}


def named_characters(text: str) -> list[str]:
    """Characters addressed in the text, in order of first mention."""
    norm = unicodedata.normalize("NFKC", text).lower()
    found = [(norm.find(alias), char) for char, aliases in NAMES.items() for alias in aliases if alias in norm]
    ordered: list[str] = []
    for _, char in sorted(found):
        if char not in ordered:
            ordered.append(char)
    return ordered


def choose_character(text: str, character_turns: Mapping[str, int], requested: str | None = None) -> str:
    if requested in CHARACTERS:
        return requested  # type: ignore[return-value]
    named = named_characters(text)
    if named:
        return named[0]
    return min(CHARACTERS, key=lambda c: (character_turns.get(c, 0), CHARACTERS.index(c)))
