"""Context budgets: packing ranked items into a budget (A1), counted by the toolkit's one token counter
(``lumina_memory.nodes.text.token_count``: a CJK character is one token, other text counts its words).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..text.token_count import count_tokens


def budget_for(settings, kind: str | None) -> int:
    """A1 budget by message type (greeting 500, question 1,500, request 3,000 ...)."""
    budgets = settings.recall_budgets
    return int(budgets.get(kind or "default", budgets.get("default", 1024)))


EXCERPT_SHARE = 0.05
"""The most of a budget one excerpt of a long turn may take: a budget holds about twenty quotes before any of them
is longer than the settings' excerpt length, so at a small budget the long turns ranked next still fit. On real long
conversations a question's evidence ranks deeper than ten long replies: at 512 tokens, quotes of a twentieth of the
budget instead of a tenth raised recall by 6.4 points on the written real-text questions' held-out half and by 7.1
on the English long-reply set (bench/results/packing_realtext_written.md)."""
EXCERPT_FLOOR = 24
"""The fewest tokens an excerpt is cut to however small the budget: under this a quote is rarely a whole sentence,
and at 256 tokens the long-reply set's recall and answers were lower with 16-token quotes than with 25."""


def excerpt_tokens(setting: int, budget: int | None) -> int:
    """How long a quote of a long turn may be when packing into ``budget``: the settings' excerpt length
    (``setting``; 0 = whole turns), at most ``EXCERPT_SHARE`` of the budget but not under ``EXCERPT_FLOOR``; 0 (whole
    turns) without a budget. Long replies quoted at a fixed 48 tokens filled a 256-token budget with five quotes
    while a plain ranking's shorter ones held seven, the evidence among them."""
    if budget is None or not setting:
        return 0
    return min(setting, max(EXCERPT_FLOOR, int(budget * EXCERPT_SHARE)))


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
