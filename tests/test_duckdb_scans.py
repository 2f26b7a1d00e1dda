"""DuckDB reads a user's rows by a sequential scan, not by the user_id index: an index scan fetches rows one
by one, decoding the compressed column again for each, and reading one user's 1,000 segments with long texts
took 2.8 s (15 ms scanned). Point lookups by id keep the index."""

from __future__ import annotations

from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.ids import SEGMENTS_TABLE, TURNS_TABLE
from lumina_memory.stores.models import SegmentRecord, Turn


def _plan(con, query: str, params: list) -> str:
    # ANALYZE: DuckDB picks the index or a sequential scan when the scan runs, not in the plan
    return "\n".join(str(row[1]) for row in con.execute("EXPLAIN ANALYZE " + query, params).fetchall())


def test_a_users_rows_are_scanned_and_a_point_lookup_uses_the_index(tmp_path):
    archive = DuckDBArchive(tmp_path)
    try:
        long_text = "\n".join(f"lumina: paragraph {k} " + "about the release checklist and its steps " * 40 for k in range(10))
        for user in ("alice", "bob"):
            archive.put_segments([SegmentRecord(
                segment_id=f"{user}-{n}", user_id=user, turn_ids=[f"{user}-t{n}"], source_ids=[f"D:{n}"], characters=["lumina"],
                start_ts=float(n), end_ts=float(n), summary="s", keywords=["release"], embedding=[0.1] * 8, importance=0.5,
                text=long_text) for n in range(40)])
            archive.put_turns([Turn(turn_id=f"{user}-t{n}", source_id=f"D:{n}", user_id=user, segment_id=f"{user}-{n}",
                                    speaker="lumina", text=long_text, ts=float(n)) for n in range(40)])
        with archive._db.read() as con:
            per_user = _plan(con, f"SELECT segment_id, text FROM {SEGMENTS_TABLE} WHERE user_id = ?", ["alice"])
            assert "Type: Sequential Scan" in per_user and "Index Scan" not in per_user, per_user
            point = _plan(con, f"SELECT text FROM {TURNS_TABLE} WHERE turn_id = ?", ["alice-t3"])
            assert "Type: Index Scan" in point, point
        texts = archive.segment_texts("alice")
        assert len(texts) == 40 and all(t[1] == long_text for t in texts)
    finally:
        archive.close()
