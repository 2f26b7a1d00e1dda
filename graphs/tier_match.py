"""Does every derived tier hold, per user, what the archive says it should? (doctor and stats, issue 44)

The archive is the base every other tier is derived from. Per user it says how many segments, turns and
remembered knowledge items exist; each derived tier is counted per user the same way (distinct segment ids in the
segment points and in the graph's Segment nodes, distinct turn ids in the turn points, knowledge points). A tier
is reported when it

- holds fewer of a user's ids than the archive minus what is owed (outbox) or forgotten (the lifecycle drops a
  forgotten memory's point and node, the archive keeps the segment): something was lost. Segment points are the
  exception: only promoted segments get one and the verdict is not archived, so a user with no point at all is
  reported as suspicious (a warning), not as a mismatch;
- holds ids of a user the archive does not have, or more segment or turn points than the archive has rows: an
  erasure or a rewrite left them behind.

The counting functions read the engines directly (doctor, data dir closed) or through open stores (stats).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from lumina_memory.stores import cypher
from lumina_memory.stores.factory import Stores
from lumina_memory.stores.protocols_collections import PointCollection
from lumina_memory.stores.records import ArchiveCounts

TIERS = ("segment points", "graph segments", "turn points", "knowledge points")


def distinct_per_user(payloads: Iterable[dict], key: str | None) -> Counter:
    """Distinct ``key`` values (None: points) per payload user."""
    seen: dict[str, set] = defaultdict(set)
    counts: Counter = Counter()
    for n, payload in enumerate(payloads):
        user = payload.get("user_id")
        if key is None:
            counts[user] += 1
        else:
            seen[user].add(payload.get(key, n))
    return counts if key is None else Counter({u: len(v) for u, v in seen.items()})


def edge_payloads(shard, fields: list[str], page: int = 2_000) -> Iterable[dict]:
    """Payload ``fields`` of every point of an open qdrant-edge shard."""
    import qdrant_edge as qe

    offset = None
    while True:
        records, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=page, with_payload=fields, with_vector=False))
        for r in records:
            yield dict(r.payload or {})
        if offset is None or not records:
            return


GRAPH_SEGMENTS_PER_USER = cypher.SEGMENTS_PER_USER


def mismatches(archive: ArchiveCounts, tiers: dict[str, Counter]) -> list[str]:
    """One line per tier whose per-user counts do not fit the archive; ``tiers``: tier -> per-user counts
    (a tier that is absent was not counted)."""
    known = archive.users() | archive.other_users
    out = []
    for tier, held in tiers.items():
        lost, extra, strangers = [], [], sorted(str(u) for u in held if u not in known and held[u])
        for user in sorted(known):
            have = held.get(user, 0)
            if tier == "turn points":
                low = high = archive.turns[user]
                if archive.owed[user]:
                    low = 0  # an owed segment may owe any of the user's turn points
            elif tier == "knowledge points":
                low, high = archive.knowledge[user], None
            elif tier == "graph segments":
                # Segment retention drops the archive row and the point, the node stays: no upper bound.
                low, high = archive.segments[user] - archive.owed[user] - archive.forgotten[user], None
            else:
                # Only promoted segments get a point, and the verdict is not archived: no lower bound here
                # (see ``suspicious``).
                low, high = 0, archive.segments[user]
            if have < low:
                lost.append(f"{user} {have} of {low}")
            elif high is not None and have > high:
                extra.append(f"{user} {have} > {high}")
        parts = []
        if lost:
            parts.append(f"fewer than the archive says for {len(lost)} user(s) ({', '.join(lost[:5])})")
        if extra:
            parts.append(f"more than the archive has for {len(extra)} user(s) ({', '.join(extra[:5])})")
        if strangers:
            parts.append(f"data of {len(strangers)} user(s) the archive does not have (erased or lost there)")
        if parts:
            out.append(f"{tier}: " + "; ".join(parts))
    return out


SUSPICIOUS_SEGMENTS = 3


def suspicious(archive: ArchiveCounts, tiers: dict[str, Counter]) -> list[str]:
    """Users with several settled archived segments and no segment point at all: a tier lost them, unless
    every one of their segments was judged not worth a point (low value, near copies)."""
    held = tiers.get("segment points")
    if held is None:
        return []
    users = sorted(u for u in archive.segments if archive.segments[u] - archive.owed[u] >= SUSPICIOUS_SEGMENTS
                   and not held.get(u))
    if not users:
        return []
    return [f"segment points: none for {len(users)} user(s) with {SUSPICIOUS_SEGMENTS}+ archived segments "
            f"({', '.join(users[:5])}); lost, unless none of their segments was promoted"]


def _store_payloads(store: PointCollection, key: str | None) -> Iterable[dict]:
    return store.payloads(["user_id"] + ([key] if key else []))


def store_tiers(stores: Stores) -> dict[str, Counter]:
    """Per-user counts of the derived tiers of open stores (embedded or servers)."""
    out: dict[str, Counter] = {}
    out["segment points"] = distinct_per_user(_store_payloads(stores.vectors, "segment_id"), "segment_id")
    if stores.turns is not None:
        out["turn points"] = distinct_per_user(_store_payloads(stores.turns, "turn_id"), "turn_id")
    if stores.knowledge is not None:
        out["knowledge points"] = distinct_per_user(_store_payloads(stores.knowledge, None), None)
    out["graph segments"] = Counter(stores.graph.segments_per_user())
    return out


def store_mismatches(stores: Stores) -> tuple[list[str], list[str]]:
    """(mismatches, suspicious) of open stores."""
    counted = stores.archive.tier_counts()
    tiers = store_tiers(stores)
    return mismatches(counted, tiers), suspicious(counted, tiers)
