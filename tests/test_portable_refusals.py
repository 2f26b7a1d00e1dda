"""What a portable import refuses, and what an export never holds (nodes.portable): broken, foreign or hostile files
are refused whole with the line named and nothing written; an erased user exports nothing and is not brought back by
an import; an export holds what was stored, redacted; the CLI writes the file private and refuses a user with memory."""

from __future__ import annotations

import json
import stat
from types import SimpleNamespace

import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.portable.export import NoMemory, export_lines
from lumina_memory.nodes.portable.load import ImportRefused, load_export
from lumina_memory.nodes.portable.read import read_export
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import stop_server
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

TURNS = [{"speaker": "user", "text": "My new address is mio.tanaka@example.com, write it down.", "ts": 1_800_000_000},
         {"speaker": "clarisse", "text": "Noted, and the kettle is on.", "ts": 1_800_000_030},
         {"speaker": "user", "text": "Tomorrow I start the pottery class in Kyoto.", "ts": 1_800_090_000}]


def _header(**over) -> str:
    head = {"format": "lumina-memory-export", "version": 1, "user_id": "mio", "exported_at": 1.0,
            "counts": {"lifecycle_day": 1}}
    return json.dumps({**head, **over})


def _refused(lines: list[str], line: str, words: str) -> None:
    with pytest.raises(InvalidInput, match=words) as caught:
        read_export(lines)
    assert caught.value.field == line


def test_broken_foreign_and_hostile_files_are_refused_naming_the_line():
    good = json.dumps({"kind": "lifecycle_day", "last_day": 20_000})
    assert read_export([_header(), good]).records == [(2, {"kind": "lifecycle_day", "last_day": 20_000})]
    _refused([_header(), '{"kind": "lifecycle_day", "last_day": '], "line 2", "not JSON")
    _refused([_header(version=2), good], "line 1", "version 2 is not supported")
    _refused(['{"user_id": "mio"}', good], "line 1", "not a Lumina Memory export")
    _refused([_header(), json.dumps({"kind": "password", "x": 1})], "line 2", "is not one of")
    _refused([_header(), json.dumps({"kind": "lifecycle_day", "last_day": 1, "user_id": "ren"})], "line 2", "user_id")
    _refused([_header(user_id="../x"), good], "line 1", "user_id")
    turn = {"kind": "turn", "turn_id": "t1", "source_id": "s1", "segment_id": "g1", "speaker": "user", "text": "hi",
            "ts": 1.0}
    for hostile in ("../x", "'; DROP TABLE turn_archive; --", "a b", ""):
        _refused([_header(counts={"turn": 1}), json.dumps({**turn, "segment_id": hostile})], "line 2", "segment_id")
    _refused([_header(counts={"turn": 1}), json.dumps({**turn, "text": "a\x00b"})], "line 2", "text: contains a NUL")
    _refused([_header(counts={"turn": 1}), json.dumps(turn).replace('"hi"', '"\\ud800"')], "line 2", "lone surrogate")
    _refused([_header(counts={"turn": 2}), json.dumps(turn)], "file", "cut short")
    _refused([], "file", "empty")


@pytest.fixture(params=["duckdb", "postgres"])
def engine_memory(request, tmp_path):
    """Services on the embedded archive or on PostgreSQL."""
    extra = {}
    if request.param == "postgres":
        extra = dict(database_url=request.getfixturevalue("pg_uri"), secret_key="portable-refusals-secret-0123456789")
    services = open_services(make_settings(tmp_path / "data", **extra))
    yield SimpleNamespace(services=services)
    services.close()
    stop_server(make_settings(tmp_path / "data"))


@pytest.mark.slow  # its PostgreSQL run starts the private server
def test_a_file_refused_at_its_last_line_writes_nothing(engine_memory):
    memory = engine_memory
    export = [_header(counts={"lifecycle_day": 1, "turn": 1}), json.dumps({"kind": "lifecycle_day", "last_day": 1}),
              json.dumps({"kind": "turn", "turn_id": "t1", "source_id": "s1", "segment_id": "../g", "speaker": "user",
                          "text": "hi", "ts": 1.0})]
    with pytest.raises(InvalidInput, match="line 3"):
        load_export(memory.services, read_export(export))
    turn = {"kind": "turn", "turn_id": "t1", "source_id": "s1", "segment_id": "g1", "speaker": "user", "text": "hi",
            "ts": 1.0, "ingest_seq": 1}
    twice = read_export([_header(counts={"turn": 2}), json.dumps(turn), json.dumps({**turn, "text": "bye"})])
    with pytest.raises(InvalidInput, match="already on line 2"):
        load_export(memory.services, twice)
    unknown = read_export([_header(counts={"turn": 1}), json.dumps({**turn, "mood": "sunny"})])
    with pytest.raises(InvalidInput, match=r"\['mood'\]"):
        load_export(memory.services, unknown)
    missing = read_export([_header(counts={"turn": 2}), json.dumps({**turn, "archived_at": 2.0}),
                           json.dumps({**turn, "turn_id": "t2", "source_id": "s2"})])
    with pytest.raises(InvalidInput, match=r"line 3: turn fields \['archived_at'\] are missing"):
        load_export(memory.services, missing)
    mistyped = read_export([_header(counts={"turn": 1}), json.dumps({**turn, "archived_at": "yesterday"})])
    with pytest.raises(InvalidInput, match=r"lines 2-2: turn records refused by the (duckdb|postgres) archive"):
        load_export(memory.services, mistyped)
    assert {p.table: p.count("mio") for p in memory.services.stores.archive.user_data_places()
            if hasattr(p, "table") and p.count("mio")} == {}


@pytest.mark.slow
def test_an_erased_user_exports_nothing_and_no_import_brings_the_id_back(memory):
    replay(memory.graph, "mio", TURNS)
    export = read_export(list(export_lines(memory.services, "mio")))
    assert "mio.tanaka@example.com" not in json.dumps([r for _, r in export.records], ensure_ascii=False)
    assert any("[email]" in r["text"] for _, r in export.records if r["kind"] == "turn")  # stored redacted, so exported redacted
    erase_user(memory.services, "mio", erase_plan(memory.services, "mio")["token"])
    with pytest.raises(NoMemory, match="no memory for user 'mio'"):
        list(export_lines(memory.services, "mio"))
    with pytest.raises(ImportRefused, match="erased"):
        load_export(memory.services, export)
    assert list_memories(memory.services, "mio") == []
    load_export(memory.services, export, "mio-2")  # under an id of its own it goes in
    texts = [m["text"] for m in list_memories(memory.services, "mio-2")]
    assert len(texts) == export.header["counts"]["memory"] and "[email]" in " ".join(texts)
    with open_registry(memory.services) as places:  # what the import wrote, every tier, the erasure reaches
        assert sum(p.count("mio-2") for p in places) > 0
    erase_user(memory.services, "mio-2", erase_plan(memory.services, "mio-2")["token"])
    with open_registry(memory.services) as places:
        assert {p.name: p.count("mio-2") for p in places if p.count("mio-2")} == {}


@pytest.mark.slow
def test_the_cli_exports_to_a_private_file_and_imports_it_under_another_id(cli_factory, tmp_path):
    run = cli_factory(in_process=True)
    source = tmp_path / "talk.jsonl"
    source.write_text("".join(json.dumps({"user_id": "ren", **t}) + "\n" for t in TURNS), encoding="utf-8")
    run("ingest", str(source))
    out = tmp_path / "ren.export.jsonl"
    run("export", "--user", "ren", "--out", str(out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["user_id"] == "ren" and header["counts"]["turn"] == 3
    run("import", str(out), "--user", "ren-2")
    mine = json.loads(run("memories", "--user", "ren-2", "--json").stdout)
    theirs = json.loads(run("memories", "--user", "ren", "--json").stdout)
    assert sorted(m["text"] for m in mine) == sorted(m["text"] for m in theirs) != []
    audit = run("audit").stdout
    assert "memory_exported" in audit and "memory_imported" in audit and "ren" not in audit.replace("render", "")
    again = run("import", str(out), "--user", "ren-2", check=False)
    assert again.returncode == 2 and "already has memory" in again.stdout + again.stderr
    missing = run("export", "--user", "nobody", check=False)
    assert missing.returncode == 2 and "no memory for user 'nobody'" in missing.stdout + missing.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text(out.read_text(encoding="utf-8") + '{"kind": "turn", \n', encoding="utf-8")
    refused = run("import", str(broken), "--user", "ren-3", check=False)
    assert refused.returncode == 2 and "line" in refused.stdout + refused.stderr
    assert json.loads(run("memories", "--user", "ren-3", "--json").stdout) == []
