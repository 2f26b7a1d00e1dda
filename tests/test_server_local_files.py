"""Server mode (DATABASE_URI set) keeps none of the memory's state in a process's data dir: the CLI's LangGraph
checkpoints, the erasure ledger, a restore's mark and the recall snapshots are PostgreSQL rows (or, for the
snapshots, not kept), so any process of the memory sees what another wrote, and finishes what another left
half-done. Each "process" is a separate ``Services`` with a data dir of its own; the killed restore is a real
child process. All on a real private PostgreSQL with pgvector."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import psycopg
import pytest

from bench.faults import REPO, cli_env, stop_private_redis
from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import (
    backup_now, erase_plan, erase_user, finish_interrupted_erasures, restore_from, restore_warnings,
)
from lumina_memory.graphs.idle_segments import flush_idle_threads
from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.backup import RESTORE_MARK, restore_mark, restore_state
from lumina_memory.stores.erasure import IN_PROGRESS_FILE, erasures_in_progress
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ledger import LEDGER_FILE, memory_ledger, record_erasure
from lumina_memory.stores.pg_connection import PostgresConnection, describe
from lumina_memory.stores.places.checkpoints_pg import SCHEMA, TABLES
from lumina_memory.stores.places.checkpoints_open import checkpoints_place
from lumina_memory.stores.places.checkpoints_place import FILE as CHECKPOINTS_FILE
from lumina_memory.stores.recall_snapshots import FOLDER as SNAPSHOTS_FOLDER
from lumina_memory.stores.redis_server import stop_server
from lumina_memory.stores.shared_state import DataDirState, PostgresState, close_shared_states, shared_state_of

from .pg_server import fresh_database, pg_server, pg_uri  # noqa: F401 - fixtures
from .test_restore_resume import KILL_IN_VECTORS  # a restore that SIGKILLs itself as it writes the vectors
from .test_server_guarantees import _relations_holding
from .test_server_mode import SECRET, _ingest, _settings

LOCAL = {CHECKPOINTS_FILE, LEDGER_FILE, RESTORE_MARK, SNAPSHOTS_FOLDER, IN_PROGRESS_FILE}
_RUN = uuid.uuid4().hex[:8].upper()
MARK = {"alice": f"ZEBRALF{_RUN}Q", "bob": f"OKAPILF{_RUN}Q", "carol": f"LYNXLF{_RUN}Q"}


def _rows(user: str, n: int = 6, first: int = 0) -> list[dict]:
    return [{"speaker": "user" if i % 2 == 0 else "nox", "ts": 1_760_000_000 + 60 * i, "source_id": f"{user}-{i}",
             "text": f"{MARK[user]} {user} の旅行の話 その{i}"} for i in range(first, first + n)]


def _local(data_dir: Path) -> set[str]:
    """Names of the memory's state files found anywhere under a data dir (none in server mode)."""
    return {p.name for p in data_dir.rglob("*")} & LOCAL if data_dir.exists() else set()


class Cli:
    """A CLI process on the server mode's database: Services, graph and the PostgreSQL checkpointer."""

    def __init__(self, data_dir: Path, uri: str):
        # These tests run the idle sweep themselves, on a pinned clock; the sweep at open (tests/test_idle_encoding)
        # would flush the other "process"'s threads before they look.
        self.data_dir, self.settings = data_dir, _settings(data_dir, uri).model_copy(update={"idle_sweep_on_open": False})
        self.services, self.graph, self.checkpoints = _open(self.settings)

    def close(self) -> None:
        self.services.close()
        self.checkpoints.close()
        stop_server(self.settings)


@pytest.fixture
def opened():
    """What a test opened (Cli, or Services whose private Redis is stopped here), closed after it."""
    made: list = []
    yield made
    for item in made:
        item.close()
        if not isinstance(item, Cli):
            stop_server(item.settings)
    close_shared_states()


def test_threads_written_by_one_process_are_swept_and_erased_by_another(tmp_path, pg_uri, opened):
    a = Cli(tmp_path / "a", pg_uri)
    opened.append(a)
    replay(a.graph, "alice", _rows("alice"), flush=False)  # the open segment stays in alice's thread
    replay(a.graph, "bob", _rows("bob"), flush=False)
    server_thread = str(uuid.uuid4())  # a thread with a uuid id, as a LangGraph server names them: its owner says
    a.graph.invoke({"transcript": _rows("alice", 2, 100)}, {"configurable": {"thread_id": server_thread}},
                   context={"user_id": "alice", "respond": False})
    assert not (a.data_dir / CHECKPOINTS_FILE).exists()
    with psycopg.connect(pg_uri) as con:  # uncompressed: the raw scan below reads what the pages hold
        storage = con.execute("SELECT attrelid::regclass::text, attname, attstorage FROM pg_attribute "
                              "WHERE attrelid = ANY(%s::regclass[]) AND attname IN ('checkpoint', 'blob')",
                              [[f"{SCHEMA}.{t}" for t in TABLES]]).fetchall()
    assert len(storage) == 3 and {row[2] for row in storage} == {"e"}, storage
    b = Cli(tmp_path / "b", pg_uri)
    opened.append(b)
    place = checkpoints_place(b.settings)
    assert (place.count("alice"), place.count("bob")) == (2, 1)
    for hostile in ("'; DROP TABLE checkpoints;--", "../alice", "alice' OR '1'='1", "user:alice", "al\ud800ice", ""):
        assert place.count(hostile) == 0  # a parameter, never SQL: nothing matches, the tables stay
    assert place.count("alice") == 2
    segments_before = len(b.services.stores.archive.segments("alice"))
    report = flush_idle_threads(b.services, now=1_760_000_000 + 10 * 86_400)
    assert report["flushed"] == 2 and report["turns"] == 12  # both CLI threads, found by the other process
    assert len(b.services.stores.archive.segments("alice")) > segments_before
    assert b.graph.get_state(thread_config("alice")).values.get("turns") in (None, [])

    # The erasure in B reaches A's threads, both kinds, and nothing of bob's.
    plan = erase_plan(b.services, "alice")
    assert plan["counts"]["checkpoints"] == 2
    erase_user(b.services, "alice", plan["token"], actor="test")
    assert (place.count("alice"), place.count("bob")) == (0, 1)
    assert a.graph.get_state({"configurable": {"thread_id": server_thread}}).values == {}
    assert a.graph.get_state(thread_config("bob")).values  # bob's thread (flushed, its state kept) still there
    holding = _relations_holding(pg_uri, [MARK["alice"].encode()])
    assert holding == {}, holding  # the checkpoint tables, their TOAST and pg_statistic were rewritten
    assert any(name.startswith("checkpoint") for name in _relations_holding(pg_uri, [MARK["bob"].encode()]))
    assert _local(a.data_dir) == _local(b.data_dir) == set()


class _Dies:
    """A place whose erasure fails as a killed process would stop: after the places before it."""

    name = "test.dies"

    def count(self, user_id: str) -> int:
        return 0

    def erase(self, user_id: str) -> int:
        raise RuntimeError("the process died here")


def test_an_erasure_interrupted_in_one_process_is_finished_by_another(tmp_path, pg_uri, opened):
    a = Cli(tmp_path / "a", pg_uri)
    opened.append(a)
    replay(a.graph, "alice", _rows("alice"))
    replay(a.graph, "bob", _rows("bob"))
    plan = erase_plan(a.services, "alice")
    with pytest.raises(RuntimeError, match="died"):
        erase_user(a.services, "alice", plan["token"], actor="test", extra_places=[_Dies()])
    state = shared_state_of(a.services)
    assert erasures_in_progress(state) == ["alice"] and "alice" in memory_ledger(state)
    b = open_services(_settings(tmp_path / "b", pg_uri))  # its start-up finishes what A left
    opened.append(b)
    finish_interrupted_erasures(b)
    assert erasures_in_progress(shared_state_of(b)) == []
    assert {k: v for k, v in erase_plan(b, "alice")["counts"].items() if v and not k.startswith("cache.")} == {}
    assert erase_plan(b, "bob")["counts"]["archive.turn_archive"] == 6
    assert "alice" in memory_ledger(shared_state_of(b)) and "bob" not in memory_ledger(shared_state_of(b))
    assert _local(a.data_dir) == _local(tmp_path / "b") == set()


def test_no_recall_snapshot_is_written_in_server_mode(tmp_path, pg_uri, opened):
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.nodes.retrieval.warm import warm_indexes

    from .conftest import make_settings

    data_dir = tmp_path / "a"
    settings = make_settings(data_dir, database_url=pg_uri, secret_key=SECRET, recall_snapshot_min_turns=2)
    services = open_services(settings)
    opened.append(services)
    _ingest(services, "alice", [("user", f"{MARK['alice']} モカは3歳の茶トラ"), ("lumina", "覚えてるよ"),
                                ("user", "週末は海へ行った"), ("lumina", "いいね")])
    warm_indexes(services, "alice")  # what the flush's last stage does: an embedded memory writes snapshots here
    assert MARK["alice"] in " ".join(i["text"] for i in recall(services, "alice", "茶トラ", purpose="question"))
    assert services.turn_index.snapshots is None and services.keyword_index.snapshots is None
    assert services.turn_index.summary()["snapshots_written"] == 0
    assert _local(data_dir) == set(), sorted(p.name for p in data_dir.rglob("*"))


@pytest.mark.parametrize("engine", ["datadir", "postgres"])
def test_two_writers_recording_erasures_at_once_lose_neither(engine, tmp_path, request):
    if engine == "postgres":
        uri = request.getfixturevalue("pg_uri")
        states = [PostgresState(PostgresConnection(uri, "state", pool_size=1)) for _ in range(2)]
    else:
        states = [DataDirState(tmp_path) for _ in range(2)]
    users = [[f"u{side}-{i}" for i in range(15)] for side in range(2)]
    try:
        workers = [threading.Thread(target=lambda s=s, us=us: [record_erasure(s, u) for u in us])
                   for s, us in zip(states, users)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        ledger = memory_ledger(states[1])
        assert all(u in ledger for side in users for u in side) and len(ledger.erased) == 30
        assert "u9-0" not in ledger and not any(u in ledger.text() for side in users for u in side)
        assert ledger.latest_at is not None
    finally:
        for state in states:
            getattr(state, "close", lambda: None)()
    assert ((tmp_path / LEDGER_FILE).exists()) == (engine == "datadir")


def test_a_restore_killed_in_one_process_is_refused_then_finished_by_another(tmp_path, pg_server, opened):  # noqa: F811
    source_db, source_uri = fresh_database(pg_server)
    target_db, target_uri = fresh_database(pg_server)
    try:
        src = Cli(tmp_path / "src", source_uri)
        for user in ("alice", "bob", "carol"):
            replay(src.graph, user, _rows(user))
        replay(src.graph, "alice", _rows("alice", 2, 200), flush=False)  # an open thread is backed up
        backup_now(src.services, str(tmp_path / "l1"))
        backup_now(src.services, str(tmp_path / "l2"))
        src.close()
        close_shared_states()

        a = Cli(tmp_path / "a", target_uri)  # carol is erased in the target memory before its restore
        opened.append(a)
        plan = erase_plan(a.services, "carol")
        erase_user(a.services, "carol", plan["token"], actor="test")
        child = tmp_path / "child"
        run = subprocess.run([sys.executable, "-c", KILL_IN_VECTORS, str(tmp_path / "l1")], cwd=REPO,
                             env=cli_env(child, DATABASE_URI=target_uri, LUMINA_SECRET_KEY=SECRET),
                             capture_output=True, text=True, timeout=600)
        stop_private_redis(child)
        assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
        mark = restore_mark(shared_state_of(a.services))
        assert mark is not None and "archive.turn_archive" in mark["done"] and "vectors.segments" not in mark["done"]

        b = Cli(tmp_path / "b", target_uri)
        opened.append(b)
        state = shared_state_of(b.services)
        assert restore_state(state)[0][0] == "FAIL"
        with pytest.raises(InvalidInput, match="half-restored"):
            restore_from(b.services, str(tmp_path / "l2"))  # another backup may not be mixed in
        report = restore_from(b.services, str(tmp_path / "l1"))
        assert "archive.turn_archive" in report["resumed"] and report["restored"]["vectors.segments"] > 0
        assert any(entry["where"].startswith("memory on ") and entry["erasures"] == 1
                   for entry in report["ledgers_applied"])
        # The snapshots come from another database, whose ledger is not here, though its data dir exists.
        assert report["warnings"] and all(f"/{source_db}, whose erasure ledger is not reachable" in w
                                          for w in report["warnings"]), report["warnings"]
        own = {"id": "s", "created_at": 0, "source": {"database": describe(target_uri), "data_dir": "/nowhere"}}
        assert restore_warnings(b.services, None, [own], []) == []  # this memory's ledger was applied
        assert restore_mark(shared_state_of(a.services)) is None and restore_state(state)[0][0] == "OK"
        archive = b.services.stores.archive
        assert [archive.counts(u)["turns"] for u in ("alice", "bob", "carol")] == [6, 6, 0]
        place = checkpoints_place(b.settings)
        assert [place.count(u) for u in ("alice", "bob", "carol")] == [1, 1, 0]
        assert len(a.graph.get_state(thread_config("alice")).values["turns"]) == 2  # the open segment came back
        with pytest.raises(InvalidInput, match="already holds"):
            restore_from(b.services, str(tmp_path / "l1"))  # finished: a new restore is refused again
        for data_dir in (tmp_path / "src", a.data_dir, child, b.data_dir):
            assert _local(data_dir) == set(), data_dir
    finally:
        close_shared_states()
        pg_server.drop_database(source_db)
        pg_server.drop_database(target_db)
