"""The GraphStore logic both graph adapters share: validation, statements + parameters, result shaping.

An adapter only says how to run one statement (``_read``) and how to run a few statements as one
unit of work (``_write``); everything a protocol method means lives here, once, so ladybug and Neo4j
cannot drift apart.
"""

from __future__ import annotations

import math
from collections import defaultdict
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Mapping, Sequence

from . import cypher, cypher_backup, ids
from .errors import InvalidInput
from .models import GraphCounts
from .graph_knowledge import GraphKnowledge
from .graph_memories import GraphMemoryChanges
from .graph_repair import GraphRepair
from .graph_values import (  # noqa: F401 - adapters and tests import these here
    CONCEPT_FAN, _NO_USER, Params, Rows, Step, _concept_names, _fan, _finite, _limit, _segment_ids, _single_count,
)
from .records import KnowledgeNode, LinkedSegment  # noqa: F401 - their home is records
from .settings import CHARACTERS


class CypherGraph(GraphKnowledge, GraphMemoryChanges, GraphRepair):
    """GraphStore over any engine that runs the statements of :mod:`lumina_memory.stores.cypher`."""

    backend: str = ""
    # True when the adapter's _exclusive() makes "is the segment new?" and the write one step, so a new
    # segment's edges may be CREATEd instead of MERGEd (see cypher.NEW_SEGMENT). Neo4j keeps MERGE: other
    # processes may write, and its MERGE does not slow down with the table.
    create_new_edges: bool = False
    # The most parameter bytes (UTF-8 of their JSON) one knowledge statement carries; None = no bound. Lists
    # longer than that are sent as several statements of the same unit of work (see Neo4jGraph: FalkorDB).
    max_params_bytes: int | None = None

    def _exclusive(self) -> AbstractContextManager[Any]:
        """Held around a segment's read-check-write; nothing by default."""
        return nullcontext()

    # --- what an adapter provides --------------------------------------------------------------
    def _read(self, query: str, params: Mapping[str, Any]) -> Rows:
        """Run one read statement; rows as dicts keyed by the RETURN aliases."""
        raise NotImplementedError

    def _write(self, steps: Sequence[Step]) -> list[Rows]:
        """Run statements in order, atomically where the engine has transactions; rows per step."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # --- GraphStore ----------------------------------------------------------------------------
    def upsert_segment(
        self,
        user_id: str,
        segment_id: str,
        characters: Sequence[str],
        concepts: Sequence[str],
        summary: str,
        ts: float,
        importance: float,
    ) -> None:
        with self._exclusive():
            self._write(self._segment_steps(
                user_id, LinkedSegment(segment_id, characters, concepts, summary, ts, importance, ())))

    def upsert_linked_segment(
        self,
        user_id: str,
        segment_id: str,
        characters: Sequence[str],
        concepts: Sequence[str],
        summary: str,
        ts: float,
        importance: float,
        neighbours: Sequence[tuple[str, float]],
    ) -> None:
        """``upsert_segment`` then ``link_segments``, as one unit of work (one commit)."""
        with self._exclusive():
            steps = self._segment_steps(
                user_id, LinkedSegment(segment_id, characters, concepts, summary, ts, importance, neighbours))
            steps += self._link_steps(user_id, segment_id, neighbours)
            self._write(steps)

    def upsert_linked_segments(self, user_id: str, segments: Sequence["LinkedSegment"]) -> None:
        """``upsert_linked_segment`` for many, in order, as one unit of work (one commit): a
        transcript batch closes several segments, and a later one may link to an earlier one."""
        if not segments:
            return
        if len({s.segment_id for s in segments}) != len(segments):
            raise InvalidInput("segments", "a segment id appears twice in one batch")
        with self._exclusive():
            ids.validate_id(user_id, "user_id")
            wanted = [ids.validate_id(s.segment_id, "segment_id") for s in segments]
            owners: dict[str, set[str]] = defaultdict(set)
            for r in self._read(cypher.SEGMENT_OWNERS_OF_MANY, {"segment_ids": wanted}):
                owners[str(r["id"])].add(str(r["user_id"]))
            if self.create_new_edges and not owners:
                self._write(self._new_segments_steps(user_id, segments))
                return
            steps: list[Step] = []
            for s in segments:
                steps += self._segment_steps(user_id, s, owners=owners.get(s.segment_id, set()))
                steps += self._link_steps(user_id, s.segment_id, s.neighbours)
            self._write(steps)

    def _new_segments_steps(self, user_id: str, segments: Sequence["LinkedSegment"]) -> list[Step]:
        """The batch form of ``_segment_steps`` + ``_link_steps`` for segments that do not exist yet:
        the same checks, the same nodes and edges, one statement per kind for the whole batch."""
        rows: list[Params] = []
        participants: list[Params] = []
        mentions: list[Params] = []
        links: list[Params] = []
        for s in segments:
            chars, concept_rows = self._checked(user_id, s.segment_id, s.characters, s.concepts, s.summary)
            rows.append({"id": s.segment_id, "summary": s.summary, "ts": _finite(s.ts, "ts"),
                         "importance": _finite(s.importance, "importance")})
            participants += [{"segment_id": s.segment_id, "character": c} for c in chars]
            mentions += [{"segment_id": s.segment_id, **c} for c in concept_rows]
            links += [{"segment_id": s.segment_id, **nb} for nb in self._link_rows(user_id, s.segment_id, s.neighbours)]
        params: Params = {"user_id": user_id}
        # An empty list is skipped, not sent: ladybug cannot type an empty list of maps.
        steps: list[Step] = [(cypher.NEW_SEGMENTS, {**params, "segments": rows})]
        for query, batch in ((cypher.NEW_PARTICIPANTS_OF_MANY, participants), (cypher.NEW_MENTIONS_OF_MANY, mentions),
                             (cypher.LINK_MANY_SEGMENTS, links)):
            if batch:
                steps.append((query, {**params, "rows": batch}))
        return steps

    def _checked(self, user_id: str, segment_id: str, characters: Sequence[str], concepts: Sequence[str],
                 summary: str) -> tuple[list[str], list[Params]]:
        """Validated characters and concept rows ({id, name}) of one segment."""
        ids.validate_id(user_id, "user_id")
        ids.validate_id(segment_id, "segment_id")
        if isinstance(characters, str):
            raise InvalidInput("characters", "must be a list of character ids, not a single string")
        chars = list(dict.fromkeys(characters))
        unknown = [c for c in chars if c not in CHARACTERS]
        if unknown:
            raise InvalidInput("characters", f"unknown {unknown[:3]!r}; expected some of {list(CHARACTERS)}")
        if not isinstance(summary, str):
            raise InvalidInput("summary", f"must be a string, got {type(summary).__name__}")
        names = _concept_names(concepts)
        return chars, [{"id": ids.concept_id(user_id, n), "name": n} for n in names]

    def _segment_steps(self, user_id: str, segment: "LinkedSegment", owners: set[str] | None = None) -> list[Step]:
        """The segment's node and its edges (not its links). ``owners``: who already has the segment id
        (read here when not given)."""
        segment_id, characters, concepts, summary, ts, importance, _neighbours = segment
        chars, concept_rows = self._checked(user_id, segment_id, characters, concepts, summary)
        seg: Params = {"user_id": user_id, "segment_id": segment_id}
        if owners is None:
            owners = {str(r["user_id"]) for r in self._read(cypher.SEGMENT_OWNERS, seg)}
        # Segment ids are uuid5 of the user, so a clash means a caller bug; refusing beats silently
        # moving another user's segment (Neo4j) or a raw primary-key error (ladybug).
        if owners - {user_id}:
            # Worded as "not found": a refusal must not confirm that another user has the id (S7).
            raise InvalidInput("segment_id", f"{segment_id!r} not found for this user (segment ids derive from their user)")
        new = not owners and self.create_new_edges
        steps: list[Step] = [
            (
                cypher.NEW_SEGMENT if new else cypher.UPSERT_SEGMENT,
                {**seg, "summary": summary, "ts": _finite(ts, "ts"), "importance": _finite(importance, "importance")},
            ),
        ]
        if owners:  # a re-upsert: edges the segment no longer has go (a new one has none to drop)
            steps += [
                (cypher.DROP_STALE_PARTICIPANTS, {**seg, "characters": chars}),
                (cypher.DROP_STALE_MENTIONS, {**seg, "concept_ids": [c["id"] for c in concept_rows]}),
            ]
        # UNWIND over an empty list is a no-op everywhere, but ladybug cannot type an empty list
        # of maps: skip the statement instead of sending one.
        if chars:
            steps.append((cypher.NEW_PARTICIPANTS if new else cypher.ADD_PARTICIPANTS, {**seg, "characters": chars}))
        if concept_rows:
            steps.append((cypher.NEW_MENTIONS if new else cypher.ADD_MENTIONS, {**seg, "concepts": concept_rows}))
        return steps

    def link_segments(self, user_id: str, segment_id: str, neighbours: Sequence[tuple[str, float]]) -> None:
        steps = self._link_steps(user_id, segment_id, neighbours)
        if steps:
            self._write(steps)

    def _link_steps(self, user_id: str, segment_id: str, neighbours: Sequence[tuple[str, float]]) -> list[Step]:
        rows = self._link_rows(user_id, segment_id, neighbours)
        if not rows:
            return []
        return [(cypher.LINK_SEGMENTS, {"user_id": user_id, "segment_id": segment_id, "neighbours": rows})]

    def _link_rows(self, user_id: str, segment_id: str, neighbours: Sequence[tuple[str, float]]) -> list[Params]:
        """Validated {id, score} rows of the segment's links: no self-loop, each neighbour once (best score)."""
        ids.validate_id(user_id, "user_id")
        ids.validate_id(segment_id, "segment_id")
        best: dict[str, float] = {}
        for item in neighbours:
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise InvalidInput("neighbours", f"items must be (segment_id, score) pairs, got {item!r}")
            other = ids.validate_id(item[0], "neighbours")
            score = _finite(item[1], "neighbours.score")
            # A self-loop says nothing; a duplicate keeps its best score (one MERGE per edge, since
            # MERGE of the same key twice in one statement differs between engines).
            if other != segment_id and score >= best.get(other, -math.inf):
                best[other] = score
        return [{"id": k, "score": v} for k, v in best.items()]

    def associated(self, user_id: str, segment_ids: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """ASSOCIATED neighbours of the seeds (not the seeds), best link score first, ties by id."""
        ids.validate_id(user_id, "user_id")
        seeds = _segment_ids(segment_ids)
        if not seeds or not _limit(limit):
            return []
        best: dict[str, float] = {}
        for r in self._neighbour_rows(seeds):
            # A neighbour must be this user's node (links never cross users; this makes it impossible).
            if r["owner"] != user_id or r["id"] in seeds:
                continue
            score = float(r["score"])
            if score > best.get(r["id"], -math.inf):
                best[str(r["id"])] = score
        return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]

    def _neighbour_rows(self, seeds: list[str]) -> Rows:
        """Rows (id, owner, score) of the seeds' ASSOCIATED neighbours; adapters may plan it their way."""
        return self._read(cypher.ASSOCIATED_NEIGHBOURS, {"segment_ids": seeds})

    def segments_for_concepts(self, user_id: str, concepts: Sequence[str], limit: int) -> list[tuple[str, int]]:
        """Segments mentioning the concepts: more concepts matched first, then more important, newer, id."""
        ids.validate_id(user_id, "user_id")
        names = _concept_names(concepts)
        if not names or not _limit(limit):
            return []
        # Concepts are looked up by their per-user id, so another user's concept of the same name
        # is a different node and can never match; the owner check is a second wall.
        hits: dict[str, int] = defaultdict(int)
        sort_key: dict[str, tuple[float, float]] = {}
        for concept_id in dict.fromkeys(ids.concept_id(user_id, n) for n in names):
            for r in self._read(cypher.SEGMENTS_FOR_CONCEPT, {"concept_id": concept_id, "fan": _fan(limit)}):
                if r["owner"] != user_id:
                    continue
                seg = str(r["id"])
                hits[seg] += 1
                sort_key[seg] = (float(r["importance"] or 0.0), float(r["ts"] or 0.0))
        ranked = sorted(hits, key=lambda s: (-hits[s], -sort_key[s][0], -sort_key[s][1], s))
        return [(s, hits[s]) for s in ranked[:limit]]

    def prepare_recall_reads(self, limit: int) -> None:
        """Run the graph channel's reads once, on an id no user has: an engine that compiles a statement on its
        first use (ladybug: ~6 ms each, and its statement cache is keyed by the parameters' types, hence the
        recall's own fan) does it now, not inside a user's first recall after the process started. The
        statements go straight to the engine: through ``segments_for_concepts`` the id would be derived by
        ``ids.concept_id``, whose cache an open that just finished an erasure must leave empty."""
        if not _limit(limit):
            return
        self._read(cypher.SEGMENTS_FOR_CONCEPT, {"concept_id": _NO_USER, "fan": _fan(limit)})
        self._neighbour_rows([_NO_USER])

    def concepts_of(self, user_id: str, segment_ids: Sequence[str]) -> dict[str, list[str]]:
        """Every requested id is a key (an unknown or foreign segment maps to [])."""
        ids.validate_id(user_id, "user_id")
        wanted = _segment_ids(segment_ids)
        found: dict[str, list[str]] = {s: [] for s in wanted}
        if wanted:
            for r in self._read(cypher.CONCEPTS_OF, {"user_id": user_id, "segment_ids": wanted}):
                found[str(r["id"])].append(str(r["name"]))
        return found

    def counts(self, user_id: str | None = None) -> GraphCounts:
        if user_id is None:
            node_q, edge_q, params = cypher.COUNT_NODES_ALL, cypher.COUNT_EDGES_ALL, {}
        else:
            ids.validate_id(user_id, "user_id")
            node_q, edge_q, params = cypher.COUNT_NODES_USER, cypher.COUNT_EDGES_USER, {"user_id": user_id}
        return GraphCounts(
            nodes={label: _single_count(self._read(q, params)) for label, q in node_q.items()},
            edges={kind: _single_count(self._read(q, params)) for kind, q in edge_q.items()},
        )

    def segments_per_user(self) -> dict[str, int]:
        """user_id -> Segment nodes held (doctor and stats compare it with the archive)."""
        return {r["user_id"]: int(r["n"]) for r in self._read(cypher.SEGMENTS_PER_USER, {})}

    def delete_user(self, user_id: str) -> int:
        """Remove the user's User, Segment, Concept and Knowledge nodes with all their edges; nodes removed."""
        ids.validate_id(user_id, "user_id")
        params = {"user_id": user_id}
        # Counted in the same unit of work as the deletes, so the number matches what went away.
        counted = [(cypher.COUNT_NODES_USER[label], params) for label in ("User", "Segment", "Concept", "Knowledge")]
        results = self._write(
            [
                *counted,
                (cypher.DELETE_USER_KNOWLEDGE, params),
                (cypher.DELETE_USER_CONCEPTS, params),
                (cypher.DELETE_USER_SEGMENTS, params),
                (cypher.DELETE_USER_NODE, params),
            ]
        )
        return sum(_single_count(rows) for rows in results[: len(counted)])

    # --- backups and erasure (L10, L11) -------------------------------------------------------------
    def dump(self) -> dict[str, Rows]:
        """Every node and edge, by kind (see stores.cypher_backup.DUMP); each row names its user."""
        return {kind: self._read(query, {}) for kind, query in cypher_backup.DUMP.items()}

    def load(self, rows: Mapping[str, Rows], batch: int = 500) -> int:
        """Write rows of ``dump`` back (MERGE: loading twice changes nothing); returns rows written. A batch
        goes as several statements past ``max_params_bytes`` (FalkorDB's Bolt endpoint dies on long ones)."""
        n = 0
        for kind, query in cypher_backup.LOAD.items():
            items = list(rows.get(kind, []))
            for start in range(0, len(items), batch):
                for group in self._packed(items[start : start + batch]):
                    self._write([(query, {"rows": group})])
            n += len(items)
        return n

    def rewrite(self) -> None:
        """Make deleted nodes leave the raw files; a server (Neo4j) manages its own store files."""

    def raw_paths(self) -> list:
        return []

