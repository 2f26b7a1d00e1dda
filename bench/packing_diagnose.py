"""Why a question's evidence is or is not in the packed context at a budget: per question, the evidence's rank in
recall's ranked candidates ("full") and in the plain preset's, whether it was packed, and for each miss its kind.

    python -m bench.packing_diagnose --set longreply --language en --budget 256 [--half even|odd|all]
                                     [--data-dir DIR] [--json OUT]

Miss kinds (of one evidence id of one question, full configuration):
  ``never``    not among the ranked candidates at all;
  ``out``      ranked, not packed: the budget went to other turns first (``ahead``: the tokens packed for turns
               ranked before it; ``context``: of those, the tokens of turns only a neighbour made candidates);
  ``excerpt``  packed, but as an excerpt of a long turn whose text lacks the gold answer (answer@B sets).
Halves: conversations in file order, ``even`` = 0, 2, 4 …, ``odd`` = 1, 3, 5 … (tune on one, report on the other).
The report gives recall@B of full, plain and full without context per half, with 95% bootstrap intervals over
conversations (bench.ablation_stats). Conversations are ingested once into ``--data-dir`` and reused.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from bench.ablation import in_half, materialise
from bench.ablation_stats import ConvSums, contribution
from bench.locomo import packed_answer
from bench.locomo_data import load

CONFIGS = ("full", "plain", "no_context")


def _run(services, user: str, question: str, budget: int, qvec, config: str):
    """recall's stages over one run, returned whole: its ranked candidates, its relevance and its items."""
    from lumina_memory.nodes.retrieval.recall_run import RecallRequest, RecallRun
    from lumina_memory.nodes.retrieval.recall_stages import STAGES
    from lumina_memory.stores.settings_recall import RecallConfig

    kw: dict[str, Any] = {}
    if config == "plain":
        kw["config"] = RecallConfig.preset("plain")
    elif config == "no_context":
        kw["disabled"] = ("context",)
    run = RecallRun(services, RecallRequest(user, question, purpose="question", budget=budget,
                                            query_vector=qvec, **kw))
    for stage in STAGES:
        if stage.__name__ == "lead_knowledge":
            run.ordered = list(run.ordered)  # the rerank's order is a generator the packer would use up
        run = stage(run)
    return run


def _source(turn) -> str:
    from lumina_memory.nodes.text.chunking import parse_part

    return (parse_part(turn.source_id) or (turn.source_id,))[0]


def diagnose_question(services, user: str, q, budget: int, qvec) -> dict[str, Any]:
    """One question's row: recall@B per configuration, the evidence's ranks, its misses' kinds."""
    from lumina_memory.nodes.retrieval.budget import pack

    row: dict[str, Any] = {"question": q.question, "evidence": list(q.evidence)}
    runs = {c: _run(services, user, q.question, budget, qvec, c) for c in CONFIGS}
    for c, run in runs.items():
        packed, covered, used = pack(run.items, budget)
        row[c] = sum(e in covered for e in q.evidence) / len(q.evidence)
        if q.answer:
            row[c + "_answer"] = packed_answer(q.answer, packed)
    full, off = runs["full"], runs["no_context"]
    turns = full.index.turns
    ordered = list(full.ordered)
    rank_of: dict[str, int] = {}
    for r, cand in enumerate(ordered):
        rank_of.setdefault(_source(turns[cand[1]]), r)
    plain_rank: dict[str, int] = {}
    for r, cand in enumerate(runs["plain"].ordered):
        plain_rank.setdefault(_source(turns[cand[1]]), r)
    base = off.rel if off.rel is not None else np.zeros(len(turns))
    packed_turns = {t for item in full.items for t in item.get("turn_ids", [])}
    packed, covered, _ = pack(full.items, budget)
    misses = []
    for e in q.evidence:
        r = rank_of.get(e)
        entry: dict[str, Any] = {"id": e, "rank": r, "plain_rank": plain_rank.get(e)}
        if e in covered:
            item = next(i for i in packed if e in i.get("source_ids", []))
            excerpted = bool(item.get("passages")) or any(
                e == _source(turns[c[1]]) and turns[c[1]].text not in item["text"] for c in ordered[: (r or 0) + 1])
            if q.answer and excerpted and not packed_answer(q.answer, [item]):
                entry["kind"] = "excerpt"
            else:
                continue
        elif r is None:
            entry["kind"] = "never"
        else:
            entry["kind"] = "out"
            ahead = context = 0
            for cand in ordered[:r]:
                turn = turns[cand[1]]
                if turn.turn_id in packed_turns:
                    cost = int(full.index.token_counts[cand[1]])
                    ahead += cost
                    if base[cand[1]] <= 0:
                        context += cost
            entry["ahead"], entry["context"] = ahead, context
        misses.append(entry)
    row["misses"] = misses
    return row


def interval(sums: dict[str, ConvSums]) -> tuple[float, float, float]:
    """Mean recall over the conversations' questions and its 95% bootstrap interval over conversations."""
    zero = {c: ConvSums(s.n, 0.0, 0.0) for c, s in sums.items()}
    ci = contribution(sums, zero, "recall")
    return ci["delta"], ci["lo"], ci["hi"]


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for c in CONFIGS:
        sums: dict[str, ConvSums] = {}
        for r in rows:
            sums.setdefault(r["conv"], ConvSums()).add(r[c], r[c] == 1.0)
        mean, low, high = interval(sums)
        out[c] = {"recall": round(mean, 4), "ci": [round(low, 4), round(high, 4)]}
        answered = [r[c + "_answer"] for r in rows if r.get(c + "_answer") is not None]
        if answered:
            out[c]["answer"] = round(float(np.mean(answered)), 4)
    out["misses"] = dict(Counter(m["kind"] for r in rows for m in r["misses"]))
    outs = [m for r in rows for m in r["misses"] if m["kind"] == "out"]
    out["out_with_context_ahead"] = sum(1 for m in outs if m["context"])
    out["out_plain_rank_better"] = sum(1 for m in outs if m["plain_rank"] is not None and m["plain_rank"] < m["rank"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", required=True)
    parser.add_argument("--language", default="")
    parser.add_argument("--budget", type=int, default=256)
    parser.add_argument("--half", choices=("even", "odd", "all"), default="all")
    parser.add_argument("--data-dir", default="", help="where conversations are ingested (reused when there)")
    parser.add_argument("--excerpt-share", type=float, default=None,
                        help="budget.EXCERPT_SHARE for this run (1 = the settings' excerpt lengths at any budget ≥ 48)")
    parser.add_argument("--context-share", type=float, default=None,
                        help="packing_groups.CONTEXT_SHARE for this run (1 = neighbours packed in rank order)")
    parser.add_argument("--json", default="")
    args = parser.parse_args(argv)

    from bench.locomo import ingest
    from lumina_memory.nodes.retrieval import budget as budget_module
    from lumina_memory.stores.redis_server import stop_server

    from lumina_memory.nodes.retrieval import packing_groups

    if args.excerpt_share is not None:
        budget_module.EXCERPT_SHARE = args.excerpt_share
    if args.context_share is not None:
        packing_groups.CONTEXT_SHARE = args.context_share

    with tempfile.TemporaryDirectory() as tmp:
        path = materialise(args.set, Path(tmp))
        convs = [c for c in load(path, None) if not args.language or c.language == args.language]
        root = Path(args.data_dir or tmp) / f"{args.set}{args.language}"
        rows: list[dict[str, Any]] = []
        for conv in in_half(convs, args.half):
            settings, services, _ = ingest(conv, root / conv.sample_id, quiet=True)
            try:
                for q in conv.questions:
                    qvec = services.embedder.embed([q.question])[0]
                    row = diagnose_question(services, conv.sample_id, q, args.budget, qvec)
                    row["conv"] = conv.sample_id
                    rows.append(row)
            finally:
                services.close()
                stop_server(settings)
    report = {"set": args.set, "language": args.language, "budget": args.budget, "half": args.half,
              "excerpt_share": budget_module.EXCERPT_SHARE, "context_share": packing_groups.CONTEXT_SHARE,
              "summary": summarise(rows), "rows": rows}
    print(json.dumps(report["summary"], indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
