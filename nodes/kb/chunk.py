"""S3 chunks of a knowledge-base document, cut where the text pauses (Japanese-aware).

``lumina_memory.nodes.text.chunking.chunk_text`` cuts every 1,800 tokens wherever that falls, often inside a sentence
(Japanese has no spaces, so a cut can split a word). Here each chunk still holds at most ``size`` tokens
(the same token rule) and overlaps the next by at least ``overlap``, but within a small window before each
limit the cut goes to the best pause: before a Markdown heading, a paragraph end, a line end, a sentence
end (the toolkit's sentences, ``nodes.text.sentences``: 。！？ and .!? followed by a space, closing brackets after
them: 「…。」). Chunks are character spans of the document, so reassembling neighbours is exact (``join_spans``):
no overlap duplicated, nothing lost.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from ..text.sentences import sentence_spans as _sentences
from ..text.token_count import token_spans

_CLOSERS = "」』）)]】〉》\"'”’"
_SENTENCE_END = "。！？!?．.…"
_PARAGRAPH = re.compile(r"\n[ \t\u3000]*\n")


class Chunk(NamedTuple):
    start: int
    end: int
    text: str


def _pause(text: str, spans: Sequence[tuple[int, int]], i: int, ends: frozenset[int]) -> int:
    """How good a cut before token ``i`` is: 5 before a Markdown heading, 4 a paragraph end, 3 a sentence
    and line end, 2 a line end, 1 a sentence end, 0 inside a sentence. ``ends``: the offsets where a sentence ends at its mark (not a bare line end)."""
    if i <= 0 or i >= len(spans):
        return 5
    gap = text[spans[i - 1][1]: spans[i][0]]
    sentence = spans[i - 1][1] in ends
    if _PARAGRAPH.search(gap):
        line_start = text.rfind("\n", 0, spans[i - 1][0]) + 1
        if text.startswith("#", line_start):
            return 1  # right after a heading: the heading belongs with what follows it
        return 5 if text.startswith("#", spans[i][0]) else 4
    if "\n" in gap:
        return 3 if sentence else 2
    return 1 if sentence else 0


def _best_cut(text: str, spans, low: int, high: int, ends: frozenset[int]) -> int:
    """The cut in ``[low, high]`` with the best pause, the latest among equals (``high`` if none)."""
    best, best_rank = high, _pause(text, spans, high, ends)
    for i in range(high - 1, low - 1, -1):
        rank = _pause(text, spans, i, ends)
        if rank > best_rank:
            best, best_rank = i, rank
            if rank == 5:
                break
    return best


def chunk_document(text: str, size: int = 2000, overlap: int = 200, window: int | None = None) -> list[Chunk]:
    """Chunks of at most ``size`` tokens, each overlapping the next by ``overlap`` to ``overlap + window``
    tokens, cut at pauses found within ``window`` tokens (default size/20) before each limit."""
    if size <= overlap:
        raise ValueError("chunk size must exceed the overlap")
    window = max(1, size // 20) if window is None else window
    spans = token_spans(text)
    if not spans:
        return []
    ends = frozenset(b for a, b in _sentences(text) if text[a:b].rstrip(_CLOSERS)[-1:] in _SENTENCE_END)
    n = len(spans)
    chunks: list[Chunk] = []
    start = 0
    while True:
        high = min(start + size, n)
        end = n if high == n else _best_cut(text, spans, max(start + 1, high - window), high, ends)
        chunks.append(Chunk(spans[start][0], spans[end - 1][1], text[spans[start][0]: spans[end - 1][1]]))
        if end >= n:
            return chunks
        target = end - overlap
        nxt = _best_cut(text, spans, max(start + 1, target - window), max(start + 1, target), ends)
        start = max(nxt, start + 1)


def sentence_spans(text: str, max_tokens: int = 64, min_tokens: int = 3) -> list[tuple[int, int]]:
    """Character spans of the sentences (and lines) of ``text``, a sentence window's probes: one shorter
    than ``min_tokens`` (「はい。」, a bare "#") joins the next, one longer than ``max_tokens`` is cut."""
    units: list[tuple[int, int, int]] = []
    for start, end in _sentences(text):
        spans = token_spans(text[start:end])
        for k in range(0, len(spans), max_tokens):
            window = spans[k: k + max_tokens]
            units.append((start + window[0][0], start + window[-1][1], len(window)))
    out: list[tuple[int, int]] = []
    carry: tuple[int, int] | None = None  # (start, tokens) of short units waiting for the next
    for a, b, n in units:
        if carry is not None:
            a, n = carry[0], n + carry[1]
        if n < min_tokens:
            carry = (a, n)
            continue
        out.append((a, b))
        carry = None
    if carry is not None:  # a short tail joins the sentence before it
        out[-1:] = [(out[-1][0] if out else carry[0], units[-1][1])]
    return out


def join_spans(chunks: Sequence[tuple[int, int, str]]) -> str:
    """Neighbouring chunks ``(start, end, text)`` (document offsets) as one text, their overlap once."""
    ordered = sorted(chunks, key=lambda c: c[0])
    if not ordered:
        return ""
    out, reached = ordered[0][2], ordered[0][1]
    for start, end, text in ordered[1:]:
        if end <= reached:
            continue
        # Consecutive chunks overlap, so start < reached; a gap (a chunk missing) is marked, not glued.
        out += text[reached - start:] if start <= reached else " … " + text
        reached = end
    return out
