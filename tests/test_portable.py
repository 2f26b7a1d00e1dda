"""A user's memory exported and imported back (nodes.portable, graphs.cli_portable; docs/portable.md): under another
user id every kind comes back field by field and recall returns the same items, on the embedded archive and on
PostgreSQL; erased users, users that already hold memory and broken files are refused with nothing written."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.graphs.memory_graph import build_graph
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.manage import list_knowledge
from lumina_memory.nodes.knowledge.procedures import list_procedures, record_outcome
from lumina_memory.nodes.knowledge.profile import build_profile
from lumina_memory.nodes.lifecycle.manage import list_memories, set_protected
from lumina_memory.nodes.portable.export import export_lines
from lumina_memory.nodes.portable.load import ImportRefused, id_map, load_export
from lumina_memory.nodes.portable.read import read_export
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.redis_server import stop_server
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

SECRET = "portable-test-secret-0123456789abcdef"
DAY = 86_400.0
QUESTIONS = ("モカは何歳？", "京都で何を食べた？", "Where do I live now?")
MOVES = [{"speaker": "user", "text": "I live in Osaka near the river.", "ts": 1_800_000_000},
         {"speaker": "lumina", "text": "Osaka suits you.", "ts": 1_800_000_030},
         {"speaker": "user", "text": "I moved to Sapporo last week, the snow is deep.", "ts": 1_801_000_000},
         {"speaker": "nox", "text": "Sapporo in winter, brave.", "ts": 1_801_000_030}]


@pytest.fixture(params=["duckdb", "postgres"])
def services(request, tmp_path):
    extra = {}
    if request.param == "postgres":
        extra = dict(database_url=request.getfixturevalue("pg_uri"), secret_key=SECRET)
    opened = open_services(make_settings(tmp_path / "data", **extra))
    yield opened
    opened.close()
    stop_server(make_settings(tmp_path / "data"))


def _fill(services, user: str, demo_rows) -> None:
    graph = build_graph(services, checkpointer=InMemorySaver())
    replay(graph, user, [*demo_rows, *MOVES])
    first = list_memories(services, user)[0]["memory_id"]
    set_protected(services, user, first, True)
    others = [m["memory_id"] for m in list_memories(services, user)[1:3]]
    services.stores.archive.memories.add_relations(user, [(others[0], others[1], "same_topic", 0.8)], day=20_400)
    procedure = list_procedures(services, user)[0]["procedure_id"]
    record_outcome(services, user, procedure, True, outcome_id="outcome-1")


def _renamed(value, mapping):
    if isinstance(value, dict):
        return {k: _renamed(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, mapping) for v in value]
    return mapping.get(value, value) if isinstance(value, str) else value


def _key(item: dict) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _views(services, user: str) -> dict:
    return {"memories": list_memories(services, user), "knowledge": list_knowledge(services, user, history=True),
            "procedures": list_procedures(services, user, history=True),
            "recall": [[{k: i[k] for k in ("text", "score", "kind", "level")} for i in
                        recall(services, user, q, purpose="question", limit=5)] for q in QUESTIONS]}


@pytest.mark.slow
def test_an_export_imported_under_another_id_gives_back_every_kind_and_the_same_recall(services, demo_rows):
    _fill(services, "mio", demo_rows)
    export = read_export(list(export_lines(services, "mio")))
    # Both sides are read from the state the file holds: a recall changes what it recalls (counts, revivals)
    before = _views(services, "mio")
    profile = _profile(services, "mio")
    counts = export.header["counts"]
    kinds = ("turn", "segment", "memory", "relation", "fact", "procedure")
    assert {k: counts.get(k, 0) > 0 for k in kinds} == dict.fromkeys(kinds, True)
    assert any(r["kind"] == "fact" and r["status"] == "superseded" for _, r in export.records)  # the fact's history
    written = load_export(services, export, "mio-copy")
    assert written["turn"] == counts["turn"] and written["memory"] == counts["memory"]
    mapping = id_map(export, "mio-copy")
    after = _views(services, "mio-copy")
    for kind in ("memories", "knowledge", "procedures"):
        # the same items: listings order ties by id, and the ids are new
        assert sorted(map(_key, after[kind])) == sorted(map(_key, _renamed(before[kind], mapping))), kind
    assert any(m["protected"] for m in after["memories"])
    assert any(m["relations"] for m in after["memories"])
    assert any(p["success_count"] >= 1 for p in after["procedures"])  # the outcome recorded above
    assert after["recall"] == before["recall"]
    assert _profile(services, "mio-copy") == _renamed(profile, mapping)
    assert list_memories(services, "mio") == before["memories"]  # the original is untouched
    with pytest.raises(ImportRefused, match="already has memory"):
        load_export(services, export, "mio-copy")


@pytest.mark.slow
def test_an_export_made_with_another_embedder_gets_its_vectors_made_again(memory):
    replay(memory.graph, "ann", MOVES)
    export = read_export(list(export_lines(memory.services, "ann")))
    assert export.header["embedder"] == {"name": memory.services.embedder.name, "dim": memory.services.embedder.dim}
    foreign = [(n, {**r, "embedding": [0.6, 0.8, 0.0]} if r["kind"] == "segment" else r) for n, r in export.records]
    export.header["embedder"] = {"name": "another-model", "dim": 3}
    export.records = foreign
    load_export(memory.services, export, "ann-2")
    archive = memory.services.stores.archive
    mine = {s.start_ts: s.embedding for s in archive.segments("ann")}
    theirs = {s.start_ts: s.embedding for s in archive.segments("ann-2")}
    assert mine.keys() == theirs.keys() and len(mine) == 2
    for start, vector in theirs.items():  # made again as the pipeline made them: the original centroids
        assert len(vector) == memory.services.embedder.dim
        assert sum(a * b for a, b in zip(vector, mine[start])) == pytest.approx(1.0, abs=1e-4)
    found = " / ".join(i["text"] for i in recall(memory.services, "ann-2", "Where do I live now?", limit=3))
    assert "Sapporo" in found


def _long_term(services, user: str, segment_ids: list[str]) -> dict[str, tuple]:
    """segment -> (level, protected) of each long-term point (a point without a level is at level 1)."""
    return {h.payload["segment_id"]: (h.payload.get("level") or 1, bool(h.payload.get("protected")))
            for h in services.stores.vectors.get(user, segment_ids)}


@pytest.mark.slow
def test_faded_and_related_memories_come_back_with_their_long_term_memory_and_graph_relations(services, demo_rows):
    _fill(services, "mio", demo_rows)
    run_maintenance(services, now=MOVES[-1]["ts"] + 30 * DAY)  # every missed batch day: memories fade to levels 2-4
    export = read_export(list(export_lines(services, "mio")))
    counts = export.header["counts"]
    assert counts["lifecycle_day"] == 1 and counts["relation"] >= 1
    assert {r["level"] for _, r in export.records if r["kind"] == "memory"} == {1, 2, 3, 4}
    segments = [r["segment_id"] for _, r in export.records if r["kind"] == "segment"]
    in_long_term = {r["segment_id"] for _, r in export.records if r["kind"] == "segment" and r["long_term"]}
    assert 0 < len(in_long_term) < len(segments)  # promotion verdicts, both ways
    views = {kind: fetch(services, "mio") for kind, fetch in LISTINGS.items()}
    long_term, relations = _long_term(services, "mio", segments), services.stores.graph.relations("mio")
    assert relations  # typed relations reached the graph
    load_export(services, export, "mio-copy")
    mapping = id_map(export, "mio-copy")
    for kind, fetch in LISTINGS.items():
        assert sorted(map(_key, fetch(services, "mio-copy"))) == sorted(map(_key, _renamed(views[kind], mapping))), kind
    assert _long_term(services, "mio-copy", [mapping[s] for s in segments]) == {mapping[s]: v for s, v in long_term.items()}
    assert services.stores.graph.relations("mio-copy") == sorted(tuple(_renamed(list(r), mapping)) for r in relations)


LISTINGS = {
    "memories": list_memories,
    "knowledge": lambda services, user: list_knowledge(services, user, history=True),
    "procedures": lambda services, user: list_procedures(services, user, history=True),
    "profile": lambda services, user: [_profile(services, user)],
}


def _profile(services, user: str) -> dict:
    """The profile but its user and time; facts of one day in any order (their order ties by id, and ids are new)."""
    profile = {k: v for k, v in build_profile(services, user).items() if k not in ("user_id", "updated_at")}
    return {**profile, **{k: sorted(profile[k], key=lambda fact: _key({**fact, "item_id": ""}))
                          for k in ("facts", "under_review")}}
