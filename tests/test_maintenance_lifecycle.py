"""The lifecycle as maintenance-graph nodes: one per phase in order, typed context (user_id, now), a crash or an
outage between the days and the store-side nodes resumed with every owed write applied once, auto-link in user
chunks finding the same links, and `maintain`'s bars (stderr) and level table (stdout)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from pydantic import ValidationError

from lumina_memory.graphs.maintenance_graph import build_maintenance_graph, graph, run_maintenance
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle.autolink import auto_link
from lumina_memory.nodes.lifecycle.columns import MemoryColumns, Relations
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import link_chunk, merge_links, today_of, user_chunks
from lumina_memory.stores.errors import StoreUnavailable

from .test_lifecycle_store import DAY, T0, _rows, _state

LIFECYCLE_NODES = ["lifecycle_owed", "lifecycle_days", "lifecycle_reembed", "lifecycle_relations",
                   "lifecycle_deletions", "lifecycle_merge", "lifecycle_summary"]
# Auto-delete on, any never-recalled archived memory deleted (OR): by day 20 some memories were re-embedded at a
# new level and stay, others were archived and deleted, so the stores owe both kinds.
FORGETFUL = dict(max_protected_memories=2, ratio_min_memories=100, auto_delete_enabled=True,
                 archive_retention_days=0, delete_condition_mode="OR")
CRASH_DAY = 20


def _filled(memory_factory, **params):
    mem = memory_factory(lifecycle=LifecycleParams(**params))
    replay(mem.graph, "alice", _rows("alice"))
    replay(mem.graph, "bob", _rows("bob")[:6])
    return mem


def _tokyo(ts: float) -> str:
    return datetime.fromtimestamp(ts, ZoneInfo("Asia/Tokyo")).isoformat()


def test_the_graph_runs_one_node_per_lifecycle_phase_in_order():
    edges = {e.source: e.target for e in graph.get_graph().edges}
    chain, node = [], edges["__start__"]
    while node != "__end__":
        chain.append(node)
        node = edges[node]
    assert chain == ["record_settings", "idle_segments", *LIFECYCLE_NODES, "knowledge_daily", "knowledge_weekly",
                     "knowledge_monthly", "vector_indexes", "scheduled_backups", "prune_backups", "retention", "store_upkeep"]


def test_the_context_picks_the_user_and_the_clock_and_wins_over_the_state(memory_factory):
    mem = _filled(memory_factory, max_protected_memories=2, ratio_min_memories=100)
    services = mem.services
    table = services.stores.archive.memories
    maintenance = build_maintenance_graph(lambda: services)

    out = maintenance.invoke({"report": {}}, context={"user_id": "alice", "now": _tokyo(T0 + DAY)})
    summary = out["report"]["lifecycle"]
    assert (summary["days"], summary["user_days"]) == (1, 1)
    assert table.last_days() == {"alice": today_of(services, T0 + DAY)}
    assert summary["levels"] == [table.level_counts("alice").get(level, 0) for level in (1, 2, 3, 4)]
    assert set(out["report"]) >= {*LIFECYCLE_NODES[:-1], "lifecycle"}  # the summary is "lifecycle"

    out = maintenance.invoke({"user_id": "bob", "now": T0 + DAY, "report": {}})  # the state path, as before
    assert out["report"]["lifecycle"]["user_days"] == 1 and set(table.last_days()) == {"alice", "bob"}

    out = maintenance.invoke({"now": T0 + 5 * DAY, "report": {}}, context={"now": T0 + 3 * DAY})
    assert (out["report"]["lifecycle"]["days"], out["report"]["lifecycle"]["user_days"]) == (2, 4)
    assert set(table.last_days().values()) == {today_of(services, T0 + 3 * DAY)}
    assert out["now"] == T0 + 5 * DAY  # the state is not rewritten; the steps saw the context's time
    saved = json.loads((services.settings.resolved_data_dir() / "maintenance-state.json").read_text())
    assert saved["last_backup"]["archive"] == T0 + 3 * DAY

    with pytest.raises(ValidationError):
        maintenance.invoke({"report": {}}, context={"user_id": "../bob"})


def test_progress_travels_by_callable_one_bar_per_step(memory_factory):
    mem = _filled(memory_factory, max_protected_memories=2, ratio_min_memories=100)
    run_maintenance(mem.services, now=T0 + DAY)
    events: list[tuple[str, int, int | None]] = []
    report = run_maintenance(mem.services, now=T0 + 30 * DAY, progress=lambda *e: events.append(e))
    steps = list(dict.fromkeys(step for step, _d, _t in events))
    assert steps[2:2 + len(LIFECYCLE_NODES)] == LIFECYCLE_NODES
    days = [(d, t) for step, d, t in events if step == "lifecycle_days" and t is not None]
    assert days[0] == (0, 58) and days[-1] == (58, 58) == (report["lifecycle"]["user_days"],) * 2
    assert [d for d, _t in days] == sorted(d for d, _t in days)
    reembed = [(d, t) for step, d, t in events if step == "lifecycle_reembed" and t is not None]
    assert reembed[-1][0] == reembed[-1][1] == sum(report["lifecycle_reembed"]["applied"].values())
    json.dumps(report)  # reports only: nothing callable or columnar went into the state


class Spy:
    """Wraps a real store method: records what it was asked to write, optionally fails first."""

    def __init__(self, store, method: str, action: str, fail: BaseException | None = None):
        self.real, self.action, self.fail, self.calls = getattr(store, method), action, fail, []
        self.store, self.method = store, method

    def __call__(self, user, what, *args, **kwargs):
        if self.fail is not None:
            raise self.fail
        ids = ["*"] if self.action == "relations" else list(what)
        self.calls += [(user, m, self._action(what, m)) for m in ids]
        return self.real(user, what, *args, **kwargs)

    def _action(self, what, memory_id: str) -> str:
        # Re-embedding is a payload write too: the memory's vector travels in the payload (memory_vector).
        if self.action == "payload" and "memory_vector" in what[memory_id]:
            return "reembed"
        return self.action


def _spies(services, monkeypatch, fail_vectors: BaseException | None = None) -> list[Spy]:
    vectors, graph_store = services.stores.vectors, services.stores.graph
    spies = [Spy(vectors, "set_payload", "payload", fail_vectors),
             Spy(vectors, "delete", "delete", fail_vectors), Spy(graph_store, "set_relations", "relations")]
    for spy in spies:
        monkeypatch.setattr(spy.store, spy.method, spy)
    return spies


def _applied(spies: list[Spy]) -> Counter:
    return Counter(call for spy in spies for call in spy.calls)


def _expected(services, owed: list[tuple[str, str, str]]) -> Counter:
    """Owed writes as the stores should receive them: re-embeds and payloads of memories deleted since are moot."""
    alive = {(u, m["memory_id"]) for u in ("alice", "bob") for m in list_memories(services, u)}
    return Counter(o for o in owed if o[2] not in ("reembed", "payload") or (o[0], o[1]) in alive)


def _payload_levels(services, user: str) -> dict[str, int]:
    levels = {m["memory_id"]: m["level"] for m in list_memories(services, user)}
    return {h.payload["segment_id"]: h.payload.get("level", 1) for h in services.stores.vectors.get(user, list(levels))}


def test_a_batch_killed_after_its_days_resumes_with_each_owed_write_applied_once(memory_factory, monkeypatch):
    crashed, twin = _filled(memory_factory, **FORGETFUL), _filled(memory_factory, **FORGETFUL)
    for mem in (crashed, twin):
        run_maintenance(mem.services, now=T0 + DAY)
    services = crashed.services
    table = services.stores.archive.memories
    with monkeypatch.context() as patch:  # the first re-embedding dies as a killed process would
        _spies(services, patch, fail_vectors=KeyboardInterrupt("killed between the nodes"))
        with pytest.raises(KeyboardInterrupt):
            run_maintenance(services, now=T0 + CRASH_DAY * DAY)
    assert table.last_days()["alice"] == today_of(services, T0 + CRASH_DAY * DAY)  # the days committed
    owed = table.owed(10**6)
    assert {"reembed", "delete"} <= {a for _u, _m, a in owed}
    before = _state(services, "alice")
    deleted = {m for u, m, a in owed if a == "delete" and u == "alice"}
    assert deleted and deleted <= {h.payload["segment_id"] for h in services.stores.vectors.get("alice", list(deleted))}
    expected = _expected(services, owed)

    with monkeypatch.context() as patch:
        spies = _spies(services, patch)
        resumed = run_maintenance(services, now=T0 + CRASH_DAY * DAY)
        assert resumed["lifecycle"]["days"] == 0 and _state(services, "alice") == before  # no day twice
        assert _applied(spies) == expected and max(_applied(spies).values()) == 1
        assert resumed["lifecycle_owed"]["applied"] == dict(Counter(a for _u, _m, a in owed))
        assert table.owed(10**6) == [] and resumed["lifecycle"]["waiting"] == 0
        again = run_maintenance(services, now=T0 + CRASH_DAY * DAY + 60)
        assert again["lifecycle_owed"]["applied"] == {} and _applied(spies) == expected  # nothing twice

    assert services.stores.vectors.get("alice", list(deleted)) == []
    run_maintenance(twin.services, now=T0 + CRASH_DAY * DAY)  # the same days, never interrupted
    for user in ("alice", "bob"):
        assert _state(services, user) == _state(twin.services, user)
        assert _payload_levels(services, user) == _payload_levels(twin.services, user)
        assert _payload_levels(services, user) == {m["memory_id"]: m["level"] for m in list_memories(services, user)}


def test_a_store_down_leaves_its_writes_owed_and_the_next_run_applies_them_once(memory_factory, monkeypatch):
    mem = _filled(memory_factory, **FORGETFUL)
    services = mem.services
    table = services.stores.archive.memories
    run_maintenance(services, now=T0 + DAY)
    vector_kinds = ("reembed", "payload", "delete")
    with monkeypatch.context() as patch:
        spies = _spies(services, patch, fail_vectors=StoreUnavailable("long-term", "test outage"))
        report = run_maintenance(services, now=T0 + CRASH_DAY * DAY)
        waiting = table.owed(10**6, vector_kinds)
        assert report["lifecycle"]["days"] == CRASH_DAY - 1 and report["lifecycle"]["waiting"] == len(waiting) > 0
        assert report["lifecycle_deletions"]["applied"] == {} and not any(s.calls for s in spies[:3])
        assert table.owed(10**6, ("relations",)) == []  # the graph tier was up: its node settled its kind
        assert _applied(spies) == Counter({c: 1 for c in _applied(spies)})  # relations only, each once
    expected = _expected(services, waiting)
    with monkeypatch.context() as patch:
        spies = _spies(services, patch)
        resumed = run_maintenance(services, now=T0 + CRASH_DAY * DAY + 60)
        assert resumed["lifecycle"]["days"] == 0 and resumed["lifecycle"]["waiting"] == 0
        assert resumed["lifecycle_owed"]["applied"] == dict(Counter(a for _u, _m, a in waiting))
        assert _applied(spies) == expected and table.owed(10**6) == []
    for user in ("alice", "bob"):
        assert _payload_levels(services, user) == {m["memory_id"]: m["level"] for m in list_memories(services, user)}


def _population(rng: np.random.Generator, sizes: list[int], dim: int = 24):
    """Users of ``sizes`` memories (rows grouped by user, or shuffled), embeddings around a few topics each."""
    group = np.repeat(np.arange(len(sizes)), sizes)
    n = len(group)
    topics = rng.normal(size=(len(sizes), 4, dim))
    vectors = topics[group, rng.integers(0, 4, n)] + rng.normal(scale=rng.choice([0.1, 0.5], n)[:, None], size=(n, dim))
    vectors[rng.random(n) < 0.05] = 0  # no embedding: links to nothing
    columns = MemoryColumns.new(
        intensity=rng.uniform(10, 100, n), decay=rng.uniform(0.7, 0.999, n), retention=rng.uniform(5, 100, n),
        level=rng.choice([1, 2, 3, 4], n, p=[0.5, 0.2, 0.2, 0.1]), created=rng.uniform(0, 1e6, n), group=group)
    related = [(i, j) for i in range(n) for j in range(n) if i != j and group[i] == group[j] and rng.random() < 0.02]
    src, dst = zip(*related)
    relations = Relations.of(src, dst, rng.integers(0, 5, len(src)))
    return vectors.astype(np.float32), columns, relations, rng.random(n) < 0.4


@pytest.mark.parametrize("chunk_rows", [1, 70, 10_000])
@pytest.mark.parametrize("shuffled", [False, True])
def test_auto_link_by_user_chunks_finds_the_same_links_as_one_call_over_everyone(chunk_rows, shuffled):
    rng = np.random.default_rng(17)
    sizes = [40, 3, 55, 1, 30, 25]
    vectors, columns, relations, new = _population(rng, sizes)
    if shuffled:  # users' rows interleaved: chunks still take whole users
        order = rng.permutation(len(columns))
        inverse = np.argsort(order)
        vectors, columns, new = vectors[order], columns.take(order), new[order]
        relations = Relations(inverse[relations.src], inverse[relations.dst], relations.kind)
    params = LifecycleParams(auto_link_similarity_threshold=0.85, max_relations_per_memory=3)
    whole, _ = auto_link(vectors, new, columns, relations, params)
    assert len(whole) > 10  # the case links plenty (and hits the cap of 3)
    chunks = list(user_chunks(columns.group, new, chunk_rows))
    parts = [link_chunk(vectors[rows], rows, new, columns, relations, params) for rows in chunks]
    found = merge_links(parts)
    assert (found.src.tolist(), found.dst.tolist(), found.kind.tolist()) == (
        whole.src.tolist(), whole.dst.tolist(), whole.kind.tolist())
    assert max(len(rows) for rows in chunks) <= max(chunk_rows, max(sizes))  # bounded by the largest user
    for rows in chunks:  # whole users only
        users = np.unique(columns.group[rows])
        assert len(rows) == np.isin(columns.group, users).sum()


@pytest.fixture
def cli(cli_factory):
    """``main`` called in this process: the report, bars and table are the subject, not the process boundary."""
    return cli_factory(in_process=True)


def test_cli_maintain_draws_bars_on_stderr_a_level_table_and_keeps_json_clean(cli, tmp_path):
    file = tmp_path / "chat.jsonl"
    lines = [{"user_id": "kana", "speaker": "user" if i % 2 == 0 else "nox", "text": f"{text}、その{i}",
              "ts": f"2026-01-0{topic + 1}T10:0{i}:00+09:00"}
             for topic, text in enumerate(("猫のムギが最近よく寝ている", "転職の面接に受かった！本当に嬉しい！", "母の誕生日は三月十二日"))
             for i in range(6)]
    file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n", encoding="utf-8")
    cli("ingest", str(file))
    shown = cli("maintain", "--user", "kana", "--now", "2026-01-05T04:00+09:00")  # the first batch day
    assert "what moved between levels (1 day(s)" in shown.stdout and "now at level" in shown.stdout
    table = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:7]]
             for line in shown.stdout.splitlines() if line.count("│") == 7}
    memories = json.loads(cli("memories", "--user", "kana", "--json").stdout)
    assert table["now at level"][:4] == [str(sum(m["level"] == level for m in memories)) for level in (1, 2, 3, 4)]
    moved = sum(int(c) for row in ("1 full", "2 summary", "3 keywords") for c in table[row] if c.isdigit())
    assert moved == sum(m["level"] > 1 for m in memories) > 0  # days-old memories fade on their first batch
    for step in ("lifecycle_owed", "lifecycle_days", "lifecycle_reembed", "lifecycle_summary"):
        assert step in shown.stderr and step not in shown.stdout
    later = cli("maintain", "--user", "kana", "--now", "2026-09-05T04:00+09:00", "--json")
    report = json.loads(later.stdout)  # the whole stdout is the report: the bars went to stderr
    assert report["lifecycle"]["days"] == 243 and "lifecycle_days" in later.stderr
    assert sum(report["lifecycle"]["levels"]) == len(memories)  # auto-delete is off by default
