"""Passage windows of long turns (issue 19): the units recall ranks and quotes a long reply by.

A 1,500-word assistant reply embedded as one vector is the average of everything it says: the one sentence a
question needs is diluted by the code and the headings around it, and BM25 normalises it away by the length.
So a turn longer than ``min_tokens`` is also seen as windows of about ``size`` tokens, cut at sentence and
line ends, each overlapping the next by one unit (a fact on a boundary is whole in one of them). Storage is
unchanged (the turn stays one archived row, or S3's 2,000/200 chunks for a message over
``max_message_chars``); windows are derived from the text, so the same text always gives the same windows.

Units are the toolkit's sentences and lines (``sentences.sentence_spans``), tokens its one counter
(``token_count``: CJK character = 1, other words = 1).
"""

from __future__ import annotations

from functools import lru_cache

from .sentences import sentence_spans
from .token_count import count_tokens, token_spans

MAX_PASSAGES = 64  # per turn: a 150,000-character pasted log gets wider windows, not thousands of vectors


def _units(text: str, size: int) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of each sentence or line; a unit longer than ``size`` (a long code line, a run of
    CJK text without punctuation) is cut every ``size`` tokens."""
    out: list[tuple[int, int, int]] = []
    for start, end in sentence_spans(text):
        spans = token_spans(text[start:end])
        for k in range(0, len(spans), size):
            window = spans[k : k + size]
            out.append((start + window[0][0], start + window[-1][1], len(window)))
    return out


@lru_cache(maxsize=8_192)
def passage_spans(text: str, size: int = 128, min_tokens: int = 160) -> tuple[tuple[int, int], ...]:
    """Character spans ``(start, end)`` of the passages of ``text``, in order; ``()`` when the text has at most
    ``min_tokens`` tokens (a chat turn is its own passage). Consecutive passages share one unit."""
    units, windows = passage_units(text, size, min_tokens)
    return tuple((units[first][0], units[last - 1][1]) for first, last in windows)


@lru_cache(maxsize=8_192)
def passage_units(text: str, size: int = 128, min_tokens: int = 160) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """The units of ``text`` (character spans of its sentences and lines) and its passages as ranges of them
    (``units[first:last]``): an index reads each unit once and sums a passage's terms from its units', instead
    of reading the overlapping passages and the whole turn again. ``((), ())`` for a turn without passages."""
    if size <= 0 or count_tokens(text) <= min_tokens:
        return (), ()
    units = _units(text, size)
    windows = _windows(units, size)
    while len(windows) > MAX_PASSAGES:
        size += size // 2
        units = _units(text, size)
        windows = _windows(units, size)
    return tuple((a, b) for a, b, _ in units), tuple(windows)


def _windows(units: list[tuple[int, int, int]], size: int) -> list[tuple[int, int]]:
    """Each passage as (first unit, last unit + 1)."""
    windows: list[tuple[int, int]] = []
    first = 0
    while first < len(units):
        used, last = 0, first
        while last < len(units) and (last == first or used + units[last][2] <= size):
            used += units[last][2]
            last += 1
        windows.append((first, last))
        if last >= len(units):
            break
        first = max(first + 1, last - 1)  # the next window starts with this one's last unit
    return windows


def passages(text: str, size: int = 128, min_tokens: int = 160) -> list[str]:
    return [text[a:b] for a, b in passage_spans(text, size, min_tokens)]


def passage_rows(turns: list[dict], settings) -> list[dict]:
    """The passage points of the long ones among ``turns`` (dicts as the turn-vector store takes them): each
    a copy of its turn with ``passage`` (its number) and the passage's text, to embed beside the turns."""
    size, least = settings.recall_passage_tokens, settings.recall_passage_min_tokens
    if not size:
        return []
    return [{**t, "passage": k, "text": text}
            for t in turns for k, text in enumerate(passages(t["text"], size, least))]
