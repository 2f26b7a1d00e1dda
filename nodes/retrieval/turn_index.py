"""Per-user index of archived turns: BM25 (Sudachi/English terms) and conversation order.

Built from the archive on first use and rebuilt when the user's turn count changes (new turns, or an
erase), so it costs one tokenisation per turn per process. The archive stays the source of truth. The
conversation order lets recall pack a hit with its neighbouring turns.

It also keeps the turns' vectors (float16, read once from the turn-vector collection, carried over on a
rebuild) so MMR and near-duplicate checks never fetch vectors per query: at 10,000 turns a user's matrix is
10 MB, and fetching 100+ vectors per query from the engine cost more than the search itself.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple, Sequence

import numpy as np

from lumina_memory.stores.models import Turn
from lumina_memory.stores.recall_snapshots import TURNS
from lumina_memory.stores.records import passage_point_id, turn_point_id

from .passage_index import LongTurnTerms, PassageIndex
from .postings import merged, postings_of
from .time_mentions import LONG_TURN_TOKENS, mentions_time
from .turn_reads import TurnReads, keep_reads, read_turns, stored_reads
from .user_locks import UserLocks

log = logging.getLogger("lumina.recall")


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


@dataclass
class UserTurns:
    turns: TurnTable = field(default_factory=TurnTable)
    position: dict[str, int] = field(default_factory=dict)  # turn_id -> index in conversation order
    # term -> (turn indices, term frequencies), as arrays so a query term scores all its turns at once
    postings: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    lengths: np.ndarray = field(default_factory=lambda: np.zeros(0))
    avg: float = 1.0
    # Per-turn and per-segment sequences are tuples for the garbage collector (see TurnTable).
    labels: tuple[str, ...] = ()  # who said each turn: the "Name:" prefix, else its speaker
    generation: int | None = None  # the archive's write generation this index was checked against
    # Per-query fusion needs these for every turn; computed once here so a query stays O(hits), not O(turns).
    members: dict[str, tuple[int, ...]] = field(default_factory=dict)  # segment_id -> turn indices
    same_exchange: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # turn i-1 and i belong together
    label_array: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    speakers: list[str] = field(default_factory=list)  # distinct speaker labels, most frequent first
    ts: np.ndarray = field(default_factory=lambda: np.zeros(0))  # each turn's time, for vectorised recency
    segment_ids: tuple[str, ...] = ()  # distinct segments, in order of first turn
    segment_of: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))  # turn -> segment_ids index
    segment_code: dict[str, int] = field(default_factory=dict)  # segment_id -> segment_ids index
    point_position: dict[str, int] = field(default_factory=dict)  # turn-vector point id -> turn index
    vectors: np.ndarray | None = None  # (turns, dim) float16 once loaded; rows of turns without one are 0
    has_vector: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    prefixes: tuple[str, ...] = ()  # each turn's "Name:" prefix, "" when none
    # Each turn's length as the budget counts it (budget.count_tokens), so packing a first visit's
    # candidates does not count hundreds of texts the process has not seen yet.
    token_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    last_seq: int = 0  # the archive's arrival number of the newest turn indexed (turns_since)
    # How often each "Name:" prefix and each label occur, so a top-up relabels only the new turns unless
    # a prefix just became frequent enough to name a speaker.
    prefix_counts: Counter = field(default_factory=Counter)
    label_counts: Counter = field(default_factory=Counter)
    # ``vectors`` is a view of the first rows of this buffer; the spare rows take a top-up's new turns
    # without copying the whole matrix (10 MB at 10,000 turns) after every closed segment.
    vector_buffer: np.ndarray | None = None
    # Passage windows of long turns (nodes.text.passages): each passage point's id -> (turn index, passage
    # number), so the dense channel maps a passage hit to its turn and says which part of it matched.
    passage_cut: tuple[int, int] = (0, 0)  # (window tokens, least turn tokens); (0, 0) = no passages
    passage_of: dict[str, tuple[int, int]] = field(default_factory=dict)
    passages: PassageIndex = field(default_factory=PassageIndex)  # their BM25

    def said_by_user(self) -> np.ndarray:
        """Which turns the user said (speaker "user"), as a mask; made on first use, kept with this index object
        (an extended index is a new object)."""
        mask = getattr(self, "_user_mask", None)
        if mask is None or mask.size != len(self.turns):
            mask = np.fromiter((s == "user" for s in self.turns.column("speaker")), dtype=bool, count=len(self.turns))
            self._user_mask = mask
        return mask

    def time_mentions(self, positions: np.ndarray) -> np.ndarray:
        """Those of ``positions`` whose turn names a time (nodes.retrieval.time_mentions). A long reply is taken to
        name one without reading it: nearly every one does, in passing (84 % of a long-reply set's longest), so
        its text says nothing either way, and reading thousands of characters per candidate would cost the query
        ~0.3 ms each. Each turn's answer is kept with this index object (an extended index is a new object)."""
        known = getattr(self, "_time_mentions", None)
        if known is None or known.size != len(self.turns):
            known = np.full(len(self.turns), -1, dtype=np.int8)
            known[self.token_counts >= (self.passage_cut[1] or LONG_TURN_TOKENS)] = 1
            self._time_mentions = known
        unknown = positions[known[positions] < 0]
        if unknown.size:
            texts = self.turns.column("text")
            known[unknown] = [mentions_time(texts[i]) for i in unknown.tolist()]
        return positions[known[positions] == 1]

    @classmethod
    def build(cls, turns: list[Turn], passage_cut: tuple[int, int] = (0, 0), reads: TurnReads | None = None) -> "UserTurns":
        """``reads``: the turns read (nodes.retrieval.turn_reads), when the caller has them; else read here."""
        turns = TurnTable.of(turns)
        texts = turns.column("text")
        reads = reads if reads is not None else read_turns(texts, passage_cut)
        token_counts, read = reads.counts, reads.reads
        # Cross-script keys are found by the other language, and add no length.
        arrays, lengths = postings_of([r.terms for r in read], [r.keys for r in read])
        user_id = turns[0].user_id if turns else ""
        return cls.assembled(
            turns, passage_cut, postings=arrays, lengths=lengths, token_counts=token_counts,
            point_position={turn_point_id(user_id, t): i for i, t in enumerate(turns.column("turn_id"))},
            passage_of=_passage_points(turns, 0, token_counts, user_id, passage_cut, read),
            passages=PassageIndex().extended(texts, token_counts, 0, passage_cut, dict(enumerate(read))),
        )

    @classmethod
    def assembled(cls, turns: TurnTable, passage_cut: tuple[int, int], *, postings, lengths: np.ndarray,
                  token_counts: np.ndarray, point_position: dict[str, int], passage_of: dict[str, tuple[int, int]],
                  passages: PassageIndex) -> "UserTurns":
        """An index of ``turns`` from what reading their texts gave (``build``, or a kept snapshot of it:
        nodes.retrieval.index_snapshot); the rest (order, segments, speakers, times) is worked out here from
        the turns' fields, which costs milliseconds."""
        members: dict[str, list[int]] = defaultdict(list)
        for i, segment_id in enumerate(turns.column("segment_id")):
            members[segment_id].append(i)
        # Adjacent turns of one segment, or less than an hour apart, are one exchange (an answer and its question).
        ts = np.fromiter(turns.column("ts"), dtype=np.float64, count=len(turns))
        segments = np.asarray(turns.column("segment_id"), dtype=object)
        same_exchange = ((segments[1:] == segments[:-1]) | (np.abs(np.diff(ts)) < 3600)).astype(bool)
        prefixes = name_prefixes(turns)
        prefix_counts = Counter(prefixes)
        labels = labels_from(prefixes, turns, prefix_counts)
        label_counts = Counter(labels)
        segment_ids = tuple(members)
        segment_code = {seg: c for c, seg in enumerate(segment_ids)}
        return cls(
            turns, {t: i for i, t in enumerate(turns.column("turn_id"))}, postings, lengths,
            (float(lengths.mean()) if len(turns) else 1.0) or 1.0, labels, None,
            {seg: tuple(m) for seg, m in members.items()}, same_exchange, np.asarray(labels, dtype=object),
            speakers=[label for label, _ in label_counts.most_common()],
            ts=ts,
            segment_ids=segment_ids,
            segment_of=np.fromiter((segment_code[s] for s in turns.column("segment_id")), dtype=np.int32, count=len(turns)),
            segment_code=segment_code,
            point_position=point_position,
            prefixes=prefixes,
            token_counts=token_counts,
            prefix_counts=prefix_counts,
            label_counts=label_counts,
            passage_cut=passage_cut,
            passage_of=passage_of,
            passages=passages,
        )

    def extended(self, new: list[Turn], turn_vectors=None, user_id: str = "", reads: TurnReads | None = None) -> "UserTurns":
        """This index with ``new`` turns appended (they follow every indexed turn in conversation order):
        what a rebuild would give, at the cost of the new turns only. A new object: a query running on
        this one keeps a consistent view. ``reads``: the new turns read, when the caller has them."""
        if not new:
            return self
        new = TurnTable.of(new)
        start = len(self.turns)
        turns = self.turns + new
        new_texts = new.column("text")
        reads = reads if reads is not None else read_turns(new_texts, self.passage_cut)
        new_counts, read = reads.counts, reads.reads
        new_postings, new_lengths = postings_of([r.terms for r in read], [r.keys for r in read], start)
        postings = merged(self.postings, new_postings)
        lengths = np.concatenate([self.lengths, new_lengths])
        members = dict(self.members)
        segment_ids, segment_code = list(self.segment_ids), dict(self.segment_code)
        for k, turn in enumerate(new):
            members[turn.segment_id] = (*members.get(turn.segment_id, ()), start + k)
            if turn.segment_id not in segment_code:
                segment_code[turn.segment_id] = len(segment_ids)
                segment_ids.append(turn.segment_id)
        joined = [turns[i].segment_id == turns[i - 1].segment_id or abs(turns[i].ts - turns[i - 1].ts) < 3600
                  for i in range(max(1, start), len(turns))]
        new_prefixes = name_prefixes(new)
        prefixes = (*self.prefixes, *new_prefixes)
        prefix_counts = self.prefix_counts + Counter(new_prefixes)
        if _speaker_prefixes(prefix_counts) == _speaker_prefixes(self.prefix_counts):
            new_labels = labels_from(new_prefixes, new, prefix_counts)
            labels = (*self.labels, *new_labels)
            label_counts = self.label_counts + Counter(new_labels)
            label_array = np.concatenate([self.label_array, np.asarray(new_labels, dtype=object)])
        else:  # a prefix became a speaker's name: earlier turns may now carry it too
            labels = labels_from(prefixes, turns, prefix_counts)
            label_counts = Counter(labels)
            label_array = np.asarray(labels, dtype=object)
        position = dict(self.position)
        point_position = dict(self.point_position)
        owner = user_id or (turns[0].user_id if turns else "")
        for k, turn in enumerate(new):
            position[turn.turn_id] = start + k
            point_position[turn_point_id(owner, turn.turn_id)] = start + k
        index = UserTurns(
            turns, position, postings, lengths, float(lengths.mean()) or 1.0, labels, self.generation,
            members, np.concatenate([self.same_exchange, np.asarray(joined, dtype=bool)]), label_array,
            speakers=[label for label, _ in label_counts.most_common()],
            ts=np.concatenate([self.ts, np.fromiter((t.ts for t in new), dtype=np.float64, count=len(new))]),
            segment_ids=tuple(segment_ids),
            segment_of=np.concatenate([self.segment_of, np.fromiter((segment_code[t.segment_id] for t in new), dtype=np.int32, count=len(new))]),
            segment_code=segment_code,
            point_position=point_position,
            prefixes=prefixes,
            token_counts=np.concatenate([self.token_counts, new_counts]),
            last_seq=self.last_seq,
            prefix_counts=prefix_counts,
            label_counts=label_counts,
            passage_cut=self.passage_cut,
            passage_of={**self.passage_of, **_passage_points(new, start, new_counts, owner, self.passage_cut, read)},
            passages=self.passages.extended(new_texts, new_counts, start, self.passage_cut, dict(enumerate(read))),
        )
        if self.vectors is not None:
            size = len(turns)
            buffer = self.vector_buffer
            if buffer is None or buffer.shape[0] < size or buffer.shape[1] != self.vectors.shape[1]:
                buffer = _vector_buffer(size, self.vectors.shape[1])
                buffer[:start] = self.vectors
            else:
                buffer[start:size] = 0  # rows past every earlier view's end: no running query reads them
            index.vector_buffer = buffer
            index.vectors = buffer[:size]
            index.has_vector = np.concatenate([self.has_vector, np.zeros(len(new), dtype=bool)])
            if turn_vectors is not None:
                index.vectors_for(turn_vectors, owner, range(start, len(turns)))
        return index

    def load_vectors(self, turn_vectors, user_id: str, previous: "UserTurns | None" = None) -> None:
        """Fill ``vectors`` from ``previous`` (same turn ids) and the store for the rest."""
        n = len(self.turns)
        dim = getattr(turn_vectors, "dim", 0)
        if not n or not dim:
            return
        buffer = _vector_buffer(n, dim)
        matrix = buffer[:n]
        has = np.zeros(n, dtype=bool)
        if previous is not None and previous.vectors is not None and previous.vectors.shape[1] == dim:
            old = [(i, previous.position.get(t.turn_id)) for i, t in enumerate(self.turns)]
            pairs = np.array([(i, j) for i, j in old if j is not None and previous.has_vector[j]], dtype=np.int64).reshape(-1, 2)
            matrix[pairs[:, 0]] = previous.vectors[pairs[:, 1]]
            has[pairs[:, 0]] = True
        missing = [self.turns[i].turn_id for i in np.flatnonzero(~has)]
        if missing:
            for turn_id, vec in turn_vectors.vectors_of(user_id, missing).items():
                i = self.position[turn_id]
                matrix[i] = vec
                has[i] = True
        self.vectors, self.has_vector, self.vector_buffer = matrix, has, buffer

    def vectors_for(self, turn_vectors, user_id: str, positions) -> dict[int, np.ndarray]:
        """float32 vectors of the turns at ``positions``; a turn whose vector was not stored when the matrix
        was loaded (its segment was archived, its vectors not yet written) is fetched once more."""
        if self.vectors is None:
            return {}
        positions = [int(i) for i in positions]
        absent = [self.turns[i].turn_id for i in positions if not self.has_vector[i]]
        if absent and turn_vectors is not None:
            for turn_id, vec in turn_vectors.vectors_of(user_id, absent).items():
                i = self.position[turn_id]
                self.vectors[i] = vec
                self.has_vector[i] = True
        return {i: self.vectors[i].astype(np.float32) for i in positions if self.has_vector[i]}

    def vector_rows(self, turn_vectors, user_id: str, positions) -> np.ndarray | None:
        """``vectors_for`` as one float32 matrix, a row per position (zeros where a turn has no vector), read
        in one take: recall's pool of ~100 turns row by row cost ~0.7 ms of every query."""
        if self.vectors is None:
            return None
        positions = np.asarray([int(i) for i in positions], dtype=np.int64)
        if turn_vectors is not None and positions.size and not self.has_vector[positions].all():
            self.vectors_for(turn_vectors, user_id, positions.tolist())  # fetches the ones missing
        rows = self.vectors[positions].astype(np.float32)
        rows[~self.has_vector[positions]] = 0.0
        return rows

    def search(self, query_terms: list[str], limit: int, k1: float = 1.2, b: float = 0.75,
               context: float = 0.0, context2: float = 0.0) -> list[tuple[int, float]]:
        """BM25 over the turns, best first. ``context`` > 0: each turn's document also holds the words of
        the turn before it in the same exchange, at this weight — a reply ("They loved the dinosaurs!") is
        about what it answers ("How were the kids at the museum?"). ``context2`` > 0: and the words of the
        turn two back, when all three are one exchange — the speaker's own turn before the other's question
        ("I loved 'Becoming Nicole'" → "What did it teach you?" → "Self-acceptance"), which a reply to
        a follow-up question is about as much as the question itself. Worked out from the same postings."""
        n = len(self.turns)
        if not n or not query_terms:
            return []
        scores = np.zeros(n, dtype=np.float64)
        carry = n > 1 and (context > 0 or context2 > 0)
        if carry:
            follows = np.zeros(n, dtype=bool)  # follows[i]: turn i answers turn i-1 (same exchange)
            follows[1:] = self.same_exchange[: n - 1]
            follows2 = np.zeros(n, dtype=bool)  # follows2[i]: turns i-2, i-1 and i are one exchange
            follows2[2:] = follows[2:] & follows[1:-1]
            own = self.lengths[:n].astype(np.float64)
            lengths = own.copy()
            lengths[1:] += context * np.where(follows[1:], own[:-1], 0.0)
            lengths[2:] += context2 * np.where(follows2[2:], own[:-2], 0.0)
            avg = float(lengths.mean()) or 1.0
            tf_ctx = np.zeros(n, dtype=np.float64)
        else:
            lengths, avg = self.lengths[:n].astype(np.float64), self.avg
        norm = k1 * (1 - b + b * lengths / avg)
        for term in dict.fromkeys(query_terms):
            posting = self.postings.get(term)
            if posting is None:
                continue
            idx, tf = posting
            if carry:
                tf_ctx[:] = 0.0
                tf_ctx[idx] = tf
                for step, weight, chained in ((1, context, follows), (2, context2, follows2)):
                    if weight <= 0:
                        continue
                    nxt = idx + step
                    keep = nxt < n
                    nxt, carried = nxt[keep], tf[keep]
                    keep = chained[nxt]
                    tf_ctx[nxt[keep]] += weight * carried[keep]
                docs = np.flatnonzero(tf_ctx)
                term_tf = tf_ctx[docs]
            else:
                docs, term_tf = idx, tf.astype(np.float64)
            df = docs.size
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            scores[docs] += idf * term_tf * (k1 + 1) / (term_tf + norm[docs])
        nonzero = np.flatnonzero(scores)
        if not nonzero.size:
            return []
        top = nonzero[np.argsort(-scores[nonzero], kind="stable")[:limit]]
        return [(int(i), float(scores[i])) for i in top]


def unified_search(index: "UserTurns", query_terms: list[str], limit: int, k1: float = 1.2,
                   b: float = 0.75) -> list[tuple[int, float]]:
    """BM25 over one collection of documents: each short turn whole and each passage of a long turn
    (nodes.retrieval.passage_index), with shared statistics; a long turn scores as its best passage. Turns
    best first, as ``UserTurns.search``. Scored apart, a long turn's passages would count as a channel of
    their own that short turns lack, and replies would crowd out the short turns that hold most facts."""
    passages = index.passages
    n = len(index.turns)
    if not n or not query_terms or not len(passages.doc_turn):
        return index.search(query_terms, limit, k1, b)
    is_long = np.zeros(n, dtype=bool)
    is_long[passages.doc_turn] = True
    short_lengths = index.lengths[:n].astype(np.float64)
    pass_lengths = passages.lengths.astype(np.float64)
    docs = int((~is_long).sum()) + len(pass_lengths)
    avg = (float(short_lengths[~is_long].sum()) + float(pass_lengths.sum())) / max(docs, 1) or 1.0
    norm_turn = k1 * (1 - b + b * short_lengths / avg)
    norm_pass = k1 * (1 - b + b * pass_lengths / avg)
    turn_scores = np.zeros(n, dtype=np.float64)
    pass_scores = np.zeros(len(pass_lengths), dtype=np.float64)
    for term in dict.fromkeys(query_terms):
        t_post, p_post = index.postings.get(term), passages.postings.get(term)
        t_idx = t_tf = None
        if t_post is not None:
            keep = ~is_long[t_post[0]]
            t_idx, t_tf = t_post[0][keep], t_post[1][keep].astype(np.float64)
        df = (t_idx.size if t_idx is not None else 0) + (p_post[0].size if p_post is not None else 0)
        if not df:
            continue
        idf = math.log(1 + (docs - df + 0.5) / (df + 0.5))
        if t_idx is not None and t_idx.size:
            turn_scores[t_idx] += idf * t_tf * (k1 + 1) / (t_tf + norm_turn[t_idx])
        if p_post is not None:
            p_idx, p_tf = p_post[0], p_post[1].astype(np.float64)
            pass_scores[p_idx] += idf * p_tf * (k1 + 1) / (p_tf + norm_pass[p_idx])
    np.maximum.at(turn_scores, passages.doc_turn, pass_scores)
    nonzero = np.flatnonzero(turn_scores)
    if not nonzero.size:
        return []
    top = nonzero[np.argsort(-turn_scores[nonzero], kind="stable")[:limit]]
    return [(int(i), float(turn_scores[i])) for i in top]


_NAME_PREFIX = re.compile(r"^\s*([^:：\n\[\]]{1,40}?)\s*[:：]\s*")


def _vector_buffer(rows: int, dim: int) -> np.ndarray:
    """A zeroed float16 matrix for ``rows`` turns' vectors and those likely to come (~5 % more, at least a
    few dozen segments' turns), so live chat's top-ups fill spare rows instead of copying the matrix."""
    return np.zeros((rows + max(256, rows // 20), dim), dtype=np.float16)


def _passage_points(turns: "TurnTable", start: int, token_counts: np.ndarray, user_id: str,
                    cut: tuple[int, int], read: Sequence[LongTurnTerms]) -> dict[str, tuple[int, int]]:
    """Passage point id -> (turn index, passage number) for the long ones among ``turns`` (indices from ``start``)."""
    size, least = cut
    if not size or not len(turns):
        return {}
    out: dict[str, tuple[int, int]] = {}
    turn_ids = turns.column("turn_id")
    for k in np.flatnonzero(token_counts > least):
        for p in range(len(read[k].passages)):
            out[passage_point_id(user_id, turn_ids[k], p)] = (start + int(k), p)
    return out


def speaker_labels(turns: list[Turn]) -> tuple[str, ...]:
    """Who said each turn. Transcripts often keep the speaker's name in the text ("Caroline: …",
    "キャロライン：…"); a prefix that starts at least 3 turns names a speaker, else the turn's own speaker role."""
    return labels_from(name_prefixes(turns), turns)


def name_prefixes(turns: list[Turn]) -> tuple[str, ...]:
    texts = turns.column("text") if isinstance(turns, TurnTable) else [t.text for t in turns]
    return tuple((m.group(1).strip() if (m := _NAME_PREFIX.match(text)) else "") for text in texts)


def _speaker_prefixes(prefix_counts: Counter) -> set[str]:
    """The prefixes that name a speaker: seen at least 3 times, at most 3 words."""
    return {p for p, c in prefix_counts.items() if p and c >= 3 and len(p.split()) <= 3}


def labels_from(prefixes: Sequence[str], turns, prefix_counts: Counter | None = None) -> tuple[str, ...]:
    """Each turn's label. ``prefix_counts``: the counts to judge prefixes by, when ``prefixes`` are only
    some of the turns (a top-up); by default their own."""
    frequent = _speaker_prefixes(prefix_counts if prefix_counts is not None else Counter(prefixes))
    speakers = turns.column("speaker") if isinstance(turns, TurnTable) else [t.speaker for t in turns]
    return tuple(p if p in frequent else speaker for p, speaker in zip(prefixes, speakers))


def write_stamp(archive, user_id: str) -> int | None:
    """What an in-process index of ``user_id`` compares to know nothing was written since it last looked:
    the archive's per-user stamp, else its global write generation, else None (always look)."""
    if hasattr(archive, "generation_of"):
        return archive.generation_of(user_id)
    return getattr(archive, "generation", None)


def _vectors_key(turn_vectors) -> str:
    """Which vectors a snapshot's matrix holds: the turn-vector collection (named by embedder and size)."""
    if turn_vectors is None:
        return ""
    return f"{getattr(turn_vectors, 'collection', '')}/{getattr(turn_vectors, 'dim', 0)}"


# A top-up of more new turns than this looks for reads the archive kept (another process archived them).
_LOOK_UP_FROM = 64


class TurnIndex:
    """The per-user indexes of one process, at most ``max_users`` of them (least recently used go
    first: at 10,000 turns a user's index holds ~15 MB, and a server sees many users)."""

    def __init__(self, max_users: int = 128, passage_cut: tuple[int, int] = (0, 0), snapshots=None,
                 snapshot_min_turns: int = 0) -> None:
        """``passage_cut``: (window tokens, least turn tokens) of long turns' passages; (0, 0) for none.
        ``snapshots``: the data directory's stores.recall_snapshots.SnapshotFiles, where users' built indexes are
        kept (``keep_snapshot``) and loaded by a build; ``snapshot_min_turns``: the least turns worth a snapshot
        (0: none are written)."""
        self.passage_cut = passage_cut
        self.snapshots = snapshots
        self.snapshot_min_turns = snapshot_min_turns
        self._snapshot_turns: dict[str, int] = {}  # user -> turns in their snapshot, as last written or read
        self.snapshots_loaded = 0
        self.snapshots_written = 0
        self.snapshots_dropped = 0  # found stale or unreadable, removed
        self._users: OrderedDict[str, UserTurns] = OrderedDict()
        self._lock = threading.Lock()  # the table of users; held for lookups only
        # One lock per user for building or topping up that user's index: a cold build of a user with long
        # replies takes seconds, and must not hold up the other users' recalls meanwhile.
        self._user_locks = UserLocks()
        self.max_users = max_users
        self.rebuilds = 0  # full builds from the archive (a new user, an erase, turns that arrived out of order)
        self.extensions = 0  # top-ups with the turns archived since
        # Turns read from their text (then kept in the archive), and turns whose kept read was decoded instead:
        # what a fresh process's first builds cost (nodes.retrieval.turn_reads).
        self.reads_made = 0
        self.reads_decoded = 0
        self.kept_reads = True  # False: read every text, as before reads were kept (bench.cold_start's baseline)

    def get(self, archive, user_id: str, turn_vectors=None) -> UserTurns:
        """``turn_vectors``: the turn-vector store; when given, the index also holds the turns' vectors."""
        with self._user_locks.hold(user_id):
            with self._lock:
                index = self._users.get(user_id)
            # Read before counting: a write landing meanwhile leaves an older stamp, so the next call re-checks.
            generation = write_stamp(archive, user_id)
            if index is None or generation is None or index.generation != generation:
                count = archive.counts(user_id, which=("turns",))["turns"]
                if index is None or len(index.turns) != count:
                    index = self._refreshed(archive, user_id, turn_vectors, index, count)
                index.generation = generation
            if turn_vectors is not None and index.vectors is None:
                index.load_vectors(turn_vectors, user_id)
            with self._lock:
                self._users[user_id] = index
                self._users.move_to_end(user_id)
                while len(self._users) > self.max_users:
                    gone, _ = self._users.popitem(last=False)
                    self._user_locks.drop(gone)  # kept while someone holds it
            return index

    def _refreshed(self, archive, user_id: str, turn_vectors, index: UserTurns | None, count: int) -> UserTurns:
        incremental = hasattr(archive, "turns_since")
        if index is not None and incremental and count > len(index.turns):
            new, last = archive.turns_since(user_id, index.last_seq)
            # Appending is exact when nothing went (the counts add up) and the new turns come after every
            # indexed one in conversation order; a back-filled history or an erase rebuilds.
            if len(index.turns) + len(new) == count and (not index.turns or not new or new[0].ts >= index.turns[-1].ts):
                # A top-up after a write reads its few turns and keeps the reads; one that catches up on many
                # (archived by another process) looks for reads kept there first.
                reads = self._reads(archive, user_id, new, only_these=None if len(new) <= _LOOK_UP_FROM else True)
                extended = index.extended(new, turn_vectors, user_id, reads)
                extended.last_seq = last
                with self._lock:
                    self.extensions += 1
                return extended
        if hasattr(archive, "turn_columns"):
            columns, last = archive.turn_columns(user_id)
            turns = TurnTable(tuple(tuple(columns[f]) for f in IndexedTurn._fields))
        elif incremental:
            turns, last = archive.turns_since(user_id, 0)
        else:
            turns, last = archive.all_turns(user_id), 0
        rebuilt = self._from_snapshot(archive, user_id, turns, turn_vectors) if index is None else None
        if rebuilt is None:
            rebuilt = UserTurns.build(turns, self.passage_cut, self._reads(archive, user_id, turns))
            with self._lock:
                self.rebuilds += 1
        rebuilt.last_seq = last
        if turn_vectors is not None and rebuilt.vectors is None:
            rebuilt.load_vectors(turn_vectors, user_id, index)
        return rebuilt

    def _from_snapshot(self, archive, user_id: str, turns: list[Turn], turn_vectors) -> UserTurns | None:
        """The user's index from their snapshot (nodes.retrieval.index_snapshot) and the turns archived after it;
        None when there is none that fits ``turns`` (a stale or unreadable one is removed and logged)."""
        from . import index_snapshot
        from .turn_reads import reader

        path = self.snapshots.existing(user_id) if self.snapshots is not None and turns else None
        if path is None:
            return None
        table = TurnTable.of(turns)
        try:
            loaded = index_snapshot.load(path, user_id, reader(self.passage_cut), table, self.passage_cut,
                                         _vectors_key(turn_vectors))
        except index_snapshot.UNREADABLE as exc:
            log.warning("recall index snapshot of a user unreadable, building from the archive: %s", exc)
            loaded = None
        if loaded is None:
            self.snapshots.remove(user_id, (TURNS,))
            with self._lock:
                self.snapshots_dropped += 1
                self._snapshot_turns.pop(user_id, None)
            return None
        kept = len(loaded.turns)
        rest = turns[kept:]
        if rest:  # archived since the snapshot was written: added as a top-up adds them
            loaded = loaded.extended(rest, turn_vectors if loaded.vectors is not None else None, user_id,
                                     self._reads(archive, user_id, rest, only_these=True))
        with self._lock:
            self.snapshots_loaded += 1
            self._snapshot_turns[user_id] = kept
        return loaded

    def worth_a_snapshot(self, index: UserTurns) -> bool:
        return self.snapshots is not None and bool(self.snapshot_min_turns) and len(index.turns) >= self.snapshot_min_turns

    def keep_snapshot(self, user_id: str, index: UserTurns, turn_vectors=None) -> bool:
        """Write ``index`` (the user's current one) as their snapshot when it is worth one: at least
        ``snapshot_min_turns`` turns, and none kept yet or a tenth more turns than the one kept. Called at write
        time (nodes.retrieval.warm), never inside a recall. True when written."""
        from . import index_snapshot
        from .turn_reads import reader

        files, n = self.snapshots, len(index.turns)
        if not self.worth_a_snapshot(index):
            return False
        removals = files.removals  # before the check below: an erasure after it makes the write a no-op
        with self._lock:
            if self._users.get(user_id) is not index:  # forgotten (erased) or replaced since
                return False
            kept = self._snapshot_turns.get(user_id)
        wanted, kept = index_snapshot.due(files.existing(user_id), n, kept, "turns")
        if not wanted:
            with self._lock:
                self._snapshot_turns[user_id] = kept
            return False
        arrays = index_snapshot.arrays_of(index, user_id, reader(self.passage_cut), _vectors_key(turn_vectors))
        try:
            if not files.write(user_id, lambda handle: index_snapshot.write(handle, arrays), removals):
                return False
        except OSError as exc:  # a full disk: the index is built as before next time
            log.warning("recall index snapshot not written: %s", exc)
            return False
        with self._lock:
            self.snapshots_written += 1
            self._snapshot_turns[user_id] = n
        return True

    def _reads(self, archive, user_id: str, turns: list[Turn], only_these: bool | None = False) -> TurnReads:
        """``turns`` read: from the reads the archive keeps where it has them (``only_these``: asking for these
        turns only; None: not asking), the rest read now and kept for the next process."""
        ids = [t.turn_id for t in turns]
        texts = [t.text for t in turns]
        stored = {} if only_these is None or not self.kept_reads else stored_reads(archive, user_id, ids, self.passage_cut, only_these)
        reads = read_turns(texts, self.passage_cut, stored)
        keep_reads(archive, user_id, ids, texts, self.passage_cut, reads)
        with self._lock:
            self.reads_made += len(reads.fresh)
            self.reads_decoded += len(turns) - len(reads.fresh)
        return reads

    def summary(self) -> dict:
        """What this process's index holds and what building it cost (graphs.inspect.tier_stats)."""
        with self._lock:
            return {"users": len(self._users), "rebuilds": self.rebuilds, "top_ups": self.extensions,
                    "turns_read": self.reads_made, "reads_decoded": self.reads_decoded,
                    "snapshots_loaded": self.snapshots_loaded, "snapshots_written": self.snapshots_written,
                    "snapshots_dropped": self.snapshots_dropped}

    def forget(self, user_id: str) -> None:
        """Drop ``user_id``'s index (erasure): after any build of it in progress, so none puts it back."""
        with self._user_locks.hold(user_id):
            with self._lock:
                self._users.pop(user_id, None)
                self._snapshot_turns.pop(user_id, None)
            # Its id goes too (an erased user leaves nothing here); a get() already waiting on this lock
            # takes the user's next one and reads the archive after the erase, like any later one.
            self._user_locks.drop(user_id, held=True)
