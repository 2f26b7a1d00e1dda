"""Other tools' memories imported as conversation (nodes.portable.importers, graphs.cli_portable): a LangGraph store
dump, mem0's exported memories and LangMem's memories each become memories of the user that recall finds, at their
original time; bad files are refused naming the line, before anything is written."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from langgraph.checkpoint.memory import InMemorySaver

from lumina_memory.graphs.cli_portable import import_turns
from lumina_memory.graphs.memory_graph import build_graph
from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.portable.importers import foreign_turns
from lumina_memory.nodes.portable.load import ImportRefused, refuse_erased
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import stop_server
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

MARCH = "2025-03-14T09:30:00+00:00"
MAY = "2025-05-02T18:00:00+00:00"


def _item(key: str, value: dict, at: str, namespace=("memories", "kai")) -> str:
    return json.dumps({"namespace": list(namespace), "key": key, "value": value, "created_at": at, "updated_at": at})


STORE_DUMP = [_item("k1", {"content": "Kai keeps a sourdough starter named Bubbles."}, MARCH),
              _item("k2", {"text": "Kai's sister Hana plays the oboe."}, MAY)]
LANGMEM_DUMP = [_item("m1", {"kind": "Memory", "content": {"content": "Kai is allergic to walnuts."}}, MARCH),
                _item("p1", {"kind": "Prompt", "content": {"content": "Be terse."}}, MARCH),
                _item("m2", {"kind": "Memory", "content": {"content": "Kai rows on the canal every Sunday."}}, MAY)]
MEM0 = {"results": [
    {"id": "2f4c9a9e-0000-4000-8000-000000000001", "memory": "Prefers green tea over coffee", "hash": "h1",
     "metadata": None, "created_at": "2025-03-14T02:30:00.123456-07:00", "updated_at": None, "user_id": "kai"},
    {"id": "2f4c9a9e-0000-4000-8000-000000000002", "memory": "Is learning to play the cello", "hash": "h2",
     "metadata": {"source": "chat"}, "created_at": MAY, "updated_at": MAY, "user_id": "kai"}]}


def _at(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def test_each_format_is_read_as_user_turns_at_their_original_time():
    store = foreign_turns("langgraph-store", STORE_DUMP)
    assert [(t["speaker"], t["text"], t["ts"]) for t in store] == [
        ("user", "Kai keeps a sourdough starter named Bubbles.", _at(MARCH)),
        ("user", "Kai's sister Hana plays the oboe.", _at(MAY))]
    langmem = foreign_turns("langmem", LANGMEM_DUMP)
    assert [t["text"] for t in langmem] == ["Kai is allergic to walnuts.", "Kai rows on the canal every Sunday."]
    mem0 = foreign_turns("mem0", [json.dumps(MEM0)])
    assert [(t["text"], t["ts"]) for t in mem0] == [
        ("Prefers green tea over coffee", datetime(2025, 3, 14, 9, 30, 0, 123456, tzinfo=timezone.utc).timestamp()),
        ("Is learning to play the cello", _at(MAY))]
    assert foreign_turns("mem0", [json.dumps(m) for m in MEM0["results"]]) == mem0  # one memory per line too
    assert foreign_turns("mem0", [json.dumps(MEM0["results"])]) == mem0  # a bare list too
    # the same memory gives the same source id (a second import rewrites it), different ones differ
    assert foreign_turns("langgraph-store", STORE_DUMP) == store
    assert len({t["source_id"] for t in store + langmem + mem0}) == 6


def test_bad_files_are_refused_naming_the_line():
    cases = [("langgraph-store", [STORE_DUMP[0], '{"namespace": ['], "line 2", "not JSON"),
             ("langgraph-store", [json.dumps({"key": "k", "value": "text"})], "line 1", "not a store item"),
             ("langgraph-store", [_item("k", {"content": "x"}, "2025-03-14T09:30:00")], "line 1.created_at", "no UTC offset"),
             ("langmem", [_item("k", {"kind": "Memory", "content": {"content": "  "}}, MARCH)], "line 1", "empty"),
             ("langmem", [_item("p", {"kind": "Prompt", "content": "x"}, MARCH)], "file", "no langmem memories"),
             ("mem0", [json.dumps({"results": [{"id": "a", "memory": "x"}]})], "results[0].created_at", "missing"),
             ("mem0", [json.dumps({"results": [{"memory": "x", "created_at": MAY}]})], "results[0]", "not a mem0 memory"),
             ("mem0", ['{"results": [{"id": "a", "memory": "x", "created_at": NaN}]}'], "results[0].created_at",
              "not a time")]
    for source, lines, field, words in cases:
        with pytest.raises(InvalidInput, match=words) as caught:
            foreign_turns(source, lines)
        assert caught.value.field == field, (source, lines)


@pytest.fixture(params=["duckdb", "postgres"])
def memory(request, tmp_path):
    """Services and the memory graph on the embedded archive or on PostgreSQL."""
    extra = {}
    if request.param == "postgres":
        extra = dict(database_url=request.getfixturevalue("pg_uri"), secret_key="portable-importers-secret-0123456789")
    services = open_services(make_settings(tmp_path / "data", **extra))
    yield SimpleNamespace(services=services, graph=build_graph(services, checkpointer=InMemorySaver()))
    services.close()
    stop_server(make_settings(tmp_path / "data"))


@pytest.mark.slow
def test_imported_memories_are_recalled_and_an_erased_id_is_refused(memory):
    turns = foreign_turns("mem0", [json.dumps(MEM0)]) + foreign_turns("langmem", LANGMEM_DUMP)
    assert import_turns(memory.graph, "kai", sorted(turns, key=lambda t: t["ts"]), "mem0") == 4
    memories = list_memories(memory.services, "kai")
    assert len(memories) == 4  # one memory each
    assert sorted(m["created"] for m in memories) == sorted(t["ts"] for t in turns)
    found = " / ".join(i["text"] for i in recall(memory.services, "kai", "What is Kai allergic to?", limit=3))
    assert "walnuts" in found
    found = " / ".join(i["text"] for i in recall(memory.services, "kai", "Which instrument am I learning?", limit=3))
    assert "cello" in found
    assert recall(memory.services, "someone-else", "What is Kai allergic to?", limit=3) == []
    import_turns(memory.graph, "kai", turns, "mem0")  # the same file again rewrites the same memories
    assert len(list_memories(memory.services, "kai")) == 4
    erase_user(memory.services, "kai", erase_plan(memory.services, "kai")["token"])
    with pytest.raises(ImportRefused, match="erased"):
        refuse_erased(memory.services, "kai")


@pytest.mark.slow
def test_the_cli_imports_a_store_dump_for_a_user(cli_factory, tmp_path):
    run = cli_factory(in_process=True)
    dump = tmp_path / "store.jsonl"
    dump.write_text("\n".join(STORE_DUMP) + "\n", encoding="utf-8")
    missing = run("import", "--from", "langgraph-store", str(dump), check=False)
    assert missing.returncode == 2 and "--user" in missing.stdout + missing.stderr
    run("import", "--from", "langgraph-store", str(dump), "--user", "kai")
    memories = json.loads(run("memories", "--user", "kai", "--json").stdout)
    assert sorted(m["created"] for m in memories) == [_at(MARCH), _at(MAY)]
    recalled = json.loads(run("recall", "--user", "kai", "What is the sourdough starter called?", "--json").stdout)
    assert "Bubbles" in " ".join(i["text"] for i in recalled)
