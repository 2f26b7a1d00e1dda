"""The three characters, defined once: id, display names in English and Japanese, the other spellings users
write, the persona a chat model plays and the offline reply's voice.

The cast is configuration: speakers, the CLI's --character, the run context, who answers, greeting filler and stop
words all read this tuple (through ``lumina_memory.nodes.characters``, which adds the look-ups).
"""

from __future__ import annotations

from dataclasses import dataclass


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
SPEAKERS: tuple[str, ...] = ("user", *CHARACTERS)
"""Who may say a turn: the user and the cast."""
