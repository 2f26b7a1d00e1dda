"""Knowledge nodes in the graph: their LEARNED_FROM segments, SUPERSEDES edges and the links between facts
(derived_from, contradicts), written and read back (mixed into CypherGraph, whose ``_read``/``_write`` run the
statements)."""

from __future__ import annotations

import json
from typing import Any, Sequence

from . import cypher, ids
from .errors import InvalidInput
from .graph_values import Params, Step, _knowledge_rows, _properties
from .records import KnowledgeNode


def _checked_links(links: Sequence[tuple[str, str, str, str]], batch: set[str]) -> set[tuple[str, str, str, str]]:
    """``links`` as a set, refused whole (InvalidInput) if one is not (src, dst, kind, winner) joining two items,
    one of them in ``batch``, of a known kind, with a winner that is "" or one of its ends."""
    if isinstance(links, (str, bytes)):
        raise InvalidInput("links", "must be a list of (src, dst, kind, winner)")
    wanted = set()
    for link in links:
        if not isinstance(link, (tuple, list)) or len(link) != 4:
            raise InvalidInput("links", f"items must be (src, dst, kind, winner), got {str(link)[:80]!r}")
        src, dst = ids.validate_id(link[0], "links"), ids.validate_id(link[1], "links")
        kind, winner = link[2], link[3]
        if kind not in cypher.KNOWLEDGE_LINK_KINDS:
            raise InvalidInput("links.kind", f"{str(kind)[:40]!r}: expected one of {list(cypher.KNOWLEDGE_LINK_KINDS)}")
        if src == dst or not ({src, dst} & batch):
            raise InvalidInput("links", f"({src!r}, {dst!r}) must join two items, one of them written here")
        if winner not in ("", src, dst):
            raise InvalidInput("links.winner", "must be '' or one of the link's two items")
        wanted.add((src, dst, kind, winner))
    return wanted


class GraphKnowledge:
    """``CypherGraph``'s knowledge methods (``max_params_bytes``: see CypherGraph)."""

    max_params_bytes: int | None

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
                         supersedes: Sequence[tuple[str, str]] = (),
                         links: Sequence[tuple[str, str, str, str]] = ()) -> int:
        """Make these items' Knowledge nodes and edges what the archive says, in one unit of work: the node's
        properties, a LEARNED_FROM edge to each of ``episode_ids`` (edges to other segments go), of the
        SUPERSEDES edges touching the items exactly ``supersedes`` as (newer, older) pairs, and of the links
        touching them exactly ``links`` as (src, dst, kind, winner) (kinds in cypher.KNOWLEDGE_LINK_KINDS;
        winner: a contradiction's winning item id, "" when none). A segment or item at the other end that is
        not this user's (or not in the graph yet) gets no edge. Idempotent: only what differs is written.
        Returns the items written."""
        ids.validate_id(user_id, "user_id")
        nodes = _knowledge_rows(items)
        if not nodes:
            return 0
        batch = [n.item_id for n in nodes]
        wanted_links = _checked_links(links, set(batch))
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
                self._write(self._knowledge_steps(user_id, [by_id[p["id"]] for p in group], wanted_edges)
                            + self._fact_link_steps(user_id, {p["id"] for p in group}, wanted_links))
        return len(nodes)

    def _fact_link_steps(self, user_id: str, chunk: set[str], wanted_links: set[tuple[str, str, str, str]]) -> list[Step]:
        """The statements that make the links touching these items exactly the wanted ones (winner included)."""
        params: Params = {"user_id": user_id, "item_ids": sorted(chunk)}
        steps: list[Step] = []
        for kind, edge in cypher.KNOWLEDGE_LINK_EDGES.items():
            have = {(str(r["src"]), str(r["dst"]), str(r["winner"] or ""))
                    for query in (cypher.KNOWLEDGE_LINKS_FROM[edge], cypher.KNOWLEDGE_LINKS_TO[edge])
                    for r in self._read(query, params)}
            want = {(a, b, w) for a, b, k, w in wanted_links if k == kind and (a in chunk or b in chunk)}
            pairs_wanted = {(a, b) for a, b, _ in want}
            for query, rows in (
                (cypher.DROP_KNOWLEDGE_LINKS[edge], [{"src": a, "dst": b} for a, b, _ in sorted(have - want)
                                                     if (a, b) not in pairs_wanted]),
                (cypher.ADD_KNOWLEDGE_LINKS[edge], [{"src": a, "dst": b, "winner": w} for a, b, w in sorted(want - have)]),
            ):
                steps += [(query, {"user_id": user_id, "rows": group}) for group in self._packed(rows)]
        return steps

    def knowledge_links(self, user_id: str) -> list[tuple[str, str, str, str]]:
        """The links leaving the user's Knowledge nodes as (src, dst, kind, winner), sorted."""
        ids.validate_id(user_id, "user_id")
        out = []
        with self._exclusive():
            for kind, edge in cypher.KNOWLEDGE_LINK_EDGES.items():
                out += [(str(r["src"]), str(r["dst"]), kind, str(r["winner"] or ""))
                        for r in self._read(cypher.KNOWLEDGE_LINKS_OF_USER[edge], {"user_id": user_id})
                        if r["owner"] == user_id]
        return sorted(out)

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
