"""A user's turns as the recall index holds them: one tuple per field (``TurnTable``), and who said each turn
(the "Name:" prefix a transcript keeps, else the turn's speaker role)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterator, NamedTuple, Sequence

from lumina_memory.stores.models import Turn


class IndexedTurn(NamedTuple):
    """A turn as the index hands it out: the fields of stores.models.Turn in a plain tuple of strings
    and floats, made on access from a TurnTable's columns."""

    turn_id: str
    source_id: str
    user_id: str
    speaker: str
    text: str
    ts: float
    segment_id: str


class TurnTable(Sequence[IndexedTurn]):
    """The index's turns in conversation order, held as one tuple per field: a row object per turn, even a
    named tuple, stays on the cyclic garbage collector's books, and at 100 users × 10,000 turns those were
    a million objects each full collection walked, paid for by whichever recall happened to trigger it.
    Tuples, not lists: a list is walked item by item on every full collection (~300 ms for 100 users'
    columns), a tuple of strings and floats is dropped from the collector's books after the first one.
    Rows are made on access (recall reads a few hundred per query)."""

    __slots__ = ("_columns",)

    def __init__(self, columns: tuple[tuple, ...] | None = None) -> None:
        self._columns = columns if columns is not None else tuple(() for _ in IndexedTurn._fields)

    @classmethod
    def of(cls, turns) -> "TurnTable":
        if isinstance(turns, TurnTable):
            return turns
        columns = tuple([] for _ in IndexedTurn._fields)
        for t in turns:
            for column, value in zip(columns, (t.turn_id, t.source_id, t.user_id, t.speaker, t.text, float(t.ts), t.segment_id)):
                column.append(value)
        return cls(tuple(tuple(c) for c in columns))

    def head(self, n: int) -> "TurnTable":
        """The first ``n`` turns, as a table."""
        return TurnTable(tuple(c[:n] for c in self._columns))

    def column(self, name: str) -> tuple:
        return self._columns[IndexedTurn._fields.index(name)]

    def __len__(self) -> int:
        return len(self._columns[0])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [IndexedTurn(*row) for row in zip(*(c[i] for c in self._columns))]
        a, b, c, d, e, f, g = self._columns  # spelled out: recall reads hundreds of rows per query
        return IndexedTurn(a[i], b[i], c[i], d[i], e[i], f[i], g[i])

    def __iter__(self) -> Iterator[IndexedTurn]:
        return map(IndexedTurn._make, zip(*self._columns))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TurnTable):
            return self._columns == other._columns
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable columns, like a list

    def __repr__(self) -> str:
        return f"TurnTable({len(self)} turns)"

    def __add__(self, other) -> "TurnTable":
        """A new table (this one is left as it is: a query running on it keeps its view)."""
        more = TurnTable.of(other)
        return TurnTable(tuple(a + b for a, b in zip(self._columns, more._columns)))



_NAME_PREFIX = re.compile(r"^\s*([^:：\n\[\]]{1,40}?)\s*[:：]\s*")


def speaker_labels(turns: list[Turn]) -> tuple[str, ...]:
    """Who said each turn. Transcripts often keep the speaker's name in the text ("Caroline: …",
    "キャロライン：…"); a prefix that starts at least 3 turns names a speaker, else the turn's own speaker role."""
    return labels_from(name_prefixes(turns), turns)


def name_prefixes(turns: list[Turn]) -> tuple[str, ...]:
    texts = turns.column("text") if isinstance(turns, TurnTable) else [t.text for t in turns]
    return tuple((m.group(1).strip() if (m := _NAME_PREFIX.match(text)) else "") for text in texts)


def speaker_prefixes(prefix_counts: Counter) -> set[str]:
    """The prefixes that name a speaker: seen at least 3 times, at most 3 words."""
    return {p for p, c in prefix_counts.items() if p and c >= 3 and len(p.split()) <= 3}


def labels_from(prefixes: Sequence[str], turns, prefix_counts: Counter | None = None) -> tuple[str, ...]:
    """Each turn's label. ``prefix_counts``: the counts to judge prefixes by, when ``prefixes`` are only
    some of the turns (a top-up); by default their own."""
    frequent = speaker_prefixes(prefix_counts if prefix_counts is not None else Counter(prefixes))
    speakers = turns.column("speaker") if isinstance(turns, TurnTable) else [t.speaker for t in turns]
    return tuple(p if p in frequent else speaker for p, speaker in zip(prefixes, speakers))

