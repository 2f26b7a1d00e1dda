"""Per-memory changes in the graph (the forgetting lifecycle): Segment nodes removed with their edges, and
the typed memory relations made exactly as given (mixed into CypherGraph)."""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from . import cypher, ids
from .graph_values import Params, Rows, Step, _relation_rows, _segment_ids, _single_count


class GraphMemoryChanges:
    """``CypherGraph``'s per-memory methods; ``_relation_rows`` (the method) is the read adapters may plan."""

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
