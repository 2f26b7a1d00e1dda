"""The memory's shared state (stores.shared_state) on both adapters: the data dir's files and the real private
PostgreSQL. Two objects (and two real processes) on one database updating one document lose nothing; hostile
names are refused before anything is written; what one process marks (an erasure in progress, a used erase
token, an owed location) every other process sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from lumina_memory.stores import known_locations
from lumina_memory.stores.erasure import (
    IN_PROGRESS_FILE, USED_TOKENS_DIR, check_token, erasures_in_progress, make_token, mark_erasure_finished,
    mark_erasure_started, refuse_while_erasing,
)
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.pg_connection import PostgresConnection
from lumina_memory.stores.shared_state import (
    DataDirState, PostgresState, close_shared_states, open_shared_state,
)

from .conftest import make_settings
from .engine_fixture import closed_after
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]
KEY = bytes(range(32))
HOSTILE = ["../x", "a/b", "'; DROP TABLE lumina_state; --", "", ".hidden", "a..b", "x" * 101, "al\ud800ce",
           "MATCH (n) DETACH DELETE n", "a\nb", "a b", None, 5]


def _open(kind: str, tmp_path: Path, request):
    if kind == "dir":
        return DataDirState(tmp_path)
    return PostgresState(PostgresConnection(request.getfixturevalue("pg_uri"), "state"))


@pytest.fixture(params=["dir", "postgres"])
def state(request, tmp_path):
    yield from closed_after(_open(request.param, tmp_path, request))


@pytest.fixture(params=["dir", "postgres"])
def state_pair(request, tmp_path):
    """Two state objects on one memory: two connections (pools) on one database, or two on one data dir."""
    first, second = _open(request.param, tmp_path, request), _open(request.param, tmp_path, request)
    yield first, second
    for opened in (first, second):
        if isinstance(opened, PostgresState):
            opened.close()


def test_a_document_is_created_updated_and_deleted(state):
    assert state.read("doc.json") is None
    assert state.update("doc.json", lambda v: {"n": 1, "text": "日本語 🙂 \x00 \ud800"}) == {
        "n": 1, "text": "日本語 🙂 \x00 \ud800"}
    assert state.read("doc.json") == {"n": 1, "text": "日本語 🙂 \x00 \ud800"}  # broken Unicode kept as escapes
    assert state.update("doc.json", lambda v: {**v, "n": v["n"] + 1})["n"] == 2
    state.write("doc.json", None)
    assert state.read("doc.json") is None
    assert state.update("doc.json", lambda v: [v]) == [None]  # a deleted document reads as absent


def test_a_failing_change_leaves_the_document_as_it_was(state):
    state.write("doc.json", {"kept": True})

    def boom(value):
        raise RuntimeError("the change fails half-way")

    with pytest.raises(RuntimeError):
        state.update("doc.json", boom)
    assert state.read("doc.json") == {"kept": True}
    with pytest.raises(InvalidInput) as refused:  # a value JSON cannot hold is named, and nothing changes
        state.write("doc.json", {"x": float("nan")})
    assert refused.value.field == "value" and state.read("doc.json") == {"kept": True}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused_and_nothing_is_written(state, tmp_path, name):
    for call in (lambda: state.read(name), lambda: state.write(name, {"x": 1}), lambda: state.claim(name, "k"),
                 lambda: state.claim("kind", name), lambda: state.claims(name)):
        with pytest.raises(InvalidInput):
            call()
    assert state.claims("kind") == []
    if isinstance(state, DataDirState):
        assert os.listdir(tmp_path) == []
    else:
        with state.db.read() as con:
            assert con.execute("SELECT count(*) FROM lumina_state").fetchone()[0] == 0


def test_a_claim_is_won_once(state):
    assert state.claim("tokens", "100.abc") is True
    assert state.claim("tokens", "100.abc") is False
    assert state.claim("tokens", "200.def") is True
    assert state.claim("other", "100.abc") is True  # kinds are separate
    assert state.claims("tokens") == ["100.abc", "200.def"]
    state.drop_claims("tokens", ["100.abc"])
    assert state.claims("tokens") == ["200.def"]
    assert state.claim("tokens", "100.abc") is True


def test_two_objects_updating_one_document_at_once_lose_nothing(state_pair):
    first, second = state_pair
    rounds = 25

    def bump(target, who):
        for _ in range(rounds):
            target.update("counter.json", lambda v: {**(v or {}), "n": (v or {}).get("n", 0) + 1,
                                                     who: (v or {}).get(who, 0) + 1})

    threads = [threading.Thread(target=bump, args=(obj, f"t{i}")) for i, obj in enumerate([first, second] * 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    final = second.read("counter.json")
    assert final == {"n": 4 * rounds, **{f"t{i}": rounds for i in range(4)}}


def test_two_objects_claiming_one_key_at_once_one_wins(state_pair):
    first, second = state_pair
    won: list[bool] = []
    threads = [threading.Thread(target=lambda obj=obj: won.append(obj.claim("tokens", "1.x")))
               for obj in [first, second] * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * 5 + [True]


BUMPER = textwrap.dedent("""
    import sys
    from lumina_memory.stores.pg_connection import PostgresConnection
    from lumina_memory.stores.shared_state import PostgresState

    state = PostgresState(PostgresConnection(sys.argv[1], "state"))
    for _ in range(int(sys.argv[2])):
        state.update("counter.json", lambda v: {"n": (v or {}).get("n", 0) + 1})
    state.close()
""")


def test_two_processes_updating_one_document_lose_nothing(pg_uri):
    rounds = 30
    children = [subprocess.Popen([sys.executable, "-c", BUMPER, pg_uri, str(rounds)], cwd=REPO,
                                 env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
    here = PostgresState(PostgresConnection(pg_uri, "state"))
    try:
        for _ in range(rounds):
            here.update("counter.json", lambda v: {"n": (v or {}).get("n", 0) + 1})
        for child in children:
            assert child.wait(timeout=300) == 0, child.stderr.read()[-2000:]
        assert here.read("counter.json") == {"n": 3 * rounds}
    finally:
        here.close()


def test_the_data_dir_keeps_todays_files(tmp_path):
    """Existing data dirs keep working: the documents are the same files, readable as they were written."""
    (tmp_path / IN_PROGRESS_FILE).write_text(json.dumps(["alice"]))
    (tmp_path / "backup-locations.json").write_text(json.dumps(
        {"format": 1, "locations": {"/b": {"first_at": 1.0, "why": "backup", "last_at": 2.0}}, "owed": {"/c": ["x"]}}))
    assert erasures_in_progress(tmp_path) == ["alice"]
    assert known_locations.known(tmp_path) == ["/b", "/c"]
    known_locations.paid(tmp_path, "/c", "x")
    saved = json.loads((tmp_path / "backup-locations.json").read_text())
    assert saved["owed"] == {} and saved["format"] == 1 and saved["locations"]["/b"]["last_at"] == 2.0
    mark_erasure_finished(tmp_path, "alice")
    assert not (tmp_path / IN_PROGRESS_FILE).exists()  # the mark lives only while an erasure runs
    token, _ = make_token(KEY, "alice", 60, now=1_000)
    check_token(KEY, "alice", token, now=1_010, consume_in=DataDirState(tmp_path))
    assert len(os.listdir(tmp_path / USED_TOKENS_DIR)) == 1


def test_open_shared_state_follows_the_settings(tmp_path, pg_uri):
    embedded = open_shared_state(make_settings(tmp_path / "data"))
    assert isinstance(embedded, DataDirState) and embedded.root == (tmp_path / "data").resolve()
    try:
        server = open_shared_state(make_settings(tmp_path / "data", database_url=pg_uri))
        assert isinstance(server, PostgresState) and server.shared
        assert open_shared_state(make_settings(tmp_path / "other", database_url=pg_uri)) is server  # one per URI
        server.write("doc.json", {"x": 1})
        assert not (tmp_path / "data" / "doc.json").exists()  # server mode writes no file
    finally:
        close_shared_states()


def test_erasure_marks_tokens_and_owed_locations_on_postgres_reach_every_process(pg_uri):
    first = PostgresState(PostgresConnection(pg_uri, "state"))
    second = PostgresState(PostgresConnection(pg_uri, "state"))
    try:
        mark_erasure_started(first, "alice")
        mark_erasure_started(second, "bob")
        assert erasures_in_progress(first) == ["alice", "bob"]
        with pytest.raises(InvalidInput) as refused:
            refuse_while_erasing(second, "alice")
        assert refused.value.field == "user_id"
        mark_erasure_finished(second, "alice")
        refuse_while_erasing(first, "alice")
        assert erasures_in_progress(first) == ["bob"]

        token, _ = make_token(KEY, "alice", 60, now=1_000)
        check_token(KEY, "alice", token, now=1_010, consume_in=first)
        with pytest.raises(InvalidInput, match="already used"):  # the other process's erasure spent it
            check_token(KEY, "alice", token, now=1_020, consume_in=second)
        assert all("alice" not in key for key in second.claims(USED_TOKENS_DIR))  # signatures, never the user

        known_locations.remember(first, "s3://bucket/site")
        known_locations.owe(second, "/mnt/usb", "carol")
        assert known_locations.known(first) == ["/mnt/usb", "s3://bucket/site"]
        assert known_locations.owed(first) == {"/mnt/usb": ["carol"]}
        known_locations.paid(first, "/mnt/usb", "carol")
        assert known_locations.owed(second) == {}
    finally:
        first.close()
        second.close()


MARKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from lumina_memory.stores.erasure import mark_erasure_finished, mark_erasure_started
    from lumina_memory.stores.shared_state import open_shared_state, close_shared_states
    from tests.conftest import make_settings

    state = open_shared_state(make_settings(Path(sys.argv[2]), database_url=sys.argv[1]))
    (mark_erasure_started if sys.argv[3] == "start" else mark_erasure_finished)(state, "alice")
    close_shared_states()
""")


def _guarded_graph(settings):
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from lumina_memory.graphs.input_guard import guard

    class State(TypedDict, total=False):
        flush: bool

    builder = StateGraph(State)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    builder.add_edge("noop", END)
    graph = guard(builder.compile())
    graph.lumina_services = lambda: SimpleNamespace(settings=settings)
    return graph


def test_an_erasure_marked_by_another_process_stops_this_process_input(tmp_path, pg_uri):
    settings = make_settings(tmp_path / "here", database_url=pg_uri)
    graph = _guarded_graph(settings)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        graph.invoke({"flush": True}, context={"user_id": "alice"})
        child = subprocess.run([sys.executable, "-c", MARKER, pg_uri, str(tmp_path / "there"), "start"], cwd=REPO,
                               env=env, capture_output=True, text=True, timeout=300)
        assert child.returncode == 0, child.stderr[-2000:]
        with pytest.raises(InvalidInput) as refused:
            graph.invoke({"flush": True}, context={"user_id": "alice"})
        assert refused.value.field == "user_id" and "being erased" in str(refused.value)
        graph.invoke({"flush": True}, context={"user_id": "bob"})  # other users go on
        assert not (tmp_path / "here" / IN_PROGRESS_FILE).exists()
        child = subprocess.run([sys.executable, "-c", MARKER, pg_uri, str(tmp_path / "there"), "finish"], cwd=REPO,
                               env=env, capture_output=True, text=True, timeout=300)
        assert child.returncode == 0, child.stderr[-2000:]
        graph.invoke({"flush": True}, context={"user_id": "alice"})
    finally:
        close_shared_states()


def test_a_finished_erasure_leaves_no_id_in_the_state_tables_files(pg_server, pg_uri):
    """PostgreSQL keeps an updated row's old version in the table's pages until vacuumed: finishing an erasure
    rewrites the state tables, so the erased id is no longer in their files."""
    state = PostgresState(PostgresConnection(pg_uri, "state"))
    marker = "zebramark-user"
    try:
        mark_erasure_started(state, marker)
        mark_erasure_started(state, "kept-user")
        with state.db.read() as con:
            data_dir = Path(con.execute("SHOW data_directory").fetchone()[0])
            con.execute("CHECKPOINT")
            path = data_dir / con.execute("SELECT pg_relation_filepath('lumina_state')").fetchone()[0]
        assert marker.encode() in path.read_bytes()
        mark_erasure_finished(state, marker)
        with state.db.read() as con:
            con.execute("CHECKPOINT")
            path = data_dir / con.execute("SELECT pg_relation_filepath('lumina_state')").fetchone()[0]
        assert marker.encode() not in path.read_bytes() and b"kept-user" in path.read_bytes()
        assert erasures_in_progress(state) == ["kept-user"]
    finally:
        state.close()
