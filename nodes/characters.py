"""Look-ups over the cast (``lumina_memory.stores.settings_characters`` defines it): a character by id, display
names, the names as a phrase, and the ids as a Literal for the run context and Studio's form.
"""

from __future__ import annotations

from typing import Literal

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_characters import CAST, CHARACTERS, Character

__all__ = ["CAST", "CHARACTERS", "Character", "CharacterId", "display_name", "get", "names_phrase"]

CharacterId = Literal[CHARACTERS]  # type: ignore[valid-type]  # the ids as a Literal (run context, Studio's form)
_BY_ID = {c.id: c for c in CAST}
_LANGUAGES = ("en", "ja")


def get(character_id: str) -> Character:
    """The character with this id; InvalidInput naming the ids otherwise."""
    try:
        return _BY_ID[character_id]
    except (KeyError, TypeError):
        raise InvalidInput("character", f"{character_id!r} is not one of {', '.join(CHARACTERS)}") from None


def display_name(character_id: str, language: str = "en") -> str:
    """The name shown to people: English (``en``) or Japanese (``ja``)."""
    char = get(character_id)
    if language not in _LANGUAGES:
        raise InvalidInput("language", f"{language!r} is not one of {', '.join(_LANGUAGES)}")
    return char.name if language == "en" else char.name_ja


def names_phrase(language: str = "en") -> str:
    """All three names as a phrase: "Lumina, Clarisse and Nox" / "ルミナ、クラリス、ノクス"."""
    names = [display_name(c.id, language) for c in CAST]
    return "、".join(names) if language == "ja" else f"{', '.join(names[:-1])} and {names[-1]}"
