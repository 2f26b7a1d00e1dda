"""Store maintenance in the maintenance graph: the archive's file kept compact, and an integrity check of the
archive and the graph against each other (the notes' VACUUM and integrity check after mass deletions).

The archive is the record every other tier is derived from, so the check reads the graph against it:

- graph: a Segment node whose segment the archive does not hold (an orphan: retention or an erasure removed the
  segment and the graph kept it), an edge with an orphan at either end (a dangling edge: ASSOCIATED, the memory
  relations, LEARNED_FROM), an edge between two users' segments (must never exist), a Concept no segment
  mentions. With ``upkeep_repair_graph`` (default) the orphans go with their edges, the dangling ones included
  (``GraphStore.delete_segments`` without the knowledge items: a fact stays while the archive keeps it), and
  every edge joining two users' nodes is removed (``GraphStore.cross_user_edges``: segments, concepts, knowledge
  items; the nodes stay). Each repair is counted in the report and recorded, counts only, in the audit trail
  (``graph_repaired``) and in the activity log of every user it touched.
- archive: lifecycle relations whose end memory is gone, and memories whose segment is gone; reported.

Compaction: ``CHECKPOINT`` folds DuckDB's WAL into the file and reclaims part of the deleted rows' blocks;
DuckDB's ``VACUUM`` reclaims nothing (only statistics), so a file whose free blocks are still over
``upkeep_compact_free_share`` of it after the checkpoint is rewritten whole (``COPY FROM DATABASE``, as
erasure does). PostgreSQL is left to its autovacuum: ``VACUUM FULL`` locks each table while it copies.
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from typing import Any

from lumina_memory.nodes.activity import record
from lumina_memory.stores.cypher_relations import RELATION_EDGES
from lumina_memory.stores.factory import open_audit_log
from lumina_memory.stores.secret import memory_secret

log = logging.getLogger("lumina.upkeep")
REPAIRED = "graph_repaired"
"""The audit and activity event of a graph repair."""
SEGMENT_EDGES = ("ASSOCIATED", *RELATION_EDGES.values())
"""Edges from a Segment to a Segment of the same user."""


def _archive_segments(archive, users) -> dict[str, set[str]]:
    return {user: {row[0] for row in archive.segment_texts(user, 0.0)} for user in users}


def graph_integrity(services, repair: bool) -> dict[str, Any]:
    """Reads the whole graph (``GraphStore.dump``) against the archive's segments; see the module docstring."""
    return _graph_integrity(services, repair)[0]


def _graph_integrity(services, repair: bool) -> tuple[dict[str, Any], dict[str, Counter]]:
    """The report, and per user what was repaired (orphan segments, dangling and cross-user edges)."""
    graph, archive = services.stores.graph, services.stores.archive
    rows = graph.dump()
    owner: dict[str, set[str]] = defaultdict(set)
    for seg in rows.get("Segment", []):
        owner[str(seg["id"])].add(str(seg["user_id"]))
    users = {u for us in owner.values() for u in us}
    kept = _archive_segments(archive, users)
    orphans: dict[str, list[str]] = defaultdict(list)
    for seg_id, seg_users in owner.items():
        for user in seg_users:
            if seg_id not in kept[user]:
                orphans[user].append(seg_id)
    orphan_ids = {seg for ids in orphans.values() for seg in ids}
    dangling: dict[str, int] = {}
    dangling_of: Counter = Counter()
    for kind in (*SEGMENT_EDGES, "LEARNED_FROM"):
        ends = (lambda e: (e["b"],)) if kind == "LEARNED_FROM" else (lambda e: (e["a"], e["b"]))
        hanging = [e for e in rows.get(kind, []) if any(str(x) in orphan_ids for x in ends(e))]
        if hanging:
            dangling[kind] = len(hanging)
            dangling_of.update(str(e["user_id"]) for e in hanging)
    mentioned = {str(e["b"]) for e in rows.get("MENTIONS", [])}
    unmentioned = sum(1 for c in rows.get("Concept", []) if str(c["id"]) not in mentioned)
    crossing = graph.cross_user_edges(delete=repair)
    repaired: dict[str, Counter] = defaultdict(Counter)
    removed = 0
    if repair:
        for user, ids in orphans.items():
            gone = graph.delete_segments(user, ids, knowledge=False)
            removed += gone
            if gone:
                repaired[user].update(orphan_segments=gone, dangling_edges=dangling_of[user])
        for edge in crossing:
            for user in {str(edge["a_user"]), str(edge["b_user"])}:
                repaired[user]["cross_user_edges"] += 1
    report = {"segments": len(owner), "orphan_segments": len(orphan_ids), "dangling_edges": dangling,
              "cross_user_edges": len(crossing), "unmentioned_concepts": unmentioned, "orphans_removed": removed,
              "dangling_removed": sum(dangling.values()) if repair and removed else 0,
              "cross_user_removed": dict(Counter(e["kind"] for e in crossing)) if repair else {}}
    if orphan_ids or crossing:
        log.warning("upkeep graph: %d orphan segment(s), dangling edges %s, %d cross-user edge(s) %s, %d orphan(s) "
                    "removed", len(orphan_ids), dangling, len(crossing), "removed" if repair else "reported", removed)
    return report, repaired


def record_repairs(services, repaired: dict[str, Counter]) -> None:
    """Each user's repairs, counts only: an audit row (``graph_repaired``, actor maintenance) and an activity event."""
    if not repaired:
        return
    trail = open_audit_log(services.stores.archive, memory_secret(services.settings))
    for user, counts in sorted(repaired.items()):
        detail = {k: int(v) for k, v in sorted(counts.items()) if v}
        trail.append(REPAIRED, "maintenance", user, json.dumps(detail, sort_keys=True))
        record(services, user, REPAIRED, **detail)


def archive_integrity(services) -> dict[str, Any]:
    """Lifecycle rows against the archive's segments, per user the archive counts."""
    archive = services.stores.archive
    table = getattr(archive, "memories", None)
    counts = archive.tier_counts()
    users = sorted(counts.users() | set(counts.other_users))
    report = {"users": len(users), "relations_to_missing_memories": 0, "memories_without_segment": 0}
    if table is None:
        return report
    segments = _archive_segments(archive, users)
    for user in users:
        memory_ids = {row["memory_id"] for row in table.rows(user)}
        report["memories_without_segment"] += len(memory_ids - segments[user])
        report["relations_to_missing_memories"] += sum(
            1 for r in table.relations(user) if r["src"] not in memory_ids or r["dst"] not in memory_ids)
    return report


def compact_archive(services) -> dict[str, Any]:
    """CHECKPOINT, then a rewrite when the free share is still above the setting (DuckDB only)."""
    return services.stores.archive.compact(services.settings.upkeep_compact_free_share)


def store_upkeep(services) -> dict[str, Any]:
    """The maintenance step: compaction, then the integrity checks (the graph's repaired per the setting)."""
    graph, repaired = _graph_integrity(services, services.settings.upkeep_repair_graph)
    report = {"archive_file": compact_archive(services), "archive": archive_integrity(services), "graph": graph}
    record_repairs(services, repaired)
    log.info("upkeep archive_file=%s graph_orphans=%d", report["archive_file"], report["graph"]["orphan_segments"])
    return report
