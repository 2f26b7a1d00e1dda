"""Agents' memory in the registry (L10, L11): an agent id is erased like a user id (rows, vectors, shared memories,
tellings, its id in other agents' rows, raw bytes, backups); a run's agents are erased together; a backup restores
agents into a new data directory without the erased one. The erased id, ``agent_7``, is a prefix of the kept
``agent_77``: isolation is tested at the same time."""

from __future__ import annotations

import json
import re

import pytest

from lumina_memory.graphs.agents_erase import erase_agent, erase_run, run_agents
from lumina_memory.graphs.erase import audit_log, backup_now, restore_from
from lumina_memory.graphs.registry import open_registry
from lumina_memory.stores.agent_open import agent_stores
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

from .agents_fixture import Opened

ERASED, KEPT, OTHER = "agent_7", "agent_77", "agent_8"
MARK = {ERASED: "ZEBRAGENTQX", KEPT: "OKAPIGENTQY", OTHER: "LLAMAGENTQZ"}
ID_RE = re.compile(rb"(?<![A-Za-z0-9_.@:-])" + ERASED.encode() + rb"(?![A-Za-z0-9_.@:-])")
CACHES = ("cache.embedder", "cache.text_derivations")


def _live(o: Opened) -> None:
    """Three agents of run 'village' with every kind of record, the erased one named in the others' rows."""
    m = o.memory
    for agent in (ERASED, KEPT, OTHER):
        m.store(agent, {"type": "observation", "content": f"{agent} keeps the word {MARK[agent]} in the barn"},
                run_id="village")
        m.store(agent, {"type": "conversation", "content": f"{agent} said {MARK[agent]} at the well",
                        "participants": [a for a in (ERASED, KEPT, OTHER) if a != agent]})
        m.update_wm(agent, {"inventory_summary": f"bread and {MARK[agent]}", "active_goals": ["dig a well"]})
        m.join_group(agent, "diggers")
    o.clock.advance(1)
    for agent in (ERASED, KEPT):
        m.consolidate(agent, force=True)
        m.store(agent, {"type": "action", "content": f"{agent} dug near {MARK[agent]}"})
    m.store_shared({"content": f"the diggers' rule {MARK[ERASED]}", "source_events": ["ev_a"]}, scope="group",
                   group_id="diggers", author=ERASED)
    m.store_shared(f"a secret {MARK[ERASED]}", scope="bilateral", visible_to=[ERASED, KEPT], author=ERASED)
    kept = m.store_shared(f"the kept rule {MARK[KEPT]}", scope="global", author=KEPT)
    m.tell(kept, KEPT, OTHER)


def _hits(roots, needles: list[bytes]) -> list[str]:
    found = []
    for root in roots:
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
        for path in files:
            try:
                data = path.read_bytes()
            except (FileNotFoundError, IsADirectoryError, PermissionError):
                continue
            found += [f"{path}: {n[:30]!r}" for n in needles if n in data]
            if ID_RE.search(data):
                found.append(f"{path}: the id {ERASED}")
    return sorted(set(found))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("agents-registry")
    o = Opened(root / "data", "duckdb", backup_location=str(root / "backups"))
    try:
        o.services.stores.archive._db.live().execute("PRAGMA force_compression='uncompressed'")  # a raw scan sees text
        _live(o)
        backup_now(o.services)
        with open_registry(o.services) as places:
            planned = {p.name: p.count(ERASED) for p in places}
            before = {p.name: p.count(KEPT) for p in places}
        report = erase_agent(o.services, ERASED, actor="test")
        with open_registry(o.services) as places:
            left = {p.name: p.count(ERASED) for p in places}
            after = {p.name: p.count(KEPT) for p in places}
            exported = root / "exported"
            for place in places:
                place.export(exported / place.name)
            raw = [path for place in places for path in place.raw_paths()]
        yield {"o": o, "root": root, "planned": planned, "report": report, "left": left, "before": before,
               "after": after, "exported": exported, "raw": raw}
    finally:
        o.close()


def test_the_plan_counts_the_agent_and_the_erasure_removes_it_everywhere(world):
    planned, report = world["planned"], world["report"]
    # registration, WM, 3 STM/LTM rows, 2 shared memories, a membership; 3 vectors of its own, 2 shared points
    assert planned["agents"] >= 12
    assert report["removed"]["agents"] == planned["agents"]
    assert {k: v for k, v in world["left"].items() if v and k not in CACHES} == {}


def test_the_other_agents_keep_their_memory(world):
    o = world["o"]
    assert {k: v for k, v in world["before"].items() if k not in CACHES} == \
        {k: v for k, v in world["after"].items() if k not in CACHES}
    m = o.memory
    assert MARK[KEPT] in m.retrieve(KEPT, "what word is kept in the barn?", layers=["stm", "ltm"])[0].content
    assert [r.content for r in m.retrieve_shared(OTHER, "the kept rule")] == [f"the kept rule {MARK[KEPT]}"]
    assert m.retrieve_shared(KEPT, "the diggers' rule and the secret", top_k=20)[0].author == KEPT
    talk = [e for e in m.agents.tables.events(OTHER) if e.type == "conversation"][0]
    assert talk.participants == [KEPT]  # the erased id is taken out of the others' rows
    assert m.get_wm(ERASED) == {} and m.agents.tables.run_of(ERASED) is None


def test_no_export_or_raw_byte_holds_the_erased_agent(world):
    root = world["root"]
    needle = [MARK[ERASED].encode()]
    assert _hits([world["exported"]], needle) == []
    assert _hits([root / "data", root / "backups", *world["raw"]], needle) == []
    # ...and the same scans find the kept agent, so they would have found a leak
    assert _hits([world["exported"]], [MARK[KEPT].encode()]) and _hits([root / "backups"], [MARK[KEPT].encode()])


def test_a_backup_restores_the_agents_without_the_erased_one(world, tmp_path):
    o = Opened(tmp_path / "restored", "duckdb")
    try:
        report = restore_from(o.services, str(world["root"] / "backups"))
        assert report["restored"]["agents"] > 0
        m = o.memory
        assert run_agents(o.services, "village") == [KEPT, OTHER]
        assert MARK[KEPT] in m.retrieve(KEPT, "what word is kept in the barn?", layers=["stm", "ltm"])[0].content
        assert MARK[KEPT] in m.get_wm(KEPT)["inventory_summary"]
        assert [r.content for r in m.retrieve_shared(OTHER, "the kept rule")] == [f"the kept rule {MARK[KEPT]}"]
        assert [(h.from_agent, h.to_agent) for h in m.trace(m.retrieve_shared(OTHER, "kept rule")[0].id)] == \
            [(KEPT, OTHER)]
        assert m.get_wm(ERASED) == {} and m.retrieve_shared(KEPT, "the diggers' rule", top_k=20)[0].author == KEPT
        with open_registry(o.services) as places:
            assert {p.name: p.count(ERASED) for p in places if p.count(ERASED) and p.name not in CACHES} == {}
    finally:
        o.close()


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_erasing_a_run_erases_every_agent_of_it_and_nothing_else(engine, tmp_path, request):
    uri = request.getfixturevalue("pg_uri") if engine == "postgres" else None
    o = Opened(tmp_path / "data", engine, uri)
    try:
        m = o.memory
        for agent, run in ((ERASED, "village"), (KEPT, "village"), (OTHER, "town")):
            m.store(agent, {"type": "observation", "content": f"{agent} saw {MARK[agent]}"}, run_id=run)
        m.consolidate(ERASED, force=True)
        m.store_shared(f"village law {MARK[KEPT]}", author=KEPT)
        m.store_shared(f"town law {MARK[OTHER]}", author=OTHER)
        out = erase_run(o.services, "village", actor="test")
        assert out["agents"] == [ERASED, KEPT] and out["removed"]["agents"] > 0
        stores = agent_stores(o.services.stores, o.settings, o.services.embedder.name, o.services.embedder.dim)
        assert run_agents(o.services, "village") == []
        assert stores.vectors.count("shared", "village") == 0
        with open_registry(o.services) as places:
            for agent in (ERASED, KEPT):
                assert {p.name: p.count(agent) for p in places if p.name not in CACHES and p.count(agent)} == {}
            assert next(p for p in places if p.name == "agents").count(OTHER) > 0
        assert [r.content for r in m.retrieve_shared(OTHER, "town law")] == [f"town law {MARK[OTHER]}"]
        assert MARK[OTHER] in m.retrieve(OTHER, "what did you see?")[0].content
    finally:
        o.close()


def test_the_registry_refuses_a_hostile_agent_id(world):
    from lumina_memory.stores.errors import InvalidInput

    with open_registry(world["o"].services) as places:
        place = next(p for p in places if p.name == "agents")
        for bad in ("../agent_7", "agent_7' OR '1'='1", "agent_７"):
            with pytest.raises(InvalidInput):
                place.count(bad)
            with pytest.raises(InvalidInput):
                place.erase(bad)



def test_the_cli_shows_searches_and_erases_agents(cli_factory, tmp_path):
    cli = cli_factory(in_process=True)
    o = Opened(cli.data_dir, "duckdb")
    try:
        for agent, run in ((ERASED, "village"), (KEPT, "village"), (OTHER, "town")):
            o.memory.store(agent, {"type": "observation", "content": f"{agent} saw {MARK[agent]} by the mill"},
                           run_id=run)
        o.memory.update_wm(KEPT, {"health": 9})
    finally:
        o.close()
    shown = json.loads(cli("agents", "show", KEPT, "--json").stdout)
    assert shown["run_id"] == "village" and shown["stm"] == 1 and shown["ltm"] == 0 and shown["wm"] == {"health": 9}
    assert MARK[KEPT] in shown["recent"][0]["content"]
    assert MARK[KEPT] in cli("agents", "show", KEPT).stdout
    hits = json.loads(cli("agents", "search", KEPT, "what was by the mill?", "--module", "talking", "--json").stdout)
    assert [MARK[KEPT] in h["content"] for h in hits] == [True]
    refused = cli("agents", "show", "../x", check=False)
    assert refused.returncode == 2 and "agent_id" in refused.stderr
    dry = cli("agents", "erase", "--run", "village", check=False)
    assert dry.returncode == 1 and "2 agents" in dry.stdout and "--yes" in dry.stdout
    report = json.loads(cli("agents", "erase", "--run", "village", "--yes", "--json").stdout)
    assert report["agents"] == [ERASED, KEPT] and report["removed"]["agents"] > 0
    assert json.loads(cli("agents", "show", KEPT, "--json").stdout)["run_id"] is None
    assert json.loads(cli("agents", "show", OTHER, "--json").stdout)["stm"] == 1
    assert json.loads(cli("agents", "erase", OTHER, "--yes", "--json").stdout)["agents"] == [OTHER]
    assert cli("agents", "show", OTHER, check=False).returncode == 1


def _rows_and_points(o: Opened) -> dict[str, int]:
    """Rows per agent table and points per vector layer: what a restore must bring back."""
    from lumina_memory.stores import agent_tables_sql as q

    stores = agent_stores(o.services.stores, o.settings, o.services.embedder.name, o.services.embedder.dim)
    with stores.tables.db.read() as con:
        held = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in q.TABLES}
    return {**held, **{layer: stores.vectors.count(layer) for layer in ("stm", "ltm", "shared")}}


@pytest.mark.slow
def test_a_run_of_several_agents_erases_in_one_pass_to_zero_residue_and_restores_whole(tmp_path):
    village = [f"villager_{n}" for n in range(4)]
    marks = {a: f"VILLAGEMARK{n}Q" for n, a in enumerate(village)}
    o = Opened(tmp_path / "data", "duckdb", backup_location=str(tmp_path / "backups"))
    try:
        o.services.stores.archive._db.live().execute("PRAGMA force_compression='uncompressed'")
        m = o.memory
        m.store_many([(a, {"type": "observation", "content": f"{a} hid {marks[a]} under the mill"})
                      for a in village], run_id="village")
        m.store_many([(a, {"type": "conversation", "content": f"{a} told {marks[a]} to {OTHER}",
                           "participants": [OTHER]}) for a in village] +
                     [(OTHER, {"type": "observation", "content": f"the town keeps {MARK[OTHER]}"})], run_id=None)
        m.update_wm(village[0], {"inventory_summary": f"salt and {marks[village[0]]}"})
        for a in village[:2]:
            m.consolidate(a, force=True)
        m.join_group(village[1], "millers")
        m.store_shared(f"village rule {marks[village[2]]}", author=village[2])
        m.tell(m.store_shared(f"a word {marks[village[3]]}", scope="global", author=village[3]), village[3],
               village[1])
        backup_now(o.services)
        out = erase_run(o.services, "village", actor="test")
        assert out["agents"] == village and out["removed"]["agents"] > 0
        with open_registry(o.services) as places:
            raw = [path for place in places for path in place.raw_paths()]
            for agent in village:
                assert {p.name: p.count(agent) for p in places if p.name not in CACHES and p.count(agent)} == {}
        needles = [mark.encode() for mark in marks.values()]
        assert _hits([tmp_path / "data", tmp_path / "backups", *raw], needles) == []
        assert _hits([tmp_path / "data"], [MARK[OTHER].encode()])  # the scan would have found a leak
        erased = [r for r in audit_log(o.services).rows() if r["event"] == "user_erased"]
        assert len(erased) == len(village)  # one entry per agent, as erasing each alone gives
        assert [e.participants for e in m.agents.tables.events(OTHER)] == [[]]
    finally:
        o.close()
    fresh = Opened(tmp_path / "fresh", "duckdb")
    try:  # the backup taken before the erasure: the ledger at the location keeps the village out
        restore_from(fresh.services, str(tmp_path / "backups"))
        assert run_agents(fresh.services, "village") == []
        assert MARK[OTHER] in fresh.memory.retrieve(OTHER, "what does the town keep?")[0].content
    finally:
        fresh.close()


@pytest.mark.slow
def test_a_restore_brings_every_row_and_point_of_several_agents_back(tmp_path):
    o = Opened(tmp_path / "data", "duckdb", backup_location=str(tmp_path / "backups"))
    try:
        m = o.memory
        agents = [f"agent_{n}" for n in range(5)]
        for round_ in range(3):
            m.store_many([(a, {"type": "action", "content": f"{a} carried stone {round_} to the wall",
                               "participants": [b for b in agents if b != a][:2]}) for a in agents], run_id="wall")
        for a in agents[:3]:
            m.consolidate(a, force=True)
            m.update_wm(a, {"current_action": f"resting after the wall {a}"})
        m.join_group(agents[0], "masons")
        m.tell(m.store_shared("the wall rule", author=agents[0]), agents[0], agents[4])
        whole = _rows_and_points(o)
        backup_now(o.services)
    finally:
        o.close()
    fresh = Opened(tmp_path / "fresh", "duckdb")
    try:
        report = restore_from(fresh.services, str(tmp_path / "backups"))
        assert report["restored"]["agents"] > 0
        assert _rows_and_points(fresh) == whole and min(whole.values()) > 0
        assert run_agents(fresh.services, "wall") == agents
        assert fresh.memory.agents.tables.events(agents[3])[0].participants == [agents[0], agents[1]]
    finally:
        fresh.close()
