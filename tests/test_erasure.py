"""Erasure (L11): the registry, confirmation tokens, isolation whatever the ids, and the CLI."""

from __future__ import annotations

import json

import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.erasure import check_token, make_token
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.user_data import UserDataPlace, missing_methods


def _turns(user: str, n: int = 12) -> list[dict]:
    return [{"speaker": "user" if i % 2 == 0 else "lumina", "text": f"{user}の猫の話 その{i} 猫は元気です",
             "ts": 1_760_000_000 + 60 * i, "source_id": f"{user}-{i}"} for i in range(n)]


def test_every_place_of_the_registry_implements_the_whole_protocol(memory):
    store = make_store(memory.settings, embedder=memory.services.embedder)
    store.put(("memories", "ann"), "k", {"text": "hello"})
    store.close()
    with open_registry(memory.services) as places:
        names = [p.name for p in places]
        assert len(names) == len(set(names)), names
        for place in places:
            assert missing_methods(place) == [], place.name
            assert isinstance(place, UserDataPlace), place.name
    for expected in ("midterm.redis", "archive.turn_archive", "archive.session_archive", "archive.session_log",
                     "vectors.segments", "vectors.turns", "graph", "store.items", "checkpoints",
                     "cache.keyword_index", "cache.turn_index", "cache.embedder", "recall_snapshots"):
        assert expected in names


def test_a_token_is_bound_to_its_user_its_data_dir_and_its_expiry():
    key, other_key = b"k" * 32, b"o" * 32
    token, expiry = make_token(key, "alice", 60, now=1_000)
    assert expiry == 1_060
    check_token(key, "alice", token, now=1_030)
    for user, k, now in (("alice2", key, 1_030), ("alic", key, 1_030), ("alice", other_key, 1_030)):
        with pytest.raises(InvalidInput) as err:
            check_token(k, user, token, now=now)
        assert err.value.field == "token"
    with pytest.raises(InvalidInput, match="expired"):
        check_token(key, "alice", token, now=1_061)
    for bad in ("", "nonsense", "12.34.56", None, 5):
        with pytest.raises(InvalidInput):
            check_token(key, "alice", bad)


def test_erasing_a_prefix_id_leaves_the_longer_one_and_bad_ids_erase_nothing(memory):
    for user in ("bob", "bob2", "bob.x"):
        replay(memory.graph, user, _turns(user))
    services = memory.services
    with open_registry(services) as places:
        before = {u: {p.name: p.count(u) for p in places} for u in ("bob2", "bob.x")}
    assert before["bob2"]["archive.turn_archive"] == 12
    # Glob characters and a Cyrillic look-alike are refused, naming the field, before anything is read.
    for bad in ("bob*", "bo?", "b[o]b", "bоb", "bob\n", "bob/../x"):
        with pytest.raises(InvalidInput) as err:
            erase_plan(services, bad)
        assert err.value.field == "user_id"
    plan = erase_plan(services, "bob")
    assert plan["counts"]["archive.turn_archive"] == 12 and plan["token"]
    with pytest.raises(InvalidInput):  # bob's token does not erase bob2
        erase_user(services, "bob2", plan["token"])
    report = erase_user(services, "bob", plan["token"])
    assert report["removed"]["archive.turn_archive"] == 12
    with open_registry(services) as places:
        after = {u: {p.name: p.count(u) for p in places} for u in ("bob2", "bob.x")}
        assert all(p.count("bob") == 0 for p in places if p.name != "cache.embedder")
    for user in ("bob2", "bob.x"):
        assert {k: v for k, v in after[user].items() if not k.startswith("cache.")} == \
               {k: v for k, v in before[user].items() if not k.startswith("cache.")}
    # The erasure is in the audit log, with the user only as a keyed hash.
    from lumina_memory.graphs.erase import audit_log

    rows = audit_log(services).rows()
    assert rows[-1]["event"] == "user_erased" and rows[-1]["user_ref"].startswith("u:")
    assert "bob" not in json.dumps(rows[-1], ensure_ascii=False).replace(rows[-1]["user_ref"], "")


@pytest.fixture
def cli(cli_factory, tmp_path):
    return cli_factory(LUMINA_BACKUP_LOCATION=str(tmp_path / "backups"))


def test_cli_erase_shows_counts_and_a_token_then_erases_with_it(cli, tmp_path):
    lines = [{"user_id": u, **t} for u in ("ivy", "ivy2") for t in _turns(u, 6)]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    cli("ingest", str(path))
    shown = json.loads(cli("erase", "--user", "ivy", "--json").stdout)
    assert shown["counts"]["archive.turn_archive"] == 6 and shown["user_id"] == "ivy"
    assert shown["token"] and shown["expires_at"] > 0
    assert (tmp_path / "data" / "lumina.secret").stat().st_mode & 0o777 == 0o600
    wrong = cli("erase", "--user", "ivy", "--confirm", "123.abc", check=False)
    assert wrong.returncode == 2 and "token" in wrong.stdout
    done = json.loads(cli("erase", "--user", "ivy", "--confirm", shown["token"], "--json").stdout)
    assert done["removed"]["archive.turn_archive"] == 6
    again = json.loads(cli("erase", "--user", "ivy", "--json").stdout)
    assert {name: n for name, n in again["counts"].items() if n and name != "cache.embedder"} == {}
    assert "6 turns" in cli("stats", "--user", "ivy2").stdout
    audit = cli("audit", "--verify").stdout
    assert "intact" in audit


def test_threads_are_the_users_by_id_or_by_their_states_owner(tmp_path):
    """A LangGraph server's threads have uuid ids: the state's owner says whose they are."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.places.checkpoints_place import CheckpointsPlace
    from lumina_memory.stores.redis_server import stop_server

    from .conftest import make_settings

    settings = make_settings(tmp_path / "data")
    services = open_services(settings)
    conn = sqlite3.connect(tmp_path / "data" / "checkpoints.sqlite", check_same_thread=False)
    try:
        graph = build_graph(services, checkpointer=SqliteSaver(conn))
        for thread, user in (("3f1c-uuid-a", "uma"), ("3f1c-uuid-b", "uma2"), ("user:uma", "uma")):
            graph.invoke({"turn": {"speaker": "user", "text": f"{user} の秘密の話 SECRETQ{user}", "ts": 1_760_000_000}},
                         {"configurable": {"thread_id": thread}}, context={"user_id": user, "respond": False})
        place = CheckpointsPlace(tmp_path / "data" / "checkpoints.sqlite")
        assert place.threads_of("uma") == ["3f1c-uuid-a", "user:uma"]
        assert place.erase("uma") == 2
        place.scrub()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert place.threads_of("uma") == [] and place.threads_of("uma2") == ["3f1c-uuid-b"]
        raw = b"".join(p.read_bytes() for p in place.raw_paths() if p.exists())
        assert b"SECRETQuma" not in raw.replace(b"SECRETQuma2", b"") and b"SECRETQuma2" in raw
        assert graph.get_state({"configurable": {"thread_id": "3f1c-uuid-a"}}).values == {}
    finally:
        conn.close()
        services.close()
        stop_server(settings)


def test_cli_audit_verify_fails_when_a_row_was_edited(cli, tmp_path):
    import duckdb

    cli("backup")
    cli("backup")
    assert "intact" in cli("audit", "--verify").stdout
    cli("services", "stop")
    con = duckdb.connect(str(tmp_path / "data" / "archive.duckdb"))
    con.execute("UPDATE session_log SET detail = '{}' WHERE event = 'backup' AND seq = (SELECT min(seq) FROM session_log)")
    con.close()
    broken = cli("audit", "--verify", check=False)
    assert broken.returncode == 1 and "broken at seq" in broken.stdout


def test_the_embedder_cache_place_counts_and_empties_the_cache_and_embedding_still_works():
    import numpy as np

    from lumina_memory.graphs.registry import EmbedderCachePlace
    from lumina_memory.nodes.text.embedder import CachedEmbedder

    class Inner:  # a stand-in model (no store): vectors from the text length
        name, dim, path = "len", 2, "offline"

        def embed(self, texts):
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    embedder = CachedEmbedder(Inner(), size=8)
    place = EmbedderCachePlace(embedder)
    embedder.embed(["a", "bb", "a"])
    assert place.count("anyone") == embedder.cached() == 2
    assert place.erase("anyone") == 2 and embedder.cached() == 0 and place.count("anyone") == 0
    assert embedder.embed(["bb"]).tolist() == [[2.0, 1.0]] and embedder.cached() == 1
