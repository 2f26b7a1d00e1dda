"""Where callers get a ``LexicalIndex`` (stores.protocols): the in-process one, the only adapter so far."""

from __future__ import annotations

from typing import Any

from .lexical_index import InProcessLexical
from .protocols import LexicalIndex


def open_lexical(postings: Any = None, lengths: Any = None, avg: float | None = None) -> LexicalIndex:
    """An index holding ``postings`` (term -> (documents, term frequencies) arrays) over documents of ``lengths``;
    empty without them. ``avg``: the average length to normalise by, when the caller keeps its own."""
    return InProcessLexical(postings, lengths, avg)
