"""Every derived tier of an imported user rebuilt from the archive rows just written, as they were in the exporting
memory: nodes.recovery.rederive, with two things it cannot know from the archive alone.

- Promotion: which segments long-term memory holds was decided when each was flushed, against the importances and
  neighbours of that moment; made again over the whole history the verdicts differ. An export says it per segment
  (``long_term``), and those verdicts are queued with the segments (a segment without one is decided again).
- Typed memory relations in the graph: the lifecycle writes them there from its table (nodes.lifecycle.phases),
  which re-deriving the segments does not; they are set from the imported table.
"""

from __future__ import annotations

from collections.abc import Mapping

from lumina_memory.nodes.recovery import rebuild_midterm, recover

KEPT_OUT = "not promoted (not in long-term memory when exported)"
OWED = ["qdrant", "graph"]  # mid-term: only what was archived within its TTL (rebuild_midterm)


def promoted_segments(services, user_id: str, segment_ids: list[str]) -> set[str]:
    """The segments of ``segment_ids`` long-term memory holds for the user."""
    hits = services.stores.vectors.get(user_id, segment_ids) if segment_ids else []
    return {h.payload.get("segment_id") for h in hits}


def rebuild_tiers(services, user_id: str, verdicts: Mapping[str, bool | None]) -> dict:
    """Queue and complete every derived write of the user's archived segments; ``verdicts``: segment id -> whether
    it was in long-term memory (None: decide again). Returns recovery's report."""
    archive = services.stores.archive
    segments = sorted(archive.segments(user_id), key=lambda r: (r.end_ts, r.segment_id))
    promotion = {True: "promoted", False: KEPT_OUT, None: ""}
    archive.put_outbox([(user_id, r.segment_id, OWED, promotion[verdicts.get(r.segment_id)]) for r in segments])
    knowledge = getattr(archive, "knowledge", None)
    if knowledge is not None:
        knowledge.mark_unsynced(user_id)  # the knowledge tiers are derived too
    report = recover(services, user_id, reason="import", wait=True)
    memories = getattr(archive, "memories", None)
    if memories is not None:
        services.stores.graph.set_relations(
            user_id, [(r["src"], r["dst"], r["kind"], r["score"]) for r in memories.relations(user_id)])
    rebuild_midterm(services, reason="import")
    return report
