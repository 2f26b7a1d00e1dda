"""The audit log: append-only, chained under the data dir's key, tamper-evident, never an id in clear (L11), on the
DuckDB file and on PostgreSQL. Forgery (truncation, rows with no hash, a chain rebuilt without the key):
tests/test_audit_forgery.py; several processes appending to one chain: tests/test_archive_postgres.py."""

from __future__ import annotations

import pytest

from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.audit import AuditPlace
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import AUDIT_TABLE


from .archive_engines import ENGINES, open_archive
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures


@pytest.fixture(params=ENGINES)
def archive(request, tmp_path):
    with open_archive(request, tmp_path / "archive.duckdb") as a:
        yield a


def _audit_place(archive):
    return next(p for p in archive.user_data_places() if p.name == AuditPlace.name)


class _Raw:
    """SQL run behind the log's back, as someone with write access to the database runs it."""

    def __init__(self, archive):
        self.db = archive._db

    def execute(self, sql, params=None):
        with self.db.tx() as con:
            cursor = con.execute(sql, params)
            return cursor.fetchall() if sql.lstrip().upper().startswith("SELECT") else None


def _con(archive):
    return _Raw(archive)


def test_rows_chain_and_verify(archive):
    log = archive.audit_trail(b"k" * 32)
    first = log.append("backup", "cli", None, '{"snapshot": "s1"}')
    second = log.append("user_erased", "ops@example", "carol", '{"removed": 3}')
    assert second["prev_hash"] == first["hash"] and first["prev_hash"] == "0" * 64
    assert second["user_ref"].startswith("u:") and "carol" not in str(second)
    result = log.verify()
    assert result == {"ok": True, "rows": 2, "broken_at": None, "problem": "", "notice": ""}
    with pytest.raises(InvalidInput) as err:
        log.append("x", "")
    assert err.value.field == "actor"


@pytest.mark.parametrize("tamper, problem", [
    (f"UPDATE {AUDIT_TABLE} SET detail = 'nothing happened' WHERE seq = 2", "content"),
    (f"UPDATE {AUDIT_TABLE} SET event = 'backup' WHERE seq = 2", "content"),
    (f"UPDATE {AUDIT_TABLE} SET \"at\" = \"at\" + 1 WHERE seq = 2", "content"),
    (f"DELETE FROM {AUDIT_TABLE} WHERE seq = 2", "link"),
])
def test_tampering_is_detected_at_the_row_it_touched(archive, tamper, problem):
    log = archive.audit_trail(b"k" * 32)
    for i in range(4):
        log.append("settings_changed", "cli", None, f'{{"n": {i}}}')
    assert log.verify()["ok"]
    _con(archive).execute(tamper)
    result = log.verify()
    assert not result["ok"] and problem in result["problem"]
    assert result["broken_at"] in (2, 3)  # the edited row, or the one after a removed row


def test_rows_written_before_the_chain_are_adopted_and_their_ids_can_be_blanked(archive):
    # The pre-chain table (as DuckDBArchive.append_audit writes it): clear user ids, no hashes.
    archive.append_audit("ingest", "dave", "3 turns")
    archive.append_audit("ingest", "dave2", "1 turn")
    log = archive.audit_trail(b"k" * 32)  # migrates the table: new columns; the old rows stay as they are
    assert [r["user_ref"] for r in log.rows()] == [log.ref("dave"), log.ref("dave2")]  # shown keyed, never clear
    found = log.verify()
    assert found["ok"] and "2 rows have no hash" in found["notice"]
    log.append("backup", "cli")  # the first append adopts them into the keyed chain, and says so in the log
    rows = log.rows()
    assert [r["event"] for r in rows] == ["ingest", "ingest", "audit_chain_adopted", "backup"]
    assert rows[0]["user_ref"] == log.ref("dave") and rows[1]["user_ref"] == log.ref("dave2")
    result = log.verify()
    assert result["ok"] and "adopted" in result["notice"] and "no hash" in result["notice"]
    place = _audit_place(archive)
    assert place.count("dave") == 1 and place.count("dave2") == 1
    assert place.erase("dave") == 1
    place.scrub()
    left = _con(archive).execute(f"SELECT user_id FROM {AUDIT_TABLE} ORDER BY seq")
    assert [r[0] for r in left] == ["", "dave2", "", ""]
    assert log.verify()["ok"], "blanking a clear id must not break the chain"
    assert archive.audit("dave2")[0]["event"] == "ingest"  # the archive's own API still reads its rows


def test_a_restored_log_continues_its_chain(tmp_path, archive):
    archive.append_audit("ingest", "erin", "2 turns")  # an old row, with its user in clear
    log = archive.audit_trail(b"k" * 32)
    log.append("backup", "cli")
    log.append("restore", "cli")
    place = _audit_place(archive)
    assert place.export(tmp_path / "exp") == 4
    with DuckDBArchive(tmp_path / "other" / "archive.duckdb") as fresh:
        target = _audit_place(fresh)
        assert target.restore(tmp_path / "exp", lambda u: u == "erin") == 4
        new_log = fresh.audit_trail(b"k" * 32)
        new_log.append("after", "cli")  # the restored rows have no head here: adopted, and said so
        result = new_log.verify()
        assert result["ok"] and result["rows"] == 6 and "adopted" in result["notice"]
        ids = [r[0] for r in _con(fresh).execute(f"SELECT user_id FROM {AUDIT_TABLE}")]
        assert "erin" not in ids
    with DuckDBArchive(tmp_path / "third" / "archive.duckdb") as other_key:  # another data dir: another secret
        _audit_place(other_key).restore(tmp_path / "exp", lambda u: False)
        foreign = other_key.audit_trail(b"o" * 32)
        assert "another data dir" in foreign.verify()["notice"]
        foreign.append("after", "cli")
        result = foreign.verify()
        assert result["ok"] and "not this data dir's" in result["notice"]
