"""S3: long texts are cut into overlapping chunks (2,000 tokens, 200 overlap) that share one id, and
put back together at recall.

Tokens follow the benchmark's rule: every CJK character (kana, kanji, half-width kana) is one token;
any other run of non-space characters is one word-token.
"""

from __future__ import annotations

import re
from typing import Sequence

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


def token_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


def count_tokens(text: str) -> int:
    return sum(1 for _ in _TOKEN.finditer(text))


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
