"""A fixture body for stores opened on each engine: the store, closed afterwards where it holds connections."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")


def closed_after(opened: T) -> Iterator[T]:
    yield opened
    close = getattr(opened, "close", None)  # a server's store holds a pool; the data dir's files need nothing
    if close is not None:
        close()
