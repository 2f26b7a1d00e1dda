"""The GraphStore logic both graph adapters share: validation, statements + parameters, result shaping.

An adapter only says how to run one statement (``_read``) and how to run a few statements as one
unit of work (``_write``); everything a protocol method means lives here, once, so ladybug and Neo4j
cannot drift apart.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Mapping, Sequence

from . import cypher, cypher_backup, ids
from .errors import InvalidInput
from .models import GraphCounts
from .records import KnowledgeNode, LinkedSegment  # noqa: F401 - their home is records
from .settings import CHARACTERS

CONCEPT_FAN = 50  # segments read per query concept at most (see cypher.SEGMENTS_FOR_CONCEPT)

Params = dict[str, Any]
Step = tuple[str, Params]
Rows = list[dict[str, Any]]


def _finite(value: object, field: str) -> float:
    # NaN/inf would poison ORDER BY and are not storable on every backend (FalkorDB rejects inf).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(field, f"must be a finite number, got {value!r}")
    return float(value)


_NO_USER = "lumina-prepare-no-such-user"  # valid as a user and a segment id; never created


def _fan(limit: int) -> int:
    """Segments read per query concept for a lookup of ``limit`` segments (see cypher.SEGMENTS_FOR_CONCEPT)."""
    return max(CONCEPT_FAN, 10 * limit)


def _limit(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput("limit", f"must be a non-negative integer, got {value!r}")
    return value


def _segment_ids(values: Sequence[str], field: str = "segment_ids") -> list[str]:
    if isinstance(values, str):  # a bare string is a Sequence too; iterating it would yield letters
        raise InvalidInput(field, "must be a list of segment ids, not a single string")
    return list(dict.fromkeys(ids.validate_id(v, field) for v in values))


def _concept_names(values: Sequence[str]) -> list[str]:
    if isinstance(values, str):
        raise InvalidInput("concepts", "must be a list of names, not a single string")
    names: list[str] = []
    for name in values:
        if not isinstance(name, str):
            raise InvalidInput("concepts", f"names must be strings, got {type(name).__name__}")
        if name.strip():  # kept verbatim; only blank names are meaningless and skipped
            names.append(name)
    return list(dict.fromkeys(names))


def _relation_rows(relations: Sequence[tuple[str, str, str, float]]) -> dict[tuple[str, str, str], float]:
    """Validated relations keyed by (src, dst, kind); a relation listed twice or a memory related to
    itself is a caller's bug in the set it mirrors, and refused."""
    if isinstance(relations, (str, Mapping)):
        raise InvalidInput("relations", "must be a list of (src, dst, kind, score) tuples")
    rows: dict[tuple[str, str, str], float] = {}
    for item in relations:
        if not isinstance(item, (tuple, list)) or len(item) != 4:
            raise InvalidInput("relations", f"items must be (src, dst, kind, score), got {str(item)[:80]!r}")
        src = ids.validate_id(item[0], "relations.src")
        dst = ids.validate_id(item[1], "relations.dst")
        kind = item[2]
        if not isinstance(kind, str) or kind not in cypher.RELATION_EDGES:
            raise InvalidInput("relations.kind", f"{str(kind)[:40]!r}: expected one of {list(cypher.RELATION_KINDS)}")
        if src == dst:
            raise InvalidInput("relations", f"{src!r} cannot be related to itself")
        key = (src, dst, kind)
        if key in rows:
            raise InvalidInput("relations", f"{key!r} is listed twice")
        rows[key] = _finite(item[3], "relations.score")
    return rows


def _single_count(rows: Rows) -> int:
    return int(rows[0]["n"]) if rows else 0


def _knowledge_rows(nodes: Sequence[KnowledgeNode]) -> list[KnowledgeNode]:
    if isinstance(nodes, (str, Mapping)):
        raise InvalidInput("items", "must be a list of knowledge items")
    checked: dict[str, KnowledgeNode] = {}
    for node in nodes:
        if not isinstance(node, KnowledgeNode):
            raise InvalidInput("items", f"items must be KnowledgeNode, got {type(node).__name__}")
        item_id = ids.validate_id(node.item_id, "item_id")
        for field in ("subject", "attribute", "value", "polarity", "status"):
            value = getattr(node, field)
            if not isinstance(value, str) or not value:
                raise InvalidInput(field, "must be a non-empty string")
        if item_id in checked:
            raise InvalidInput("items", f"{item_id!r} is listed twice")
        checked[item_id] = node._replace(episode_ids=_segment_ids(node.episode_ids, "episode_ids"))
    return list(checked.values())


def _properties(node: KnowledgeNode) -> Params:
    return {"id": node.item_id, "subject": node.subject, "attribute": node.attribute, "value": node.value,
            "polarity": node.polarity, "status": node.status}


class CypherGraph:
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

    # --- knowledge items (issue 18) -------------------------------------------------------------------
    def _packed(self, rows: Sequence[Any]) -> list[list[Any]]:
        """``rows`` in consecutive groups whose JSON stays within ``max_params_bytes`` (one group: no bound)."""
        if self.max_params_bytes is None:
            return [list(rows)] if rows else []
        groups: list[list[Any]] = []
        size = 0
        for row in rows:
            n = len(json.dumps(row, ensure_ascii=False).encode()) + 2
            if not groups or size + n > self.max_params_bytes:
                groups.append([])
                size = 0
            groups[-1].append(row)
            size += n
        return groups

    def upsert_knowledge(self, user_id: str, items: Sequence[KnowledgeNode],
                         supersedes: Sequence[tuple[str, str]] = ()) -> int:
        """Make these items' Knowledge nodes and edges what the archive says, in one unit of work: the node's
        properties, a LEARNED_FROM edge to each of ``episode_ids`` (edges to other segments go), and of the
        SUPERSEDES edges touching the items exactly ``supersedes`` as (newer, older) pairs. A segment or item
        at the other end that is not this user's (or not in the graph yet) gets no edge. Idempotent: only
        what differs is written. Returns the items written."""
        ids.validate_id(user_id, "user_id")
        nodes = _knowledge_rows(items)
        if not nodes:
            return 0
        batch = [n.item_id for n in nodes]
        wanted_edges = set()
        for pair in supersedes:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise InvalidInput("supersedes", f"items must be (newer, older) pairs, got {str(pair)[:80]!r}")
            src, dst = ids.validate_id(pair[0], "supersedes"), ids.validate_id(pair[1], "supersedes")
            if src == dst or not ({src, dst} & set(batch)):
                raise InvalidInput("supersedes", f"({src!r}, {dst!r}) must join two items, one of them written here")
            wanted_edges.add((src, dst))
        properties = {n.item_id: _properties(n) for n in nodes}
        with self._exclusive():
            # Every item id is checked before anything is written.
            for ids_ in self._packed(batch):
                owners = {str(r["id"]): str(r["user_id"])
                          for r in self._read(cypher.KNOWLEDGE_OWNERS_OF_MANY, {"item_ids": ids_})}
                foreign = [i for i, owner in owners.items() if owner != user_id]
                if foreign:
                    # Worded as "not found", as for segments: a refusal must not confirm another user's id.
                    raise InvalidInput("item_id", f"{foreign[0]!r} not found for this user (item ids derive from their user)")
            # One unit of work per group of items (a single one without a bound on statements).
            by_id = {n.item_id: n for n in nodes}
            for group in self._packed([properties[i] for i in batch]):
                self._write(self._knowledge_steps(user_id, [by_id[p["id"]] for p in group], wanted_edges))
        return len(nodes)

    def _knowledge_steps(self, user_id: str, nodes: list[KnowledgeNode], wanted_edges: set[tuple[str, str]]) -> list[Step]:
        """The statements that make these items' nodes and the edges touching them what is wanted."""
        chunk = {n.item_id for n in nodes}
        params: Params = {"user_id": user_id, "item_ids": sorted(chunk)}
        have = {(str(r["id"]), str(r["segment_id"])) for r in self._read(cypher.KNOWLEDGE_SOURCES_OF, params)}
        want = {(n.item_id, seg) for n in nodes for seg in n.episode_ids}
        edges = {(str(r["src"]), str(r["dst"])) for query in (cypher.KNOWLEDGE_SUPERSEDES_FROM, cypher.KNOWLEDGE_SUPERSEDES_TO)
                 for r in self._read(query, params)}
        wanted = {(a, b) for a, b in wanted_edges if a in chunk or b in chunk}
        steps: list[Step] = [(cypher.UPSERT_KNOWLEDGE, {"user_id": user_id, "items": [_properties(n) for n in nodes]})]
        # Empty lists are not sent: ladybug cannot type an empty list of maps.
        for query, rows in (
            (cypher.DROP_LEARNED_FROM, [{"id": i, "segment_id": seg} for i, seg in sorted(have - want)]),
            (cypher.ADD_LEARNED_FROM, [{"id": i, "segment_id": seg} for i, seg in sorted(want - have)]),
            (cypher.DROP_SUPERSEDES, [{"src": a, "dst": b} for a, b in sorted(edges - wanted)]),
            (cypher.ADD_SUPERSEDES, [{"src": a, "dst": b} for a, b in sorted(wanted - edges)]),
        ):
            steps += [(query, {"user_id": user_id, "rows": group}) for group in self._packed(rows)]
        return steps

    def knowledge(self, user_id: str) -> list[dict[str, Any]]:
        """The user's Knowledge nodes by item id: properties, ``episode_ids`` (its LEARNED_FROM segments) and
        ``supersedes`` (the items it SUPERSEDES), both sorted."""
        ids.validate_id(user_id, "user_id")
        params = {"user_id": user_id}
        with self._exclusive():  # one state of the graph for the three reads
            nodes = self._read(cypher.KNOWLEDGE_NODES_OF_USER, params)
            sources = self._read(cypher.KNOWLEDGE_SOURCES_OF_USER, params)
            superseded = self._read(cypher.KNOWLEDGE_SUPERSEDES_OF_USER, params)
        out = {str(r["id"]): {"item_id": str(r["id"]), "subject": r["subject"], "attribute": r["attribute"],
                              "value": r["value"], "polarity": r["polarity"], "status": r["status"],
                              "episode_ids": [], "supersedes": []}
               for r in nodes}
        for r in sources:
            if r["owner"] == user_id and r["id"] in out:  # edges never cross users; this makes it impossible
                out[r["id"]]["episode_ids"].append(str(r["segment_id"]))
        for r in superseded:
            if r["owner"] == user_id and r["src"] in out:
                out[r["src"]]["supersedes"].append(str(r["dst"]))
        for node in out.values():
            node["episode_ids"].sort()
            node["supersedes"].sort()
        return [out[k] for k in sorted(out)]

    def delete_knowledge(self, user_id: str, item_ids: Sequence[str]) -> None:
        """Remove these Knowledge nodes of this user with their edges (forgotten items; missing ids and
        another user's are untouched)."""
        ids.validate_id(user_id, "user_id")
        wanted = [ids.validate_id(i, "item_ids") for i in item_ids]
        if wanted:
            with self._exclusive():
                self._write([(cypher.DELETE_KNOWLEDGE, {"user_id": user_id, "item_ids": group})
                             for group in self._packed(wanted)])

    # --- per-memory changes (the forgetting lifecycle, issue 17) --------------------------------------
    def delete_segments(self, user_id: str, segment_ids: Sequence[str], *, knowledge: bool = True) -> int:
        """Remove these Segment nodes of this user with all their edges (relations and LEARNED_FROM included),
        then the user's concepts that only they mentioned and, with ``knowledge``, the knowledge items only
        they supported (an episode erased from the record takes them; one the lifecycle forgets does not:
        the archive keeps the item and so does the graph). Returns Segment nodes removed (another user's ids
        and missing ones count 0 and stay untouched)."""
        ids.validate_id(user_id, "user_id")
        wanted = _segment_ids(segment_ids)
        if not wanted:
            return 0
        params: Params = {"user_id": user_id, "segment_ids": wanted}
        with self._exclusive():
            concept_ids = [str(r["id"]) for r in self._read(cypher.CONCEPT_IDS_OF, params)]
            item_ids = [str(r["id"]) for r in self._read(cypher.KNOWLEDGE_OF_SEGMENTS, params)] if knowledge else []
            steps: list[Step] = [(cypher.COUNT_SEGMENTS_OF, params), (cypher.DELETE_SEGMENTS_OF, params)]
            if concept_ids:
                steps.append((cypher.DELETE_UNMENTIONED_CONCEPTS, {"user_id": user_id, "concept_ids": concept_ids}))
            steps += [(cypher.DELETE_UNSOURCED_KNOWLEDGE, {"user_id": user_id, "item_ids": group})
                      for group in self._packed(item_ids)]
            return _single_count(self._write(steps)[0])

    def set_relations(self, user_id: str, relations: Sequence[tuple[str, str, str, float]]) -> int:
        """Make the user's memory relations exactly ``relations``: (src, dst, kind, score) with kind one of
        cypher.RELATION_KINDS. The archive holds the truth and this mirrors it, so relations not listed go.
        A relation whose ends are not both this user's segments is left out (not found, as anywhere else);
        returns how many are stored. Only what differs is written, in one unit of work."""
        ids.validate_id(user_id, "user_id")
        wanted = _relation_rows(relations)
        with self._exclusive():
            ends = sorted({seg for src, dst, _kind in wanted for seg in (src, dst)})
            own = {str(r["id"]) for r in self._read(cypher.SEGMENT_OWNERS_OF_MANY, {"segment_ids": ends})
                   if r["user_id"] == user_id} if ends else set()
            keep = {key: score for key, score in wanted.items() if key[0] in own and key[1] in own}
            current = {(src, dst, kind): score for src, dst, kind, score in self.relations(user_id)}
            drops: dict[str, list[Params]] = defaultdict(list)
            sets: dict[str, list[Params]] = defaultdict(list)
            for src, dst, kind in current.keys() - keep.keys():
                drops[kind].append({"src": src, "dst": dst})
            for (src, dst, kind), score in keep.items():
                if current.get((src, dst, kind)) != score:
                    sets[kind].append({"src": src, "dst": dst, "score": score})
            # Empty lists are not sent: ladybug cannot type an empty list of maps.
            steps: list[Step] = [(cypher.DROP_RELATIONS[cypher.RELATION_EDGES[k]], {"user_id": user_id, "rows": rows})
                                 for k, rows in sorted(drops.items())]
            steps += [(cypher.SET_RELATIONS[cypher.RELATION_EDGES[k]], {"user_id": user_id, "rows": rows})
                      for k, rows in sorted(sets.items())]
            if steps:
                self._write(steps)
            return len(keep)

    def relations(self, user_id: str, segment_ids: Sequence[str] | None = None) -> list[tuple[str, str, str, float]]:
        """The user's memory relations as (src, dst, kind, score), sorted; with ``segment_ids``, only those
        with either end among them (another user's ids find nothing)."""
        ids.validate_id(user_id, "user_id")
        seeds = None if segment_ids is None else _segment_ids(segment_ids)
        if seeds == []:
            return []
        kinds = {edge: kind for kind, edge in cypher.RELATION_EDGES.items()}
        found: dict[tuple[str, str, str], float] = {}
        with self._exclusive():  # one state of the graph for all the reads
            if seeds is None:
                rows = [{**r, "edge": edge} for edge in kinds
                        for r in self._read(cypher.USER_RELATIONS[edge], {"user_id": user_id})]
            else:
                rows = self._relation_rows(seeds)
        for r in rows:
            # Relations never cross users; checking both ends makes a leak impossible all the same.
            if r["src_owner"] == user_id and r["dst_owner"] == user_id:
                found[(str(r["src"]), str(r["dst"]), kinds[r["edge"]])] = float(r["score"])
        return [(src, dst, kind, score) for (src, dst, kind), score in sorted(found.items())]

    def _relation_rows(self, seeds: list[str]) -> Rows:
        """Rows (src, dst, edge, score, src_owner, dst_owner) of every relation with an end among the seeds;
        adapters may plan it their way."""
        params = {"segment_ids": seeds}
        return [{**r, "edge": edge} for edge in cypher.RELATION_EDGES.values()
                for query in (cypher.RELATIONS_FROM, cypher.RELATIONS_TO) for r in self._read(query[edge], params)]

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

