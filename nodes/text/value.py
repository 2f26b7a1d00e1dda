"""S3: content not worth a long-term memory — too short, an error dump, or only small talk."""

from __future__ import annotations

import re
import unicodedata
from typing import Sequence

from .tokenize import terms

SMALL_TALK = frozenset(
    "うん はい ええ そう そうだね そっか なるほど おはよう こんにちは こんばんは おやすみ ありがとう どうも "
    "了解 りょうかい おけ おっけー よろしく じゃあね またね バイバイ 笑 w www ok okay yes yeah yep no nope "
    "hi hello hey thanks thank you bye lol haha hmm sure cool nice".split()
)
_ERROR = re.compile(r"Traceback \(most recent call last\)|\b\w+(Error|Exception):|^\s*at \S+\(.*:\d+\)", re.M)
_PUNCT = re.compile(r"[\s\W_]+", re.U)


def is_small_talk(text: str) -> bool:
    words = [w for w in _PUNCT.split(unicodedata.normalize("NFKC", text).lower()) if w]
    return bool(words) and all(w in SMALL_TALK for w in words)


def low_value_reason(texts: Sequence[str], min_terms: int = 3) -> str | None:
    """Why these turns should not become a long-term memory, or None when they should."""
    substantive = [t for t in texts if not is_small_talk(t)]
    if not substantive:
        return "small talk"
    if all(_ERROR.search(t) for t in substantive):
        return "error output"
    if sum(len(terms(t)) for t in substantive) < min_terms:
        return "too short"
    return None
