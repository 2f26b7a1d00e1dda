"""``python -m bench.storage_policy --data PATH [--conversations ID,…] [--budget 1024] [--days 30,7] [--json OUT]``:
what the storage policies (L9) cost deliberate recall once the raw-turn retention (L3's 7–30 days) has run.

Each conversation is ingested once (bench.locomo's ingest, embedded engines, offline), and every question is
asked through deliberate recall (purpose "question", budget B) with the policy ``keep``. Then the retention runs
on the conversation's own clock (``now`` = its last turn) with policy B and each ``--days`` in turn, longest first
(each run removes what is older than its limit, so the shorter limits follow on the same memory), and the
questions are asked again. Policies A and B leave the archive and every searched tier the same (B first writes
the turns to Parquet), so one run measures both: A is B's memory asked without the cold log
(``storage_policy_b_recall_items`` 0), B with it; B's Parquet files are read back through ``cold_turns`` to count
the evidence turns still found there.

Reported per stage: evidence recall@B (share of a question's evidence turns among the packed items' sources),
answer@B (the answer's words in the packed text, bench.locomo's ``packed_answer``), the share of evidence turns
older than the limit, turns left in the archive.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from bench.locomo import ingest, packed_answer
from bench.locomo_data import load
from lumina_memory.nodes.retention import cold_turns, enforce_retention
from lumina_memory.nodes.retrieval.budget import pack
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.redis_server import stop_server

DAY = 86_400.0


def ask(services, conv, budget: int) -> dict[str, float]:
    recalls, answers = [], []
    for q in conv.questions:
        items = recall(services, conv.sample_id, q.question, purpose="question", budget=budget)
        packed, covered, _ = pack(items, budget)
        if q.evidence:
            recalls.append(len(set(q.evidence) & covered) / len(set(q.evidence)))
        answer = packed_answer(q.answer, packed)
        if answer is not None:
            answers.append(answer)
    return {"questions": len(conv.questions), "recall_sum": sum(recalls), "recall_n": len(recalls),
            "answer_sum": sum(answers), "answer_n": len(answers)}


def conversation(conv, root: Path, budget: int, days: Sequence[int], quiet: bool) -> dict[str, Any]:
    settings, services, stats = ingest(conv, root / conv.sample_id, quiet)
    try:
        out: dict[str, Any] = {"turns": stats["turns"], "stages": {"keep": ask(services, conv, budget)}}
        end = max(t.ts for t in conv.turns)
        when = {t.dia_id: t.ts for t in conv.turns}
        evidence = [e for q in conv.questions for e in q.evidence if e in when]
        for limit in sorted(days, reverse=True):
            policy = dataclasses.replace(services, settings=services.settings.model_copy(
                update={"storage_policy": "B", "retention_raw_turns_days": limit}))
            report = enforce_retention(policy, now=end)
            # Policy A leaves the archive and every searched tier as B does; only B's cold log is quoted.
            without_cold = dataclasses.replace(services, settings=policy.settings.model_copy(
                update={"storage_policy_b_recall_items": 0}))
            out["stages"][f"A {limit} days"] = ask(without_cold, conv, budget)
            stage = ask(policy, conv, budget)
            stage["evidence_older_share"] = sum(when[e] < end - limit * DAY for e in evidence) / max(1, len(evidence))
            stage["turns_removed"] = report["raw_turns"]["turns"]
            stage["turns_left"] = services.stores.archive.counts(conv.sample_id)["turns"]
            cold = {t.source_id for t in cold_turns(policy, conv.sample_id, limit=1_000_000)}
            stage["evidence_in_cold_log_share"] = sum(e in cold for e in evidence) / max(1, len(evidence))
            out["stages"][f"B {limit} days"] = stage
        return out
    finally:
        services.close()
        stop_server(settings)


def summary(per_conv: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    stages: dict[str, dict[str, float]] = {}
    for conv in per_conv.values():
        for name, s in conv["stages"].items():
            acc = stages.setdefault(name, {"recall_sum": 0.0, "recall_n": 0, "answer_sum": 0.0, "answer_n": 0,
                                           "older": [], "cold": []})
            for k in ("recall_sum", "recall_n", "answer_sum", "answer_n"):
                acc[k] += s[k]
            if "evidence_older_share" in s:
                acc["older"].append(s["evidence_older_share"])
                acc["cold"].append(s["evidence_in_cold_log_share"])
    return {name: {"recall": round(a["recall_sum"] / max(1, a["recall_n"]), 4),
                   "answer": round(a["answer_sum"] / max(1, a["answer_n"]), 4),
                   "questions": a["recall_n"],
                   **({"evidence_older_share": round(sum(a["older"]) / len(a["older"]), 4),
                       "evidence_in_cold_log_share": round(sum(a["cold"]) / len(a["cold"]), 4)} if a["older"] else {})}
            for name, a in stages.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--conversations", default=None, help="comma-separated sample ids (default: all)")
    parser.add_argument("--budget", type=int, default=1024)
    parser.add_argument("--days", default="30,7", help="raw-turn retention limits to apply, comma-separated")
    parser.add_argument("--json", default=None)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    wanted = [c.strip() for c in args.conversations.split(",")] if args.conversations else None
    conversations = load(args.data, wanted)
    days = [int(d) for d in args.days.split(",") if d.strip()]
    with tempfile.TemporaryDirectory(prefix="lumina-policy-") as tmp:
        per_conv = {c.sample_id: conversation(c, Path(tmp), args.budget, days, args.quiet) for c in conversations}
    report = {"budget": args.budget, "days": days, "conversations": per_conv, "summary": summary(per_conv)}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    for name, s in report["summary"].items():
        print(f"{name:>12}: recall@{args.budget} {s['recall']:.3f}  answer@{args.budget} {s['answer']:.3f}  "
              + (f"evidence older than the limit {s['evidence_older_share']:.2f}, in the cold log "
                 f"{s['evidence_in_cold_log_share']:.2f}" if "evidence_older_share" in s else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
