"""Text a row brings to the archive's tables is valid Unicode, or the row is refused naming its field.

Both engines reject a lone surrogate (a half of a UTF-16 pair, which Python strings may hold), DuckDB and psycopg
each with an error of their own that names neither the field nor the position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InvalidInput


def check_texts(row: Mapping[str, Any], names: Sequence[str]) -> None:
    """Raise ``InvalidInput`` for the first of ``names`` whose text (or one of its list of texts) is not valid
    Unicode; values of other types pass."""
    for name in names:
        value = row.get(name)
        for text in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise InvalidInput(name, f"is not valid Unicode (lone surrogate at position {exc.start})") from None
