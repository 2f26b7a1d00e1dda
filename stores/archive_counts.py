"""Per user, what the archive says each derived tier should hold: read from the archive's tables (DuckDB or
PostgreSQL: the queries are the shared SQL).

``ArchiveStore.tier_counts`` answers it for an open store; doctor reads the same from a read-only
connection on a data directory no process holds.
"""

from __future__ import annotations

from collections import Counter

from . import ids
from .knowledge_duckdb import KNOWLEDGE as KNOWLEDGE_TABLE, SYNCED as KNOWLEDGE_SYNCED
from .memories_duckdb import FORGOTTEN as FORGOTTEN_TABLE, MEMORIES as MEMORIES_TABLE
from .records import ArchiveCounts


def _per_user(con, query: str) -> Counter:
    try:
        return Counter({u: int(n) for u, n in con.execute(query).fetchall()})
    except Exception as exc:  # noqa: BLE001 - a table a capability has not created yet counts nothing
        if "does not exist" in str(exc):
            return Counter()
        raise


def archive_counts(con) -> ArchiveCounts:
    """``con``: a connection on the archive (a read-only DuckDB one, or the open store's of either engine)."""
    group = "GROUP BY user_id"
    out = ArchiveCounts(
        segments=_per_user(con, f"SELECT user_id, count(*) FROM {ids.SEGMENTS_TABLE} {group}"),
        turns=_per_user(con, f"SELECT user_id, count(*) FROM {ids.TURNS_TABLE} {group}"),
        forgotten=_per_user(con, f"SELECT user_id, count(DISTINCT memory_id) FROM {FORGOTTEN_TABLE} {group}"),
        owed=_per_user(con, f"SELECT user_id, count(*) FROM {ids.OUTBOX_TABLE} {group}"),
        knowledge=_per_user(con, f"SELECT user_id, count(*) FROM {KNOWLEDGE_TABLE} WHERE {KNOWLEDGE_SYNCED} "
                                 f"AND forgotten_at IS NULL {group}"),
    )
    out.other_users = set(_per_user(con, f"SELECT user_id, count(*) FROM {KNOWLEDGE_TABLE} {group}")) | set(
        _per_user(con, f"SELECT user_id, count(*) FROM {MEMORIES_TABLE} {group}"))
    return out
