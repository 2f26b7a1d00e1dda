"""BM25 over the passage windows of a user's long turns (issue 19): the keyword side of passage recall.

Turn-level BM25 divides a term's weight by the document's length, so the one sentence of a 2,000-word reply
that names "the Python version" scores below any short turn that mentions Python. Scoring the reply's
passages instead (nodes.text.passages), each about as long as a chat turn, gives that sentence its weight
back. Only long turns have passages, so short-turn histories (LoCoMo) are untouched. The index is built and
topped up with the user's turn index (at write time, nodes.retrieval.warm), never inside a recall.
"""

from __future__ import annotations

from itertools import chain
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from lumina_memory.stores.lexical import B, K1, average, bm25, merged, norms, postings_of

from ..text.passages import passage_units
from ..text.tokenize import read_once
from ..text.transliterate import keyed, keys_of


class LongTurnTerms(NamedTuple):
    """What an index holds of a long turn, read unit by unit (sentences and lines, nodes.text.passages): the
    turn's terms and cross-script keys, and each passage's, summed from its units. Reading the whole turn
    and then each overlapping passage again was two thirds of a cold build's time."""

    terms: list[str]
    keys: tuple[str, ...]
    passages: list[tuple[list[str], tuple[str, ...]]]


def long_turn_terms(text: str, cut: tuple[int, int]) -> LongTurnTerms | None:
    """None for a turn without passages (a chat turn: read whole)."""
    units = long_turn_units(text, cut)
    return assemble(*units) if units is not None else None


def long_turn_units(text: str, cut: tuple[int, int]) -> tuple[list[tuple[list[str], tuple[str, ...]]], tuple] | None:
    """(each unit's terms and keys, the passages as ranges of units) of a long turn; None for a chat turn."""
    units, windows = passage_units(text, *cut) if cut[0] else ((), ())
    if not windows:
        return None
    read = []
    for a, b in units:
        unit_terms, kana = read_once(text[a:b])
        read.append((list(unit_terms), keys_of(text[a:b], keyed(kana))))
    return read, windows


def assemble(read: list[tuple[list[str], tuple[str, ...]]], windows) -> LongTurnTerms:
    """A long turn's terms and keys, and each passage's, summed from its units' (``long_turn_units``)."""
    words, keys = [u[0] for u in read], [u[1] for u in read]
    # chain.from_iterable keeps the joining in C: a cold build from kept reads assembles ~40,000 passages.
    passages = [(list(chain.from_iterable(words[first:last])), tuple(dict.fromkeys(chain.from_iterable(keys[first:last]))))
                for first, last in windows]
    return LongTurnTerms(list(chain.from_iterable(words)), tuple(dict.fromkeys(chain.from_iterable(keys))), passages)


@dataclass(frozen=True)
class PassageIndex:
    doc_turn: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # passage -> turn index
    doc_part: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))  # passage -> its number in the turn
    lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    postings: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # term -> (passages, tf)

    def extended(self, texts, token_counts: np.ndarray, start: int, cut: tuple[int, int],
                 read: dict[int, LongTurnTerms] | None = None) -> "PassageIndex":
        """This index with the passages of the long ones among ``texts`` (turn indices from ``start``).
        ``read``: ``long_turn_terms`` of those turns by their index among ``texts``, when the caller has them."""
        size, least = cut
        if not size:
            return self
        first = len(self.doc_turn)
        turn_of: list[int] = []
        part_of: list[int] = []
        passage_terms: list[list[str]] = []
        passage_keys: list[tuple[str, ...]] = []
        for k in np.flatnonzero(token_counts > least):
            turn = read.get(int(k)) if read is not None else long_turn_terms(texts[k], cut)
            for part, (words, keys) in enumerate(turn.passages if turn else ()):
                turn_of.append(start + int(k))
                part_of.append(part)
                passage_terms.append(words)
                passage_keys.append(keys)  # cross-script keys (nodes.text.transliterate)
        if not turn_of:
            return self
        rows, lengths = postings_of(passage_terms, passage_keys, first)
        return PassageIndex(
            np.concatenate([self.doc_turn, np.asarray(turn_of, dtype=np.int64)]),
            np.concatenate([self.doc_part, np.asarray(part_of, dtype=np.int32)]),
            np.concatenate([self.lengths, lengths]),
            merged(self.postings, rows),
        )

    def span_of(self, turn: int) -> tuple[int, int]:
        """The passages ``[lo, hi)`` of ``turn`` (empty for a chat turn): passages are appended turn by turn, so
        ``doc_turn`` is sorted and a lookup is two binary searches, not a pass over every passage."""
        lo, hi = np.searchsorted(self.doc_turn, [turn, turn + 1])
        return int(lo), int(hi)

    def search(self, query_terms: list[str], limit: int, k1: float = K1, b: float = B) -> list[tuple[int, int, float]]:
        """(turn index, passage number, score) of the best passage of each matching turn, best first."""
        n = len(self.doc_turn)
        if not n or not query_terms:
            return []
        lengths = self.lengths.astype(np.float64)
        scores = bm25([(self.postings, norms(lengths, average(lengths), k1, b), None)], query_terms, k1=k1)[0]
        hit = np.flatnonzero(scores)
        if not hit.size:
            return []
        order = hit[np.argsort(-scores[hit], kind="stable")]
        out: list[tuple[int, int, float]] = []
        seen: set[int] = set()
        for d in order:
            turn = int(self.doc_turn[d])
            if turn in seen:
                continue
            seen.add(turn)
            out.append((turn, int(self.doc_part[d]), float(scores[d])))
            if len(out) >= limit:
                break
        return out
