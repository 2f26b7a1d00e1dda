"""Passage windows of long turns (issue 19): the units recall ranks and quotes a long reply by.

A 1,500-word assistant reply embedded as one vector is the average of everything it says: the one sentence a
question needs is diluted by the code and the headings around it, and BM25 normalises it away by the length.
So a turn longer than ``min_tokens`` is also seen as windows of about ``size`` tokens, cut at sentence and
line ends, each overlapping the next by one unit (a fact on a boundary is whole in one of them).

Windows follow the text's own paragraphs (issue 46): a window never runs across a blank line or into or out of a
code fence, so a user's one-sentence statement after a pasted page of documentation, a log or code is a passage of
its own instead of the tail of a window that is mostly the paste (its vector would be the paste's). Consecutive
short paragraphs (under a quarter of ``size`` each) share windows up to ``size``, so a list of one-line notes is
not a passage per line; a paragraph longer than ``size`` is cut into overlapping windows as any long text. Storage is
unchanged (the turn stays one archived row, or S3's 2,000/200 chunks for a message over
``max_message_chars``); windows are derived from the text, so the same text always gives the same windows.

Units are the toolkit's sentences and lines (``sentences.sentence_spans``), tokens its one counter
(``token_count``: CJK character = 1, other words = 1).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from .sentences import sentence_spans
from .token_count import count_tokens, token_spans

MAX_PASSAGES = 64  # per turn: a 150,000-character pasted log gets wider windows, not thousands of vectors
SHORT_PARAGRAPH = 4  # a paragraph under size / SHORT_PARAGRAPH tokens shares a window with its short neighbours
_FENCE = re.compile(r"[ \t]*(```|~~~)")


def _paragraph_starts(text: str) -> list[int]:
    """Offsets where a paragraph begins: the first line after a blank line, a code fence's opening line and the
    line after its closing one (blank lines inside a fence are code, not paragraph breaks)."""
    starts: list[int] = []
    fenced, pending, at = False, False, 0
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            if not fenced:
                starts.append(at)
            fenced, pending = not fenced, fenced
        elif not fenced and line.strip():
            if pending:
                starts.append(at)
            pending = False
        elif not fenced:
            pending = True
        at += len(line)
    return starts


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
    starts = _paragraph_starts(text)
    units = _units(text, size)
    windows = _paragraph_windows(units, starts, size)
    while len(windows) > MAX_PASSAGES:
        size += size // 2
        units = _units(text, size)
        windows = _paragraph_windows(units, starts, size)
    return tuple((a, b) for a, b, _ in units), tuple(windows)


def _paragraph_windows(units: list[tuple[int, int, int]], starts: list[int], size: int) -> list[tuple[int, int]]:
    """The windows of each run of units that no paragraph break divides, as (first unit, last unit + 1) of all
    ``units``; consecutive short paragraphs form one run while it fits in ``size``."""
    runs: list[list[int]] = []  # [first unit, last unit + 1, tokens, every paragraph of it short (0/1)]
    for k, (start, _end, tokens) in enumerate(units):
        if k and bisect_right(starts, start) == bisect_right(starts, units[k - 1][0]):
            runs[-1][1:3] = [k + 1, runs[-1][2] + tokens]
        else:
            runs.append([k, k + 1, tokens, 1])
    short = size / SHORT_PARAGRAPH
    merged: list[list[int]] = []
    for run in runs:
        run[3] = int(run[2] < short)
        last = merged[-1] if merged else None
        if last and last[3] and run[3] and last[2] + run[2] <= size:
            last[1:3] = [run[1], last[2] + run[2]]
        else:
            merged.append(run)
    return [(first + a, first + b) for first, end, _, _ in merged for a, b in _windows(units[first:end], size)]


def _windows(units: list[tuple[int, int, int]], size: int) -> list[tuple[int, int]]:
    """Each passage of ``units`` (one paragraph's) as (first unit, last unit + 1)."""
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
