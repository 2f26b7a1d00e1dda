"""S3: long texts are cut into overlapping chunks (2,000 tokens, 200 overlap) that share one id, and
put back together at recall.

Tokens are the budget's (``token_count``: every CJK character one token, other text its words), so a chunk of
N tokens costs N in a context budget.
"""

from __future__ import annotations

import re
from typing import Sequence

from lumina_memory.stores.ids import PART_MARK

from .token_count import token_spans


def chunk_text(text: str, size: int = 2000, overlap: int = 200) -> list[str]:
    """Chunks of at most ``size`` tokens, each starting ``size - overlap`` tokens after the last."""
    if size <= overlap:
        raise ValueError("chunk size must exceed the overlap")
    spans = token_spans(text)
    if len(spans) <= size:
        return [text]
    chunks = []
    step = size - overlap
    for start in range(0, len(spans), step):
        window = spans[start : start + size]
        chunks.append(text[window[0][0] : window[-1][1]])
        if start + size >= len(spans):
            break
    return chunks


def split_message(text: str, max_chars: int, size: int = 2000, overlap: int = 200) -> list[str]:
    """A message as stored: whole when it has at most ``max_chars`` characters, else its chunks (S3)."""
    if len(text) <= max_chars:
        return [text]
    return chunk_text(text, size, overlap)


def reassemble(chunks: Sequence[str], overlap: int = 200) -> str:
    """Undo ``chunk_text`` (up to white space around the whole text, which ingest strips anyway):
    drop each later chunk's first ``overlap`` tokens, already in the previous chunk."""
    if not chunks:
        return ""
    text = chunks[0]
    for chunk in chunks[1:]:
        spans = token_spans(chunk)
        if len(spans) > overlap:
            cut = spans[overlap][0]
            glue = chunk[spans[overlap - 1][1] : cut]
            text += glue + chunk[cut:]
    return text


_PART = re.compile(rf"^(?P<parent>.+){re.escape(PART_MARK)}(?P<index>\d+)$")


def parse_part(source_id: str) -> tuple[str, int] | None:
    """(parent source id, part index) of a chunk's source id (stores.ids.part_source_id), else None."""
    m = _PART.match(source_id)
    return (m.group("parent"), int(m.group("index"))) if m else None


def join_parts(entries: Sequence[tuple[str, str, bool]], overlap: int = 200, sep: str = "\n") -> str:
    """Texts of turns in conversation order, ``(source_id, text, whole)`` each, joined by ``sep``; the
    consecutive parts of one chunked message are joined back into its text (their overlap dropped)
    instead — or by " … " when one of them is an excerpt (``whole`` false)."""
    out: list[str] = []
    previous: tuple[str, int] | None = None
    previous_whole = True
    for source_id, text, whole in entries:
        part = parse_part(source_id)
        if part and previous and part[0] == previous[0] and part[1] == previous[1] + 1:
            out[-1] = reassemble([out[-1], text], overlap) if whole and previous_whole else f"{out[-1]} … {text}"
        else:
            out.append(text)
        previous, previous_whole = part, whole
    return sep.join(out)
