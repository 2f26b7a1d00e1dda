"""Knowledge items in the derived tiers (issue 18, A4), on real engines: the knowledge vectors (qdrant-edge) and
the graph (embedded ladybug, and the Neo4j adapter against FalkorDB's Bolt endpoint).

After a flush every item of the archive's knowledge table has its point and its Knowledge node, LEARNED_FROM its
episodes, SUPERSEDES the item it ended; a store down during the flush leaves the items owed, completed at the
next run or open; erasure and `forget` take them from every tier; a question in English finds the fact said in
Japanese through the vector channel; users never see each other's items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.params import KnowledgeParams
from lumina_memory.nodes.knowledge.tiers import sync_knowledge_tiers
from lumina_memory.nodes.lifecycle.manage import forget_memory
from lumina_memory.nodes.recovery import recover
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.errors import StoreUnavailable
from tests.conftest import Memory
from tests.falkordb_bolt import StoppableFalkorDB, absorb_handshake_hang, falkordb_bolt

DAY = 86_400.0
MAY = 1_778_000_000.0  # 2026-05
SEP = MAY + 120 * DAY
MARK = "シラタマ"  # her cat's name: only she ever says it, so the residue check can look for it


def rows(prefix: str, t0: float, lines: list[tuple[str, str]]) -> list[dict]:
    return [{"speaker": who, "text": text, "ts": t0 + 60 * i, "source_id": f"{prefix}-{i}"}
            for i, (who, text) in enumerate(lines)]


MIKA_MAY = rows("may", MAY, [("user", "コーヒーが大好き！"), ("lumina", "いいね、コーヒー派なんだ"),
                             ("user", f"{MARK}っていう猫を飼ってる")])
MIKA_SEP = rows("sep", SEP, [("user", "最近コーヒーやめて紅茶にしたの"), ("lumina", "そうなんだ、紅茶もいいよね")])
KEN_1 = rows("k1", MAY, [("user", "I love coffee."), ("nox", "Nice."), ("user", "I moved to Fukuoka last month.")])
KEN_2 = rows("k2", MAY + 30 * DAY, [("user", "I live in Fukuoka now."), ("nox", "Cool.")])


def tell_everything(memory: Memory) -> None:
    replay(memory.graph, "mika", MIKA_MAY)
    replay(memory.graph, "mika", MIKA_SEP)
    replay(memory.graph, "ken", KEN_1)
    replay(memory.graph, "ken", KEN_2)


def history(services, user: str) -> list[dict]:
    return services.stores.archive.knowledge.items(user, history=True)


def expected_graph(services, user: str) -> list[dict]:
    """What the graph must hold for the user: every item of the archive, its episodes, the items it ended."""
    items = history(services, user)
    return sorted(({
        "item_id": r["item_id"], "subject": r["subject"], "attribute": r["attribute"], "value": r["value"],
        "polarity": r["polarity"], "status": r["status"], "episode_ids": sorted(r["episode_ids"]),
        "supersedes": sorted(o["item_id"] for o in items
                             if o["status"] == "superseded" and o["superseded_by"] == r["item_id"]),
    } for r in items), key=lambda k: k["item_id"])


def expected_points(services, user: str) -> dict[str, dict]:
    return {r["item_id"]: {"user_id": user, **{k: r[k] for k in ("item_id", "subject", "attribute", "value", "polarity",
                                                                  "status", "valid_from", "valid_to")},
                           "episode_ids": list(r["episode_ids"])}
            for r in history(services, user)}


def points(services, user: str) -> dict[str, dict]:
    return services.stores.knowledge.items_of(user, [r["item_id"] for r in history(services, user)])


def assert_tiers_mirror_the_archive(services, *users: str) -> None:
    assert services.stores.archive.knowledge.unsynced_count() == 0
    for user in users:
        assert history(services, user), user
        assert points(services, user) == expected_points(services, user)
        assert services.stores.knowledge.count(user) == len(history(services, user))
        assert services.stores.graph.knowledge(user) == expected_graph(services, user)


# --- backends -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bolt_port(tmp_path_factory) -> Iterator[int]:
    with falkordb_bolt(tmp_path_factory.mktemp("falkordb")) as port:
        yield port


@pytest.fixture(params=["ladybug", "neo4j"])
def memory_on(request, memory_factory):
    """A Memory on the embedded graph or on the Neo4j adapter (FalkorDB, its one graph emptied first)."""
    if request.param == "ladybug":
        return memory_factory()
    port = request.getfixturevalue("bolt_port")
    absorb_handshake_hang(port)
    memory = memory_factory(neo4j_uri=f"bolt://127.0.0.1:{port}", graph_timeout_seconds=5)
    assert memory.services.stores.graph.backend == "neo4j"
    memory.services.stores.graph._write([("MATCH (n) DETACH DELETE n", {})])
    return memory


# --- a flush writes them -----------------------------------------------------------------------------------
def test_a_flush_brings_every_item_to_the_vectors_and_the_graph(memory_on):
    services = memory_on.services
    tell_everything(memory_on)
    assert_tiers_mirror_the_archive(services, "mika", "ken")
    mika = {(k["attribute"], k["polarity"], k["value"]): k for k in services.stores.graph.knowledge("mika")}
    may, sep = (services.stores.archive.segments("mika")[i].segment_id for i in (1, 0))
    # The September sentence ended May's liking: the new item SUPERSEDES the old one, each LEARNED_FROM its day.
    liked, stopped = mika[("likes", "positive", "コーヒー")], mika[("likes", "negative", "コーヒー")]
    assert liked["status"] == "superseded" and liked["episode_ids"] == [may]
    assert stopped["supersedes"] == [liked["item_id"]] and stopped["episode_ids"] == [sep]
    assert mika[("drink", "positive", "紅茶")]["episode_ids"] == [sep]
    counts = services.stores.graph.counts("mika")
    assert counts.nodes["Knowledge"] == len(history(services, "mika")) and counts.edges["SUPERSEDES"] >= 1
    # Ken's restatement merged into the item he said first: one node LEARNED_FROM both of his episodes.
    ken = [k for k in services.stores.graph.knowledge("ken") if k["attribute"] == "lives_in" and k["value"] == "Fukuoka"
           and k["status"] == "current"]
    assert len(ken) == 1 and len(ken[0]["episode_ids"]) == 2
    # Isolation: neither user's tiers hold the other's items, and a search never crosses.
    mine = {r["item_id"] for r in history(services, "mika")}
    theirs = {r["item_id"] for r in history(services, "ken")}
    assert not mine & theirs
    assert services.stores.knowledge.items_of("ken", sorted(mine)) == {}
    vector = services.embedder.embed(["最近コーヒーやめて紅茶にしたの"])[0]
    assert {i for i, _ in services.stores.knowledge.search_items("ken", vector, 10)} <= theirs
    # Idempotent: a second run finds nothing owed; owing everything again rewrites the same state.
    before = (services.stores.graph.counts(), services.stores.knowledge.count())
    assert sync_knowledge_tiers(services) == {"synced": 0, "waiting": 0}
    services.stores.archive.knowledge.mark_unsynced("mika")
    assert sync_knowledge_tiers(services)["synced"] == len(mine)
    assert (services.stores.graph.counts(), services.stores.knowledge.count()) == before
    assert_tiers_mirror_the_archive(services, "mika", "ken")


# --- crash safety ----------------------------------------------------------------------------------------
def test_a_graph_server_down_during_the_flush_leaves_the_items_owed_then_written_once(tmp_path):
    (tmp_path / "falkordb").mkdir()
    with StoppableFalkorDB(tmp_path / "falkordb") as server:
        absorb_handshake_hang(server.port)
        memory = Memory(tmp_path / "data", neo4j_uri=f"bolt://127.0.0.1:{server.port}", graph_timeout_seconds=3)
        try:
            services = memory.services
            replay(memory.graph, "mika", MIKA_MAY)
            assert_tiers_mirror_the_archive(services, "mika")
            server.save()
            server.kill()
            replay(memory.graph, "mika", MIKA_SEP)  # the flush goes on: archive committed, graph owed
            table = services.stores.archive.knowledge
            owed = table.unsynced("mika")
            assert {r["value"] for r in owed} >= {"紅茶", "コーヒー"} and len(history(services, "mika")) > 3
            with pytest.raises(StoreUnavailable):  # still down: nothing is marked
                sync_knowledge_tiers(services)
            assert table.unsynced("mika") == owed
            server.start()
            absorb_handshake_hang(server.port)
            report = recover(services, reason="store back")
            assert report["still owed"] == 0 and report["knowledge items synced"] == len(owed)
            assert_tiers_mirror_the_archive(services, "mika")
            counts = services.stores.graph.counts("mika")
            recover(services, reason="again")  # nothing owed: nothing written twice
            assert services.stores.graph.counts("mika") == counts
        finally:
            memory.close()


def test_a_vector_store_down_during_the_flush_is_completed_at_the_next_open(tmp_path):
    data_dir = tmp_path / "data"
    memory = Memory(data_dir)
    try:
        replay(memory.graph, "mika", MIKA_MAY)
        memory.services.stores.knowledge.close()  # the collection refuses every call (StoreUnavailable) from now
        with pytest.raises(StoreUnavailable):
            memory.services.stores.knowledge.count("mika")
        replay(memory.graph, "mika", MIKA_SEP)  # the flush is not stopped by it
        table = memory.services.stores.archive.knowledge
        owed = {r["item_id"] for r in table.unsynced("mika")}
        assert owed and {r["value"] for r in table.unsynced("mika")} >= {"紅茶"}
        assert memory.services.stores.archive.outbox("mika") == []  # every segment reached every tier
    finally:
        memory.close()
    # The process ends with the items owed (as a crash between the archive commit and the sync would leave
    # them); opening the data directory again completes them.
    memory = Memory(data_dir)
    try:
        assert_tiers_mirror_the_archive(memory.services, "mika")
        assert owed <= set(points(memory.services, "mika"))
    finally:
        memory.close()


# --- erasure and forgetting --------------------------------------------------------------------------------
def _raw(paths: list[Path]) -> bytes:
    out = b""
    for root in paths:
        files = [root] if root.is_file() else list(root.rglob("*")) if root.exists() else []
        out += b"".join(p.read_bytes() for p in files if p.is_file())
    return out


def test_erasure_takes_the_items_from_every_tier(memory):
    services = memory.services
    tell_everything(memory)
    n_mika, n_ken = len(history(services, "mika")), len(history(services, "ken"))
    kept = erase_plan(services, "ken")["counts"]
    counts = erase_plan(services, "mika")["counts"]
    assert counts["archive.knowledge_items"] == counts["vectors.knowledge"] == n_mika
    nodes = services.stores.graph.counts("mika").nodes
    assert nodes["Knowledge"] == n_mika and counts["graph"] == sum(nodes[k] for k in ("User", "Segment", "Concept", "Knowledge"))
    with open_registry(services) as places:
        raw = [p for place in places if place.name in ("vectors.knowledge", "graph") for p in place.raw_paths()]
    assert MARK.encode() in _raw(raw)
    erase_user(services, "mika", erase_plan(services, "mika")["token"])
    left = erase_plan(services, "mika")["counts"]
    assert left["archive.knowledge_items"] == left["vectors.knowledge"] == left["graph"] == 0
    assert services.stores.graph.knowledge("mika") == [] and services.stores.knowledge.count("mika") == 0
    assert MARK.encode() not in _raw(raw)  # the scrub rewrote the shard and the graph file
    after = erase_plan(services, "ken")["counts"]
    assert {k: after[k] for k in ("archive.knowledge_items", "vectors.knowledge", "graph")} == \
        {k: kept[k] for k in ("archive.knowledge_items", "vectors.knowledge", "graph")}
    assert kept["vectors.knowledge"] == n_ken
    assert_tiers_mirror_the_archive(services, "ken")


def test_forgetting_an_episode_takes_its_edges_and_the_items_only_it_taught(memory_on):
    services = memory_on.services
    tell_everything(memory_on)
    first, second = (services.stores.archive.segments("ken")[i].segment_id for i in (1, 0))
    taught = {r["item_id"]: r for r in history(services, "ken")}
    only_first = {i for i, r in taught.items() if r["episode_ids"] == [first]}
    both = {i for i, r in taught.items() if sorted(r["episode_ids"]) == sorted([first, second])}
    assert only_first and both  # "I love coffee." alone; Fukuoka said in both
    mika_before = (services.stores.graph.knowledge("mika"), points(services, "mika"))
    removed = forget_memory(services, "ken", first, actor="test")
    assert removed["knowledge"] == removed["knowledge vectors"] == len(only_first)
    left = {r["item_id"]: r for r in history(services, "ken")}
    assert not only_first & set(left) and both <= set(left)
    assert all(left[i]["episode_ids"] == [second] for i in both)
    graph = {k["item_id"]: k for k in services.stores.graph.knowledge("ken")}
    assert not only_first & set(graph) and all(graph[i]["episode_ids"] == [second] for i in both)
    found = services.stores.knowledge.items_of("ken", sorted(taught))
    assert set(found) == set(left) and all(found[i]["episode_ids"] == [second] for i in both)
    sync_knowledge_tiers(services)  # the survivors, owed again by the forget, restated: the same state
    assert_tiers_mirror_the_archive(services, "ken")
    assert (services.stores.graph.knowledge("mika"), points(services, "mika")) == mika_before


# --- search -----------------------------------------------------------------------------------------------
def _facts(services, user: str, question: str) -> list[dict]:
    return [i for i in recall(services, user, question, limit=6) if i["kind"] == "knowledge"]


def test_a_question_in_english_finds_the_fact_said_in_japanese(memory_factory):
    memory = memory_factory()
    services = memory.services
    tell_everything(memory)
    facts = _facts(services, "mika", "what does she drink now?")
    assert facts[0]["text"].startswith("[drink: 紅茶]") and facts[0]["status"] == "current"
    assert "vector" in facts[0]["channels"] and facts[0]["valid_to"] is None
    # No cue word at all: only the vector channel can find it.
    beverage = _facts(services, "mika", "Which beverage does she have these days?")
    assert any(f["text"].startswith("[drink: 紅茶]") for f in beverage)
    assert all(f["channels"] == ["vector"] for f in beverage)
    # Another user asking the same never gets her facts.
    mine = {r["item_id"] for r in history(services, "mika")}
    for question in ("what does she drink now?", "Which beverage does she have these days?", "コーヒーは好き？"):
        assert not {f["item_id"] for f in _facts(services, "ken", question)} & mine

    # The same question with the vector channel off finds nothing: the cue channel has no word for it.
    off = memory_factory(knowledge=KnowledgeParams(recall_vector_candidates=0))
    replay(off.graph, "mika", MIKA_MAY)
    replay(off.graph, "mika", MIKA_SEP)
    assert _facts(off.services, "mika", "Which beverage does she have these days?") == []
    assert _facts(off.services, "mika", "what does she drink now?")[0]["channels"] == ["cue"]


def test_a_fact_only_near_in_meaning_follows_the_episodes_and_waits_for_room(memory_factory):
    """Facts the question names lead and take their share of the budget; a fact found by the vector channel
    alone comes after the episodes, in what budget is left (LoCoMo: leading with them cost evidence)."""
    memory = memory_factory()
    services = memory.services
    tell_everything(memory)
    named = recall(services, "mika", "what does she drink now?", limit=6)
    assert named[0]["kind"] == "knowledge" and "cue" in named[0]["channels"]
    kinds = [i["kind"] for i in recall(services, "mika", "Which beverage does she have these days?", limit=20)]
    assert "knowledge" in kinds and "episode" in kinds
    assert kinds.index("knowledge") > max(n for n, k in enumerate(kinds) if k == "episode")
    roomy = recall(services, "mika", "Which beverage does she have these days?", budget=4000)
    assert roomy[-1]["kind"] == "knowledge" and sum(i["tokens"] for i in roomy) <= 4000
    spent = sum(i["tokens"] for i in roomy if i["kind"] == "episode")
    tight = recall(services, "mika", "Which beverage does she have these days?", budget=spent)
    assert "knowledge" not in [i["kind"] for i in tight]  # the episodes filled it: no room for the fact


def test_recall_settings_are_validated():
    with pytest.raises(ValueError):
        KnowledgeParams(recall_min_similarity=1.5)
    with pytest.raises(ValueError):
        KnowledgeParams(recall_vector_candidates=-1)
    with pytest.raises(ValueError):
        KnowledgeParams(recall_vector_weight=-0.1)


# --- the archive's bookkeeping: older tables and older backups ----------------------------------------------
def _learned_archive(path: Path):
    from types import SimpleNamespace

    from lumina_memory.nodes.knowledge.learn import learn_segments
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    archive = DuckDBArchive(path)
    services = SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace())
    turns = [{"turn_id": f"t{i}", "source_id": r["source_id"], "speaker": r["speaker"], "text": r["text"], "ts": r["ts"]}
             for i, r in enumerate(MIKA_MAY)]
    learn_segments(services, "mika", [(SimpleNamespace(segment_id="seg-may"), turns)])
    return archive


def test_a_table_from_before_the_tiers_owes_them_every_item(tmp_path):
    import duckdb

    from lumina_memory.stores.archive_duckdb import DuckDBArchive
    from lumina_memory.stores.knowledge_duckdb import ACTIVITY, KNOWLEDGE, LINKS, SCHEMA, SYNCED

    path = tmp_path / "archive.duckdb"
    archive = _learned_archive(path)
    n = archive.knowledge.count("mika")
    archive.knowledge.mark_synced(archive.knowledge.unsynced("mika"))
    assert n and archive.knowledge.unsynced_count() == 0
    archive.close()
    con = duckdb.connect(str(path))  # the table as it was made before tiers_synced existed
    later = ", ".join([SYNCED, *(c for c, _ in (*ACTIVITY, *LINKS))])  # tiers_synced, forgetting's, the links
    con.execute(f"CREATE TABLE kept AS SELECT * EXCLUDE ({later}) FROM {KNOWLEDGE}")
    con.execute(f"DROP TABLE {KNOWLEDGE}")
    con.execute(SCHEMA[0].replace(f", {SYNCED} BOOLEAN NOT NULL DEFAULT false", ""))
    con.execute(SCHEMA[1])
    con.execute(f"INSERT INTO {KNOWLEDGE} SELECT * FROM kept")
    con.execute("DROP TABLE kept")
    con.execute("DELETE FROM lumina_migrations WHERE component = 'knowledge'")  # a file from before migrations
    assert SYNCED not in [c[0] for c in con.execute(f"DESCRIBE {KNOWLEDGE}").fetchall()]
    con.close()
    archive = DuckDBArchive(path)
    try:
        assert archive.knowledge.unsynced_count("mika") == n  # migrated: every item owed to the tiers
        rows = archive.knowledge.unsynced("mika")
        assert archive.knowledge.mark_synced(rows) == n and archive.knowledge.unsynced_count() == 0
        archive.knowledge.upsert([{**rows[0], "note": "written again"}])  # a write owes the item again
        assert [r["item_id"] for r in archive.knowledge.unsynced()] == [rows[0]["item_id"]]
        stale = {**rows[0], "updated_at": rows[0]["updated_at"] - 1}
        assert archive.knowledge.mark_synced([stale]) == 0  # not what is stored now: stays owed
    finally:
        archive.close()


def test_a_backup_from_before_the_column_restores_with_the_items_owed(tmp_path):
    import duckdb

    from lumina_memory.stores.archive_duckdb import DuckDBArchive
    from lumina_memory.stores.knowledge_duckdb import KNOWLEDGE, SYNCED

    archive = _learned_archive(tmp_path / "a.duckdb")
    n = archive.knowledge.count("mika")
    place = next(p for p in archive.user_data_places() if p.name == f"archive.{KNOWLEDGE}")
    assert place.export(tmp_path / "backup") == n
    archive.close()
    old = tmp_path / "backup" / f"{KNOWLEDGE}.parquet"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * EXCLUDE ({SYNCED}) FROM read_parquet('{old}')) TO '{tmp_path / 'old.parquet'}' (FORMAT parquet)")
    con.close()
    (tmp_path / "old.parquet").replace(old)
    target = DuckDBArchive(tmp_path / "b.duckdb")
    try:
        place = next(p for p in target.user_data_places() if p.name == f"archive.{KNOWLEDGE}")
        assert place.restore(tmp_path / "backup", lambda user: False) == n
        assert target.knowledge.count("mika") == target.knowledge.unsynced_count("mika") == n
    finally:
        target.close()
