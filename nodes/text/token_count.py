"""The one token counter: what a text costs in a context budget, and where its tokens are.

The rule is the retrieval metric's (../shared/data/README.md): every CJK character (kana, kanji, half-width
kana, CJK punctuation, full-width forms) is one token; the rest of the text counts its whitespace-separated words.
English costs its word count, Japanese about its character count.

Hangul syllables count one each, like kana, although Korean puts spaces between words. A Korean word carries its
particles and endings (서울에서 = Seoul + "in", 좋아해요 = like + politeness), about three syllables, and a model
reads a syllable block much as it reads a kana: counted by words, a Korean context would run about three times
longer than a Japanese one of the same budget. It is also the count every benchmark has measured recall with
(the harnesses re-count packed items with this function), so Korean figures stay comparable.

The same rule cuts long texts into chunks (``token_spans``: S3 messages, knowledge-base documents, passage
windows), so a chunk of N tokens costs exactly N in a budget.
"""

from __future__ import annotations

import re

CJK = (
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u309f"  # hiragana
    "\u30a0-\u30ff"  # katakana
    "\u31f0-\u31ff"  # katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uff01-\uff60"  # full-width forms
    "\uff61-\uff9f"  # half-width katakana and punctuation
    "\uac00-\ud7af"  # hangul syllables
)
CJK_RE = re.compile(f"[{CJK}]")
_TOKEN = re.compile(rf"[{CJK}]|[^\s{CJK}]+")


def token_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every token of ``text``, in order: each CJK character, each other run of non-space."""
    return [m.span() for m in _TOKEN.finditer(text)]


def count_tokens(text: str) -> int:
    """Every CJK character (Hangul included) is one token; the remaining text counts as whitespace-separated words."""
    if not text:
        return 0
    cjk = len(CJK_RE.findall(text))
    return cjk + len(CJK_RE.sub(" ", text).split())


def glued(left: str, right: str) -> bool:
    """``left + right`` counts one token fewer than the two apart: the last word of ``left`` runs on into the
    first of ``right`` (neither side is whitespace or CJK there)."""
    if not left or not right:
        return False
    a, b = left[-1], right[0]
    return not (a.isspace() or b.isspace() or CJK_RE.match(a) or CJK_RE.match(b))
