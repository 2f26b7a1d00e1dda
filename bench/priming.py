"""Priming (A1) against today's recall, each within the same budget: evidence recall on LoCoMo-format sets.

    python -m bench.priming --data PATH [--data PATH …] [--conversations ID,…] [--keep-data DIR]
                            [--jitter K] [--json OUT] [--md OUT]

Conversations are ingested (or reused from ``--keep-data``) by bench.locomo's own ``ingest``. Every question
(categories 1–4 with evidence, and 6 in our own sets) is then

- recalled as today: ``recall(purpose="question", budget=B)`` packed into B (bench.locomo's way), and
- primed: ``prime(message_type="question", budget=B)``, the rendered text — section labels and every item's
  pointer included — within B;

as a question (``message_type="question"``) within each message type's budget (heartbeat 200, greeting 500,
question 1,500, request 3,000; so also at 500 / 1,500 / 3,000); and recalled at the budgets around each (B-2 … B+2,
``--jitter``): greedy packing of lines of different lengths is not monotone in the budget, and how far recall's own
figure moves with a token more or less says what size of difference between the two means anything. Question by
question, the report counts those priming covers more of the evidence of, and less. The
evidence credited is the ids whose text the context quotes (``quoted_source_ids``; a recall turn item quotes
every id it carries, a segment summary in priming's recent section quotes none), so a summary carrying a whole
segment's ids earns nothing it does not show. Latency: priming with its channels in threads against the same
channels one after another, per question at the question budget (both include the recall inside priming).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from bench.common import bench_settings, percentiles
from bench.locomo import Scores, ingest
from bench.locomo_data import CATEGORY_NAMES, load
from lumina_memory.nodes.priming import prime
from lumina_memory.nodes.retrieval.budget import count_tokens, pack
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.tools.pointers import parse_pointer

TYPES = ("heartbeat", "greeting", "question", "request")
QUESTION_BUDGETS = (500, 1500, 3000)


def _quoted(items: Sequence[dict]) -> set[str]:
    return {sid for i in items for sid in (i.get("quoted_source_ids") or i.get("source_ids") or ())}


def _cases(settings) -> list[tuple[str, str, int]]:
    """(row name, message type, budget): the question, primed as a question, within every message type's budget
    (heartbeat 200, greeting 500, question 1,500, request 3,000 — which holds 500 / 1,500 / 3,000 too)."""
    budgets = sorted({settings.recall_budgets[t] for t in TYPES} | set(QUESTION_BUDGETS))
    names = {settings.recall_budgets[t]: t for t in TYPES}
    return [(f"{names.get(b, 'question')} budget {b}", "question", b) for b in budgets]


def _offsets(jitter: int) -> list[int]:
    return [d for d in range(-jitter, jitter + 1) if d]


def paired(recall_scores: Scores, priming_scores: Scores) -> dict[str, int]:
    """Question by question (the same questions in the same order): how many priming covers more of the evidence
    of than recall does, and how many less."""
    pairs = list(zip(recall_scores.rows, priming_scores.rows))
    return {"priming_more": sum(p[1] > r[1] for r, p in pairs), "priming_less": sum(p[1] < r[1] for r, p in pairs)}


def band(row: dict[str, Any], jittered: dict[int, Scores]) -> dict[str, Any]:
    """Recall's own figure at the budgets around the row's (B-k … B+k): how far a token more or less of budget
    moves it. Greedy packing of lines of different lengths is not monotone in the budget, so a difference
    between priming and recall smaller than this band says nothing either way."""
    by_offset = {d: s.summary()["recall"] for d, s in sorted(jittered.items())}
    values = [row["recall"]["recall"], *by_offset.values()]
    return {"by_offset": by_offset, "min": min(values), "max": max(values)}


def run_set(data: str, wanted: list[str] | None, root: Path, quiet: bool, jitter: int = 2) -> dict[str, Any]:
    from lumina_memory.stores.redis_server import stop_server

    conversations = load(data, wanted)
    if not conversations:
        raise SystemExit(f"no conversations in {data} (asked for {wanted})")
    scores: dict[str, dict[str, Scores]] = {}
    jittered: dict[str, dict[int, Scores]] = {}  # row -> budget offset -> recall at that budget
    latency = {"parallel": [], "serial": [], "recall_alone": []}
    channel_ms: dict[str, list[float]] = {}
    over_budget = 0
    pointer_chars = {"texts": 0, "text": 0, "shown": 0, "whole": 0}
    cases: list[tuple[str, str, int]] = []
    for conv in conversations:
        settings, services, _stats = ingest(conv, root / conv.sample_id, quiet)
        try:
            cases = _cases(settings)
            for name, _t, _b in cases:
                scores.setdefault(name, {"recall": Scores(), "priming": Scores()})
                jittered.setdefault(name, {})
            user = conv.sample_id
            for q in conv.questions:
                qvec = services.embedder.embed([q.question])[0]
                by_budget: dict[int, tuple[set[str], int]] = {}

                def recalled(b: int) -> tuple[set[str], int]:
                    if b not in by_budget:
                        items = recall(services, user, q.question, purpose="question", budget=b, query_vector=qvec)
                        packed, _covered, _tokens = pack(items, b)
                        by_budget[b] = (_quoted(packed), sum(count_tokens(i["text"]) for i in packed))
                    return by_budget[b]

                for name, kind, budget in cases:
                    covered, tokens = recalled(budget)
                    scores[name]["recall"].add(q.category, q.evidence, covered, tokens)
                    primed = prime(services, user, q.question, message_type=kind, budget=budget, query_vector=qvec)
                    over_budget += primed.tokens > budget
                    scores[name]["priming"].add(q.category, q.evidence, primed.covered_source_ids(), primed.tokens)
                    for offset in _offsets(jitter):
                        covered_near, tokens_near = recalled(budget + offset)
                        jittered[name].setdefault(offset, Scores()).add(q.category, q.evidence, covered_near, tokens_near)
                # Threads against one after another, alternating so drift hits both alike.
                budget = settings.recall_budgets["question"]
                started = time.perf_counter()
                recall(services, user, q.question, purpose="question", budget=budget, query_vector=qvec)
                latency["recall_alone"].append((time.perf_counter() - started) * 1000)
                for mode in ("parallel", "serial") if len(latency["serial"]) % 2 == 0 else ("serial", "parallel"):
                    started = time.perf_counter()
                    primed = prime(services, user, q.question, message_type="question", query_vector=qvec,
                                   parallel=mode == "parallel")
                    latency[mode].append((time.perf_counter() - started) * 1000)
                    if mode == "parallel":
                        for channel, ms in primed.timings.items():
                            channel_ms.setdefault(channel, []).append(ms)
                        _count_pointer_chars(pointer_chars, primed)
        finally:
            services.close()
            stop_server(settings)
            gc.collect()
    return {
        "data": data,
        "conversations": [c.sample_id for c in conversations],
        "questions": sum(len(c.questions) for c in conversations),
        "rows": [name for name, _t, _b in cases],
        "results": (results := {name: {system: s.summary() for system, s in by.items()} for name, by in scores.items()}),
        "paired": {name: paired(by["recall"], by["priming"]) for name, by in scores.items()},
        "recall_band": {name: band(results[name], jittered[name]) for name in scores} if jitter else {},
        "primed_over_budget": over_budget,
        "latency_ms": {mode: percentiles(v, (50, 95, 99)) for mode, v in latency.items()},
        "latency_mean_ms": {mode: round(sum(v) / len(v), 2) if v else None for mode, v in latency.items()},
        "priming_channel_ms": {k: percentiles(v, (50, 95)) for k, v in channel_ms.items()},
        "pointer_chars": _pointer_share(pointer_chars),
    }


def _count_pointer_chars(totals: dict[str, int], primed) -> None:
    """Characters of the primed text, and of its pointers as shown (short) and as they would be whole: what a
    model's tokenizer pays for them, which the word-counted budget does not see (one token each either way)."""
    totals["texts"] += 1
    totals["text"] += len(primed.text)
    headers: set[str] = set()
    for i in primed.items():
        if i.shown and parse_pointer(i.shown).kind == "time":
            headers.add(i.shown)  # one header over its lines; it has no other form
            continue
        totals["shown"] += len(i.shown or i.source) + 2  # "(…)"
        totals["whole"] += len(i.source) + 2
    # A time header is also its lines' date: what it adds to a "[YYYY-MM-DD]" header is "T14:05".
    extra = sum(len(h) - len("YYYY-MM-DD") for h in headers)
    totals["shown"] += extra
    totals["whole"] += extra


def _pointer_share(t: dict[str, int]) -> dict[str, float | int]:
    whole_text = t["text"] - t["shown"] + t["whole"]
    n = max(1, t["texts"])
    return {"texts": t["texts"], "text_chars_mean": round(t["text"] / n, 1),
            "text_chars_mean_whole_pointers": round(whole_text / n, 1),
            "pointer_share_shown": round(t["shown"] / max(1, t["text"]), 4),
            "pointer_share_whole": round(t["whole"] / max(1, whole_text), 4)}


def demo_pointer_share(root: Path) -> dict[str, Any]:
    """The pointers' share of primed text on the bundled demo (messages with their default ``t-`` ids, as the
    app's own turns have): its questions primed as greeting, question and request."""
    from langgraph.checkpoint.memory import InMemorySaver

    from lumina_memory.graphs.cli import DEMO_QUESTIONS
    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import DEMO_TRANSCRIPT, read_jsonl, replay
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    settings = bench_settings(root / "demo")
    services = open_services(settings)
    try:
        rows = list(read_jsonl(DEMO_TRANSCRIPT))
        replay(build_graph(services, checkpointer=InMemorySaver()), rows[0]["user_id"], rows)
        totals = {"texts": 0, "text": 0, "shown": 0, "whole": 0}
        for question in DEMO_QUESTIONS:
            for kind in ("greeting", "question", "request"):
                _count_pointer_chars(totals, prime(services, rows[0]["user_id"], question, message_type=kind))
        return _pointer_share(totals)
    finally:
        services.close()
        stop_server(settings)


def render(report: dict[str, Any]) -> str:
    lines = [f"# bench.priming — {report['date']} — {report['machine']}", "", f"    {report['command']}", ""]
    for block in report["sets"]:
        cats = list(next(iter(block["results"].values()))["recall"]["by_category"])
        lines += [f"## {block['data']} ({len(block['conversations'])} conversations, {block['questions']} questions)", "",
                  "| message type (budget) | system | recall | hit | " + " | ".join(cats) + " | tokens |",
                  "|---|---|---|---|" + "---|" * len(cats) + "---|"]
        for row in block["rows"]:
            for system in ("recall", "priming"):
                s = block["results"][row][system]
                per = " | ".join(f"{s['by_category'][c]['recall']:.3f}" for c in cats)
                lines.append(f"| {row} | {system} | {s['recall']:.3f} | {s['hit']:.3f} | {per} | {s['context_tokens_mean']} |")
        if block.get("recall_band"):
            offsets = next(iter(block["recall_band"].values()))["by_offset"]
            span = f"B{min(map(int, offsets)):+d} … B{max(map(int, offsets)):+d}"
            lines += ["", f"| message type (budget) | recall | priming | priming − recall | recall at {span} (min – max) "
                          "| questions priming covers more / less of |", "|---|---|---|---|---|---|"]
            for row in block["rows"]:
                r, p = block["results"][row]["recall"]["recall"], block["results"][row]["priming"]["recall"]
                b, q = block["recall_band"][row], block["paired"][row]
                lines.append(f"| {row} | {r:.4f} | {p:.4f} | {p - r:+.4f} | {b['min']:.4f} – {b['max']:.4f} "
                             f"| {q['priming_more']} / {q['priming_less']} |")
        lat, mean = block["latency_ms"], block["latency_mean_ms"]
        lines += ["", f"primed texts over their budget: {block['primed_over_budget']}",
                  "latency at the question budget, ms p50 / p95 / p99 (mean): "
                  + "; ".join(f"{m} {lat[m]['p50']} / {lat[m]['p95']} / {lat[m]['p99']} ({mean[m]})" for m in lat),
                  "priming channels, ms p50 / p95: "
                  + ", ".join(f"{k} {v['p50']} / {v['p95']}" for k, v in block["priming_channel_ms"].items())]
        pc = block.get("pointer_chars")
        if pc:
            lines.append(f"primed text at the question budget, characters per text: {pc['text_chars_mean']} with short "
                         f"pointers ({pc['pointer_share_shown']:.1%} of them pointers), {pc['text_chars_mean_whole_pointers']}"
                         f" with whole ones ({pc['pointer_share_whole']:.1%})")
        lines.append("")
    demo = report.get("demo_pointer_chars")
    if demo:
        lines.append(f"demo (default message ids), characters per primed text: {demo['text_chars_mean']} with short "
                     f"pointers ({demo['pointer_share_shown']:.1%} of them pointers), "
                     f"{demo['text_chars_mean_whole_pointers']} with whole ones ({demo['pointer_share_whole']:.1%})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", action="append", required=True, help="a LoCoMo-format file (repeatable)")
    parser.add_argument("--conversations", action="append", default=[],
                        help="ids to take from the --data of the same position (comma-separated; '' = all)")
    parser.add_argument("--keep-data", default="", help="data dirs kept here and reused when complete (bench.locomo's)")
    parser.add_argument("--json", default="")
    parser.add_argument("--md", default="")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--jitter", type=int, default=2,
                        help="also recall at B-k … B+k: how far its own figure moves with a token of budget (0: not)")
    parser.add_argument("--demo", action="store_true",
                        help="also the pointers' share of primed text on the bundled demo (default message ids)")
    args = parser.parse_args(argv)
    keep = Path(args.keep_data) if args.keep_data else None
    tmp = tempfile.TemporaryDirectory(prefix="priming-") if keep is None else None
    root = keep or Path(tmp.name)
    try:
        sets = []
        for n, data in enumerate(args.data):
            ids = args.conversations[n] if n < len(args.conversations) else ""
            sets.append(run_set(data, [c for c in ids.split(",") if c] or None, root, args.quiet, args.jitter))
        demo = demo_pointer_share(root) if args.demo else None
    finally:
        if tmp is not None:
            tmp.cleanup()
    report = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": f"{platform.machine()} {platform.python_version()}",
              "command": " ".join(["python -m bench.priming", *(argv if argv is not None else sys.argv[1:])]),
              "categories": CATEGORY_NAMES, "sets": sets}
    if demo is not None:
        report["demo_pointer_chars"] = demo
    text = render(report)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.md:
        Path(args.md).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
