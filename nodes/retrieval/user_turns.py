"""One user's recall index of archived turns: BM25 postings (Sudachi/English terms), conversation order,
segments, speakers, long turns' passages, and the turns' vectors.

The conversation order lets recall pack a hit with its neighbouring turns. The turns' vectors (float16, read once
from the turn-vector collection, carried over on a rebuild) are kept so MMR and near-duplicate checks never fetch
vectors per query: at 10,000 turns a user's matrix is 10 MB, and fetching 100+ vectors per query from the engine
cost more than the search itself. nodes.retrieval.turn_index keeps these per user and in step with the archive.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from lumina_memory.stores.lexical import B, K1, average, bm25, merged, norms, postings_of, ranked
from lumina_memory.stores.lexical_open import open_lexical
from lumina_memory.stores.models import Turn
from lumina_memory.stores.protocols import LexicalIndex
from lumina_memory.stores.records import passage_point_id, turn_point_id

from .passage_index import LongTurnTerms, PassageIndex
from .turn_reads import TurnReads, read_turns
from .turn_search import answer_context
from .turn_table import TurnTable, labels_from, name_prefixes, speaker_prefixes


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

    def replies_at_length(self, long_tokens: int) -> bool:
        """Whether the other side answers the user at length (half its turns or more are long turns, over
        ``long_tokens``; nodes.retrieval.channels.whose_turns). Made on first use for a ``long_tokens``, kept with
        this index object (an extended index is a new object)."""
        known = getattr(self, "_replies_at_length", None)
        if known is None or known[0] != long_tokens:
            theirs = self.token_counts[~self.said_by_user()] if len(self.token_counts) == len(self.turns) else []
            known = (long_tokens, bool(len(theirs)) and float(np.median(theirs)) > long_tokens)
            self._replies_at_length = known
        return known[1]

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
        if speaker_prefixes(prefix_counts) == speaker_prefixes(self.prefix_counts):
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
                buffer = vector_buffer(size, self.vectors.shape[1])
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
        buffer = vector_buffer(n, dim)
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
    def search(self, query_terms: list[str], limit: int, k1: float = K1, b: float = B,
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
        own = self.lengths[:n].astype(np.float64)
        if n > 1 and (context > 0 or context2 > 0):
            lengths, spread = answer_context(self.same_exchange, own, context, context2)
            avg = average(lengths)
        else:
            lengths, spread, avg = own, None, self.avg
        return ranked(bm25([(self.postings, norms(lengths, avg, k1, b), spread)], query_terms, n, k1)[0], limit)

    def lexical(self) -> LexicalIndex:
        """The turns' BM25 documents as the store layer's ``LexicalIndex``."""
        return open_lexical(self.postings, self.lengths[: len(self.turns)], self.avg)


def vector_buffer(rows: int, dim: int) -> np.ndarray:
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

