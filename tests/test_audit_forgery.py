"""The audit log resists forgery as far as a local file can (issue 44): a keyed chain, a sealed head kept
apart from the log, a verification that never writes, and `audit --verify` that opens only the archive
(read-only) and the data dir's secret. The forgeries a database reveals whichever engine holds it run on DuckDB and
PostgreSQL (where the head is a row of its own, ``lumina_audit_head``)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.audit import HEAD_FILE, verify_data_dir
from lumina_memory.stores.ids import AUDIT_TABLE
from lumina_memory.stores.secret import data_dir_secret

from .archive_engines import ENGINES, open_archive
from .conftest import make_settings
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]
KEY = b"k" * 32
_CHAINED = ("seq", "at", "event", "actor", "user_ref", "detail")


def _body(prev: str, row: dict) -> bytes:
    return json.dumps([prev, *[row[c] for c in _CHAINED]], ensure_ascii=False, separators=(",", ":")).encode()


def _rebuild(con, digest) -> None:
    """What a forger who can write the file does: recompute every link with ``digest(prev, row)``."""
    rows = con.execute(f'SELECT seq, "at", event, actor, user_ref, detail FROM {AUDIT_TABLE} ORDER BY seq').fetchall()
    prev = "0" * 64
    for values in rows:
        row = dict(zip(_CHAINED, values))
        new = digest(prev, row)
        con.execute(f"UPDATE {AUDIT_TABLE} SET prev_hash = ?, hash = ? WHERE seq = ?", [prev, new, row["seq"]])
        prev = new


def _sha256(prev, row):
    return hashlib.sha256(_body(prev, row)).hexdigest()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _four_rows(archive):
    log = archive.audit_trail(KEY)
    for i in range(4):
        log.append("settings_changed", "cli", None, f'{{"n": {i}}}')
    assert log.verify()["ok"]
    return log


@pytest.fixture
def logged(tmp_path):
    """A data dir's archive with four sealed rows."""
    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    yield archive, _four_rows(archive)
    archive.close()


@pytest.fixture(params=ENGINES)
def any_logged(request, tmp_path):
    """Four sealed rows in the archive of either engine."""
    archive = open_archive(request, tmp_path / "archive.duckdb")
    yield archive, _four_rows(archive)
    archive.close()


@pytest.mark.parametrize("removed", [1, 2])
def test_deleting_the_last_rows_shows_as_truncation(any_logged, removed):
    archive, log = any_logged
    with archive._db.tx() as con:
        con.execute(f"DELETE FROM {AUDIT_TABLE} WHERE seq > ?", [4 - removed])
    result = log.verify()
    assert not result["ok"] and result["broken_at"] == 4
    assert "removed from its end" in result["problem"] and f"{4 - removed} rows" in result["problem"]


def test_a_truncation_followed_by_an_append_still_shows(any_logged):
    archive, log = any_logged
    with archive._db.tx() as con:
        con.execute(f"DELETE FROM {AUDIT_TABLE} WHERE seq = 4")
    row = log.append("backup", "cli")  # links to the sealed head, not to what the log now ends with
    result = log.verify()
    assert not result["ok"] and result["broken_at"] == row["seq"] and "removed" in result["problem"]


def test_a_forged_row_followed_by_an_append_still_shows(any_logged):
    archive, log = any_logged
    archive.append_audit("user_erased", "mallory", "nothing happened")
    log.append("backup", "cli")
    result = log.verify()
    assert not result["ok"] and result["broken_at"] == 5


def test_a_row_inserted_with_an_empty_hash_is_a_break_and_verify_writes_nothing(logged, tmp_path):
    archive, log = logged
    archive.append_audit("user_erased", "mallory", "nothing happened")  # a row with no hash, as a forger adds it
    archive._db.live().execute("CHECKPOINT")
    before = _files(tmp_path)
    for _ in range(2):  # a second verify sees the same break: the first sealed nothing
        result = log.verify()
        assert not result["ok"] and result["broken_at"] == 5 and "no hash" in result["problem"]
    assert _files(tmp_path) == before
    archive.close()
    before = _files(tmp_path)
    assert verify_data_dir(tmp_path, key=KEY)["broken_at"] == 5  # the read-only path agrees, and writes nothing
    assert _files(tmp_path) == before


def test_a_row_inserted_in_the_middle_is_a_break_at_its_position(any_logged):
    archive, log = any_logged
    with archive._db.tx() as con:
        con.execute(f"UPDATE {AUDIT_TABLE} SET seq = seq + 10 WHERE seq >= 3")
        con.execute(f"INSERT INTO {AUDIT_TABLE} (seq, \"at\", event, user_id, detail) VALUES (3, 1, 'restore', '', '')")
    result = log.verify()
    assert not result["ok"] and result["broken_at"] == 3


@pytest.mark.parametrize("forge", ["sha256", "another key"])
def test_a_chain_rebuilt_without_the_data_dirs_key_is_refused(any_logged, forge):
    archive, log = any_logged
    digest = _sha256 if forge == "sha256" else (
        lambda prev, row: hmac.new(b"x" * 32, b"audit-row|" + _body(prev, row), hashlib.sha256).hexdigest())
    with archive._db.tx() as con:
        con.execute(f"UPDATE {AUDIT_TABLE} SET detail = '{{\"n\": 99}}' WHERE seq = 2")
        _rebuild(con, digest)
    result = log.verify()
    assert not result["ok"] and result["broken_at"] == 1 and "key" in result["problem"]


def test_the_head_file_is_sealed_too(logged, tmp_path):
    archive, log = logged
    head = json.loads((tmp_path / HEAD_FILE).read_text())
    assert head["rows"] == 4 and (tmp_path / HEAD_FILE).stat().st_mode & 0o777 == 0o600
    archive._db.live().execute(f"DELETE FROM {AUDIT_TABLE} WHERE seq = 4")
    head["rows"], head["last_seq"] = 3, 3  # the forger moves the head back too, without the key
    (tmp_path / HEAD_FILE).write_text(json.dumps(head))
    result = log.verify()
    assert not result["ok"] and HEAD_FILE in result["problem"]


def test_a_missing_head_file_beside_a_keyed_log_is_reported(logged, tmp_path):
    archive, log = logged
    (tmp_path / HEAD_FILE).unlink()
    result = log.verify()
    assert not result["ok"] and "missing" in result["problem"]
    assert not (tmp_path / HEAD_FILE).exists()


def test_rows_sealed_after_the_head_was_written_verify_with_a_notice(logged, tmp_path):
    # An append that died between its commit and the head file's update: the row is keyed, the head lags.
    archive, log = logged
    lagging = (tmp_path / HEAD_FILE).read_bytes()
    log.append("backup", "cli")
    (tmp_path / HEAD_FILE).write_bytes(lagging)
    result = log.verify()
    assert result["ok"] and result["rows"] == 5 and "1 row" in result["notice"]
    log.append("backup", "cli")
    assert log.verify() == {"ok": True, "rows": 6, "broken_at": None, "problem": "", "notice": ""}


def _legacy_log(archive) -> None:
    """A log as versions before the keyed chain left it: sealed with plain sha256, no head file."""
    con = archive._db.live()
    for column in ("actor", "user_ref", "prev_hash", "hash"):
        con.execute(f"ALTER TABLE {AUDIT_TABLE} ADD COLUMN IF NOT EXISTS {column} VARCHAR DEFAULT ''")
    for i in range(3):
        archive.append_audit("ingest", f"old{i}", f"{i} turns")
    con.execute(f"UPDATE {AUDIT_TABLE} SET actor = 'cli', user_ref = 'u:' || user_id")
    _rebuild(con, _sha256)


def test_a_legacy_unkeyed_log_is_verified_as_such_then_adopted_once(tmp_path):
    with DuckDBArchive(tmp_path / "archive.duckdb") as archive:
        _legacy_log(archive)
        log = archive.audit_trail(KEY)
        result = log.verify()
        assert result["ok"] and result["rows"] == 3 and "unkeyed" in result["notice"]
        assert not (tmp_path / HEAD_FILE).exists()  # verify wrote nothing
        log.append("backup", "cli")  # the first append seals the old rows under the key, and says so in the log
        rows = log.rows()
        assert [r["event"] for r in rows] == ["ingest"] * 3 + ["audit_chain_adopted", "backup"]
        adopted = json.loads(rows[3]["detail"])
        assert adopted["rows"] == 3 and "unkeyed" in adopted["before"] and "intact" in adopted["before"]
        result = log.verify()
        assert result["ok"] and result["rows"] == 5 and "adopted" in result["notice"]
        # From now on the old rows are covered by the key like any other.
        archive._db.live().execute(f"UPDATE {AUDIT_TABLE} SET detail = 'x' WHERE seq = 2")
        assert log.verify()["broken_at"] == 2


def test_a_legacy_log_with_a_broken_unkeyed_chain_is_not_accepted(tmp_path):
    with DuckDBArchive(tmp_path / "archive.duckdb") as archive:
        _legacy_log(archive)
        archive._db.live().execute(f"UPDATE {AUDIT_TABLE} SET detail = 'x' WHERE seq = 2")
        log = archive.audit_trail(KEY)
        result = log.verify()
        assert not result["ok"] and result["broken_at"] == 2
        log.append("backup", "cli")
        adopted = [r for r in log.rows() if r["event"] == "audit_chain_adopted"]
        assert "broken at seq 2" in json.loads(adopted[0]["detail"])["before"]
        result = log.verify()  # the break stays on record: adopting did not launder it
        assert not result["ok"] and "broken at seq 2" in result["problem"]


# --- the command ---------------------------------------------------------------------------------------------

def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LUMINA_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    for key in ("REDIS_URL", "QDRANT_URL", "NEO4J_URI", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "audit", *args], env=env, cwd=data_dir.parent,
                          capture_output=True, text=True, timeout=300)


def test_audit_verify_opens_no_redis_and_writes_nothing(tmp_path):
    data_dir = tmp_path / "data"
    with DuckDBArchive(data_dir / "archive.duckdb") as archive:
        log = archive.audit_trail(data_dir_secret(data_dir))
        log.append("backup", "cli")
        log.append("restore", "cli")
    from lumina_memory.stores.redis_server import server_paths

    paths = server_paths(make_settings(data_dir))
    before = _files(data_dir)
    done = _cli(data_dir, "--verify", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["ok"] and json.loads(done.stdout)["rows"] == 2
    listed = _cli(data_dir, "--json")
    assert [r["event"] for r in json.loads(listed.stdout)] == ["backup", "restore"]
    assert not paths.pidfile.exists() and not paths.socket.exists() and not paths.root.exists()
    assert _files(data_dir) == before

    with DuckDBArchive(data_dir / "archive.duckdb") as archive:
        archive._db.live().execute(f"DELETE FROM {AUDIT_TABLE} WHERE seq = 2")
    broken = _cli(data_dir, "--verify")
    assert broken.returncode == 1 and "broken at seq 2" in broken.stdout
    assert not paths.pidfile.exists() and not paths.root.exists()


def test_audit_verify_of_a_missing_data_dir_creates_nothing(tmp_path):
    missing = tmp_path / "nothing-here"
    done = _cli(missing, "--verify")
    assert done.returncode == 2 and "does not exist" in done.stdout
    assert not missing.exists() and sorted(os.listdir(tmp_path)) == []


def test_audit_verify_names_the_process_holding_the_data_dir(tmp_path):
    data_dir = tmp_path / "data"
    with DuckDBArchive(data_dir / "archive.duckdb") as archive:
        archive.audit_trail(data_dir_secret(data_dir)).append("backup", "cli")
        held = _cli(data_dir, "--verify")  # this process holds the archive open for writing
    assert held.returncode == 2 and "in use by" in held.stdout and str(os.getpid()) in held.stdout


def test_an_append_killed_at_any_moment_leaves_a_log_that_verifies(tmp_path):
    from bench.audit_kill import trials

    for trial in trials(2, tmp_path):
        assert trial["ok"], trial["problem"]
        assert trial["healed"]  # the next append brings the head level with the log


def test_an_append_beside_a_head_file_not_sealed_with_the_key_adopts_the_log_on_record(logged, tmp_path):
    archive, log = logged
    (tmp_path / HEAD_FILE).write_text("{not json")
    assert HEAD_FILE in log.verify()["problem"]
    log.append("backup", "cli")
    rows = log.rows()
    assert [r["event"] for r in rows][-2:] == ["audit_chain_adopted", "backup"]
    result = log.verify()
    assert result["ok"] and "not sealed with this key" in result["notice"]
