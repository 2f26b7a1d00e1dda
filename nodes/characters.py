"""The three characters, defined once: id, display names in English and Japanese, the other spellings users
write, the persona a chat model plays and the offline reply's voice. Speakers, the CLI's --character, the run context, who answers,
greeting filler and stop words all read this tuple.

Imports only the package's errors, so settings and stores can read it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lumina_memory.stores.errors import InvalidInput


@dataclass(frozen=True)
class Character:
    id: str
    """Lower-case ASCII: the speaker value of a turn and the key of per-character counts."""
    name: str
    """English display name."""
    name_ja: str
    """Japanese display name (katakana)."""
    aliases: tuple[str, ...]
    """Other spellings users write (hiragana, variants), lower case."""
    persona: str
    """Who the character is, for the chat model's system prompt."""
    offline_openers: tuple[str, str]
    """The offline reply's first words in the character's voice: (a memory came back, nothing came back)."""

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every way a message may name the character, lower case (compare with NFKC-folded, lower-cased text)."""
        return (self.name_ja, self.id, *self.aliases)


CAST: tuple[Character, ...] = (
    Character("lumina", "Lumina", "ルミナ", ("るみな",),
              "warm, curious, loves stars, science and books. Speaks softly in Japanese.",
              ("ねえ、覚えてるよ。", "それならね、")),
    Character("clarisse", "Clarisse", "クラリス", ("くらりす", "clarice"),
              "elegant and practical, loves cooking, tea and planning. Polite Japanese (です/ます).",
              ("覚えておりますよ。", "そうですね、")),
    Character("nox", "Nox", "ノクス", ("のくす",),
              "cool, witty night owl who loves games, music and movies. Casual Japanese (オレ).",
              ("ああ、覚えてるぜ。", "そうだな、")),
)
CHARACTERS: tuple[str, ...] = tuple(c.id for c in CAST)
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
