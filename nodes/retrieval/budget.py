"""Context budgets: the one token counter, and packing ranked items into a budget (A1).

Tokens as the LoCoMo metric defines them (../shared/data/README.md): every CJK character (kanji, kana,
half-width kana, CJK punctuation) is one token; the rest of the text counts as whitespace-separated words.
English text costs its word count, Japanese about its character count.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

_CJK = (
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
_CJK_RE = re.compile(f"[{_CJK}]")


def glued(left: str, right: str) -> bool:
    """``left + right`` counts one token fewer than the two apart: the last word of ``left`` runs on into the
    first of ``right`` (neither side is whitespace or CJK there)."""
    if not left or not right:
        return False
    a, b = left[-1], right[0]
    return not (a.isspace() or b.isspace() or _CJK_RE.match(a) or _CJK_RE.match(b))


def count_tokens(text: str) -> int:
    """Every CJK character is one token; the remaining text counts as whitespace-separated words."""
    if not text:
        return 0
    cjk = len(_CJK_RE.findall(text))
    rest = _CJK_RE.sub(" ", text)
    return cjk + len(rest.split())


def budget_for(settings, kind: str | None) -> int:
    """A1 budget by message type (greeting 500, question 1,500, request 3,000 ...)."""
    budgets = settings.recall_budgets
    return int(budgets.get(kind or "default", budgets.get("default", 1024)))


def pack(
    items: Iterable[dict[str, Any]], budget: int, *, allow_partial: bool = False
) -> tuple[list[dict[str, Any]], set[str], int]:
    """Take items in rank order while they fit in ``budget`` tokens.

    An item that does not fit is skipped (a shorter one further down may still fit) — unless
    ``allow_partial``, when nothing is skipped and the walk stops at the first item that does not fit.
    Each item may carry ``tokens`` (else counted from ``text``) and ``source_ids``.
    Returns (packed items, covered source ids, tokens used).
    """
    packed: list[dict[str, Any]] = []
    covered: set[str] = set()
    used = 0
    for item in items:
        cost = item.get("tokens")
        if cost is None:
            cost = count_tokens(item.get("text", ""))
        if used + cost > budget:
            if allow_partial:
                break
            continue
        packed.append(item)
        used += cost
        covered.update(item.get("source_ids", []))
    return packed, covered, used


def coverage(packed: Sequence[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for item in packed:
        out.update(item.get("source_ids", []))
    return out
