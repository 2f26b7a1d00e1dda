"""The embedded mode's guarantees, in server mode (DATABASE_URI set), on a real private PostgreSQL with pgvector.

Two users ("alice" is a prefix of "alice2": isolation is tested at the same time) are ingested into one database
and backed up to a local folder; "alice" is erased. Then:
- no row of any table of the database names her: every row read as text, for her marks, turn/segment ids, her id
  as a whole token and its keyed hash; the same scan finds alice2, so it would have found a leak;
- the erasure's rewrite (VACUUM FULL through the adapters) leaves her strings in no relation file of the
  database (after a CHECKPOINT flushed every page; the test database stores values uncompressed, so the raw
  scan reads what the pages hold), the catalogue's included: an ANALYZE before the erasure put
  sampled values of her rows into pg_statistic, which the rewrite clears and re-samples (stores.pg_statistics);
  her write-stamp row (lumina_versions) is deleted. Of the whole server's data folder only the write-ahead log
  (pg_wal) still holds her text: VACUUM FULL writes each table anew and the old files are truncated, but it does
  not touch WAL segments, which the server recycles after later checkpoints (nor copies in WAL archives, base
  backups or replicas);
- the backup restores into a fresh database with the same ids per tier, and the backup format is shared: an
  embedded backup restores into server mode and a server backup back into a data dir.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import psycopg
import pytest

from bench import faults
from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import DEMO_TRANSCRIPT, replay
from lumina_memory.stores.pg_connection import VERSIONS_TABLE
from lumina_memory.stores.redis_server import stop_server
from lumina_memory.stores.secret import keyed_hash

from .conftest import make_settings
from .pg_server import fresh_database, pg_server, uncompressed_database  # noqa: F401 - fixture
from .test_residue import _hits

SECRET = "server-guarantees-test-secret-0123456789"
ERASED, KEPT = "alice", "alice2"
_RUN = uuid.uuid4().hex[:6].upper()  # marks unique to this run: the session's server holds other tests' data
MARK = {ERASED: f"ZEBRASRV{_RUN}Q", KEPT: f"OKAPISRV{_RUN}Q"}
TURNS = 16
# The erased id as a whole token in a row's text form ("alice" inside "alice2" is the other user).
ID_PATTERN = r"(^|[^A-Za-z0-9_.@-])" + ERASED + r"([^A-Za-z0-9_.@-]|$)"


def _rows(user: str) -> list[dict]:
    rows = [json.loads(line) for line in DEMO_TRANSCRIPT.open(encoding="utf-8") if line.strip()][:TURNS]
    return [dict(r, user_id=user, text=f"{r['text']} {MARK[user]}{i}") for i, r in enumerate(rows)]


class Opened:
    """Services, graph and checkpoints of one process on a data dir, in server mode when ``uri`` is given."""

    def __init__(self, data_dir: Path, backups: Path, uri: str | None):
        extra = {"database_url": uri, "secret_key": SECRET} if uri else {}
        self.settings = make_settings(data_dir, backup_location=str(backups), **extra)
        self.services, self.graph, self.conn = _open(self.settings)

    def fill(self, users=(ERASED, KEPT)) -> None:
        for user in users:
            replay(self.graph, user, _rows(user), flush=True)
        store = make_store(self.settings, embedder=self.services.embedder)
        try:
            for user in users:
                store.put(("memories", user), "pet", {"text": f"cat Mugi {MARK[user]}"})
        finally:
            store.close()

    def ids(self, user: str) -> dict[str, list[str]]:
        """Per tier, the ids a user's memory is made of."""
        archive = self.services.stores.archive
        with open_registry(self.services) as places:
            counts = {p.name: p.count(user) for p in places if not p.name.startswith("cache.")}
        return {"turns": sorted(t.turn_id for t in archive.all_turns(user)),
                "segments": sorted(s.segment_id for s in archive.segments(user)),
                "places": counts, "tiers": faults.tier_ids(self.services, [user])}

    def close(self) -> None:
        self.services.close()
        self.conn.close()
        stop_server(self.settings)


def tables(uri: str) -> list[str]:
    with psycopg.connect(uri) as con:
        return [r[0] for r in con.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'p') AND n.nspname = 'public' ORDER BY 1").fetchall()]


def rows_naming(uri: str, needles: list[str], pattern: str | None = None) -> dict[str, int]:
    """Per table, the rows whose text form holds one of ``needles`` (or matches ``pattern``)."""
    found = {}
    with psycopg.connect(uri) as con:
        for table in tables(uri):
            where = " OR ".join(["strpos(r::text, %s) > 0"] * len(needles) + (["r::text ~ %s"] if pattern else []))
            n = con.execute(f'SELECT count(*) FROM "{table}" AS r WHERE {where}',
                            [*needles, *([pattern] if pattern else [])]).fetchone()[0]
            if n:
                found[table] = n
    return found


@pytest.fixture(scope="module")
def world(tmp_path_factory, pg_server):  # noqa: F811 - the fixture
    root = tmp_path_factory.mktemp("server-guarantees")
    name, uri = uncompressed_database(pg_server)
    opened = Opened(root / "data", root / "backups", uri)
    try:
        opened.fill()
        before = {user: opened.ids(user) for user in (ERASED, KEPT)}
        manifest = backup_now(opened.services)
        rows_before = rows_naming(uri, [MARK[ERASED]])
        with psycopg.connect(uri, autocommit=True) as con:
            con.execute("ANALYZE")  # as autovacuum does: pg_statistic then holds sampled values of her rows
        plan = erase_plan(opened.services, ERASED)
        report = erase_user(opened.services, ERASED, plan["token"], actor="test")
        after = {user: opened.ids(user) for user in (ERASED, KEPT)}
        hashed = keyed_hash(SECRET.encode(), ERASED)
        yield {"root": root, "uri": uri, "server": pg_server, "opened": opened, "before": before, "after": after,
               "manifest": manifest, "plan": plan, "report": report, "rows_before": rows_before, "hashed": hashed}
    finally:
        opened.close()
        pg_server.drop_database(name)


def _needles(world) -> list[str]:
    ids = world["before"][ERASED]
    return [MARK[ERASED], *ids["turns"], *ids["segments"]]


def test_the_erasure_removed_the_user_from_every_place_and_kept_the_other(world):
    before, after = world["before"], world["after"]
    assert before[ERASED]["places"]["archive.turn_archive"] == TURNS
    assert len(before[ERASED]["segments"]) >= 1 and before[ERASED]["places"]["store.items"] == 1
    assert world["report"]["unreachable"] == {}
    assert {k: v for k, v in after[ERASED]["places"].items() if v} == {}
    assert after[KEPT] == before[KEPT]
    for tier in ("vectors.segments", "vectors.turns", "graph", "archive.session_archive"):
        assert before[ERASED]["places"][tier] > 0, tier


def test_no_row_of_any_table_names_the_erased_user(world):
    uri = world["uri"]
    assert len(world["rows_before"]) >= 3, world["rows_before"]  # the scan saw her in several tables before
    assert rows_naming(uri, _needles(world), ID_PATTERN) == {}
    assert rows_naming(uri, [world["hashed"]]) == {}  # the audit rows keep no keyed hash of an erased user
    assert rows_naming(uri, [MARK[KEPT]]), "the same scan finds the other user"


def test_no_write_stamp_keeps_the_erased_id(world):
    """The stamps PostgresConnection keys by user id: the erased id's row is deleted and its table rewritten."""
    with psycopg.connect(world["uri"]) as con:
        keys = [r[0] for r in con.execute(f"SELECT key FROM {VERSIONS_TABLE}").fetchall()]
    assert KEPT in keys and ERASED not in keys
    assert "lumina_versions" not in _relations_holding(world["uri"], [])


def _data_folder(uri: str) -> Path:
    with psycopg.connect(uri, autocommit=True) as con:
        con.execute("CHECKPOINT")  # every page the erasure changed is on disk before the files are read
        return Path(con.execute("SHOW data_directory").fetchone()[0])


def _relations_holding(uri: str, needles: list[bytes]) -> dict[str, list[str]]:
    """The relations of this database whose files (every fork and segment) hold a needle or the erased id,
    with what each holds."""
    folder = _data_folder(uri)
    with psycopg.connect(uri) as con:
        rows = con.execute("SELECT c.relname, pg_relation_filepath(c.oid) FROM pg_class c "
                           "WHERE pg_relation_filepath(c.oid) IS NOT NULL").fetchall()
    found = {}
    for name, path in rows:
        files = [f for f in (folder / path).parent.glob(Path(path).name + "*")
                 if re.fullmatch(re.escape(Path(path).name) + r"(_\w+)?(\.\d+)?", f.name)]
        hits = [h.split(": ", 1)[1] for f in files for h in _hits(f, needles)]
        if hits:
            found[name] = sorted(set(hits))
    return found


def compressed_values(uri: str) -> dict[str, int]:
    """Per ``table.column`` of the database's own tables, the values stored compressed."""
    with psycopg.connect(uri) as con:
        columns = con.execute(
            "SELECT n.nspname, c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid "
            "WHERE c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND t.typlen = -1 "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')").fetchall()
        found = {}
        for schema, table, column in columns:
            n = con.execute(f'SELECT count(*) FROM "{schema}"."{table}" '
                            f'WHERE pg_column_compression("{column}") IS NOT NULL').fetchone()[0]
            if n:
                found[f"{table}.{column}"] = n
    return found


def test_the_raw_scans_read_every_value_as_written(world):
    """pglz would hide her text from the scans below, or splice the kept user's id into a false match of hers:
    the test database stores every value uncompressed (tests.pg_server.uncompressed_database)."""
    assert compressed_values(world["uri"]) == {}
    assert rows_naming(world["uri"], [MARK[KEPT]]), "and the values are there to be read"


def test_the_rewritten_relation_files_hold_nothing_of_her_only_the_wal_does(world):
    uri = world["uri"]
    needles = [n.encode() for n in _needles(world)]
    assert _relations_holding(uri, needles) == {}
    # Of the whole server's folder, the write-ahead log alone keeps her text: VACUUM FULL does not rewrite it.
    folder = _data_folder(uri)
    holding = {p.relative_to(folder).parts[0] for p in folder.rglob("*")
               if p.is_file() and MARK[ERASED].encode() in p.read_bytes()}
    assert holding == {"pg_wal"}
    assert _relations_holding(uri, [MARK[KEPT].encode()]), "the same scan finds the other user"


def test_the_backup_restores_into_a_fresh_database_with_the_same_ids(world, tmp_path):
    name, uri = fresh_database(world["server"])
    target = Opened(tmp_path / "restored", world["root"] / "backups", uri)
    try:
        report = restore_from(target.services, str(world["root"] / "backups"), world["manifest"]["id"])
        assert report["not_restored"] == []
        assert target.ids(KEPT) == world["before"][KEPT]
        # The erasure's ledger reached the backup: she does not come back.
        assert {k: v for k, v in target.ids(ERASED)["places"].items() if v} == {}
    finally:
        target.close()
        world["server"].drop_database(name)


def test_the_backup_format_is_shared_between_embedded_and_server_mode(tmp_path, pg_server):  # noqa: F811
    embedded = Opened(tmp_path / "embedded", tmp_path / "backups", None)
    try:
        embedded.fill(users=(KEPT,))
        first = backup_now(embedded.services)
        reference = embedded.ids(KEPT)
    finally:
        embedded.close()
    name, uri = fresh_database(pg_server)
    try:
        server = Opened(tmp_path / "server", tmp_path / "backups", uri)
        try:
            assert restore_from(server.services, str(tmp_path / "backups"), first["id"])["not_restored"] == []
            assert server.ids(KEPT) == reference
            second = backup_now(server.services)
        finally:
            server.close()
        back = Opened(tmp_path / "back", tmp_path / "backups", None)
        try:
            assert restore_from(back.services, str(tmp_path / "backups"), second["id"])["not_restored"] == []
            assert back.ids(KEPT) == reference
        finally:
            back.close()
    finally:
        pg_server.drop_database(name)


def test_the_id_pattern_matches_the_erased_id_only_as_a_whole_token():
    assert re.search(ID_PATTERN, '("alice",3)') and not re.search(ID_PATTERN, '("alice2",3)')


def test_the_audit_chain_records_backup_and_erasure_without_the_id_and_detects_an_edit(world):
    from lumina_memory.graphs.erase import audit_log
    from lumina_memory.stores.ids import AUDIT_TABLE

    log = audit_log(world["opened"].services)
    rows = log.rows()
    assert {"backup", "user_erased"} <= {r["event"] for r in rows}
    assert re.search(ID_PATTERN, json.dumps(rows)) is None
    assert log.verify()["ok"], log.verify()
    seq = max(r["seq"] for r in rows if r["event"] == "backup")
    with psycopg.connect(world["uri"], autocommit=True) as con:
        detail = con.execute(f"SELECT detail FROM {AUDIT_TABLE} WHERE seq = %s", [seq]).fetchone()[0]
        con.execute(f"UPDATE {AUDIT_TABLE} SET detail = '{{}}' WHERE seq = %s", [seq])
        try:
            broken = log.verify()
            assert not broken["ok"] and broken["broken_at"] == seq and "content" in broken["problem"]
        finally:
            con.execute(f"UPDATE {AUDIT_TABLE} SET detail = %s WHERE seq = %s", [detail, seq])
    assert log.verify()["ok"]


@pytest.mark.parametrize("hostile", ["../alice", "alice'; DROP TABLE turn_archive; --", "alice\n", "al%ce",
                                     "alice) RETURN n //", "ａｌｉｃｅ", "alice\ud800", ""])
def test_hostile_ids_are_refused_by_name_and_touch_nothing(world, hostile):
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.stores.errors import InvalidInput

    services = world["opened"].services
    for call in (lambda: erase_plan(services, hostile), lambda: recall(services, hostile, "cat?"),
                 lambda: services.stores.archive.counts(hostile)):
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == "user_id"
    assert world["opened"].ids(KEPT) == world["before"][KEPT]
    assert "turn_archive" in tables(world["uri"])


def test_pii_is_redacted_before_it_reaches_the_server(tmp_path, pg_server):  # noqa: F811
    from .test_server_mode import _ingest

    raws = [f"zq{_RUN.lower()}@clinic.example.jp", f"090-{_RUN[:4].replace('A', '1')}-5{_RUN[2:5]}"]
    raws[1] = re.sub(r"[A-Z]", "7", raws[1])
    name, uri = uncompressed_database(pg_server)
    opened = Opened(tmp_path / "data", tmp_path / "backups", uri)
    try:
        _ingest(opened.services, "pii-user", [("user", f"獣医さんのメールは{raws[0]}、電話は{raws[1]}です"),
                                              ("lumina", "覚えておくね")])
        store = make_store(opened.settings, embedder=opened.services.embedder)
        try:
            store.put(("memories", "pii-user"), "vet", {"text": f"vet mail {raws[0]}"})
        finally:
            store.close()
        assert rows_naming(uri, raws) == {}
        assert rows_naming(uri, ["[メール]"]) and rows_naming(uri, ["[電話番号]"])  # the memories are there
        folder = _data_folder(uri)
        # Never sent, so in no file of the server at all: not its tables, not its write-ahead log.
        assert [p for p in folder.rglob("*") if p.is_file() and any(r.encode() in p.read_bytes() for r in raws)] == []
    finally:
        opened.close()
        pg_server.drop_database(name)


def test_cli_audit_verify_reads_the_servers_chain(cli_factory, pg_server):  # noqa: F811
    name, uri = fresh_database(pg_server)
    try:
        cli = cli_factory(in_process=True, LUMINA_DATABASE_URL=uri, LUMINA_SECRET_KEY=SECRET)
        cli("backup")
        out = cli("audit", "--verify", "--json").stdout
        assert json.loads(out)["ok"] is True and json.loads(out)["rows"] >= 1
        assert not list(cli.data_dir.glob("archive.duckdb*"))  # the server's log, not a file of this replica
        with psycopg.connect(uri, autocommit=True) as con:
            con.execute("UPDATE session_log SET detail = '{}' WHERE event = 'backup'")
        broken = cli("audit", "--verify", check=False)
        assert broken.returncode == 1 and "broken at seq" in broken.stdout
    finally:
        pg_server.drop_database(name)


def test_the_rewrite_clears_statistics_for_a_role_that_is_no_superuser(pg_server):  # noqa: F811
    """A deployment's role owns its tables but not the catalogue: the erasure's rewrite still runs (no error) and
    the sampled values of deleted rows leave the statistics the planner shows."""
    from lumina_memory.stores.pg_connection import PostgresConnection

    role, database = f"app_{_RUN.lower()}", f"appdb_{_RUN.lower()}"
    with psycopg.connect(pg_server.uri, autocommit=True) as con:
        con.execute(f'CREATE ROLE "{role}" LOGIN')
        con.execute(f'CREATE DATABASE "{database}" OWNER "{role}"')
    uri = pg_server.database_uri(database)
    uri = uri.replace(uri.split("://", 1)[1].split("@", 1)[0] + "@", f"{role}@", 1)
    db = PostgresConnection(uri, "archive")
    try:
        with db.tx() as con:
            assert con.execute("SELECT current_user").fetchone()[0] == role
            con.execute("CREATE TABLE notes (user_id VARCHAR, text VARCHAR)")
            con.execute("INSERT INTO notes SELECT ?, ? || g FROM generate_series(1, 50) AS g", [ERASED, MARK[ERASED]])
        with psycopg.connect(uri, autocommit=True) as con:
            con.execute("ANALYZE notes")
            assert con.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'notes'").fetchone()[0] == 2
        with db.tx() as con:
            con.execute("DELETE FROM notes WHERE user_id = ?", [ERASED])
        db.rewrite(["notes"])
        with psycopg.connect(uri, autocommit=True) as con:
            assert con.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'notes'").fetchone()[0] == 0
    finally:
        db.close()
        with psycopg.connect(pg_server.uri, autocommit=True) as con:
            con.execute(f'DROP DATABASE "{database}" WITH (FORCE)')
            con.execute(f'DROP ROLE "{role}"')
