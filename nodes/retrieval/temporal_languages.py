"""Time words of other languages, rewritten into the English or Japanese the cue finders read, so each cue is
written once (``temporal_dates`` / ``temporal_periods`` / ``temporal_relative``) and every language gets its
windows: Spanish, French, German, Italian, Portuguese and Dutch into English (``temporal_latin``: "el 8 de mayo de
2023" → "8 may 2023"), Arabic, Hindi, Thai and Russian into English (``temporal_scripts``: "в прошлом году" → "last
year"), Korean and Chinese into Japanese (``temporal_cjk``: "지난주" → 「先週」). The month and weekday names they
read are those of ``nodes/text/calendar/names``.

No language detection: a question's language cannot be told reliably from eight words, and a date written in
one language inside a question in another ("what did I say on 8. Mai 2023?") is still a date. So each module
reads only what cannot be an English or Japanese word."""

from __future__ import annotations

from . import temporal_cjk, temporal_latin, temporal_scripts

__all__ = ["to_cue_language"]


def to_cue_language(text: str) -> str:
    """``text`` (NFKC, lower case) with the time words of the languages above in English or Japanese."""
    text = temporal_latin.to_english(text)
    if text.isascii():
        return text
    return temporal_cjk.to_japanese(temporal_scripts.to_english(text))
