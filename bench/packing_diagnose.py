"""Why a question's evidence is or is not in the packed context at a budget: per question, the evidence's rank in
recall's ranked candidates ("full") and in the plain preset's, whether it was packed, and for each miss its kind.

    python -m bench.packing_diagnose --set longreply --language en --budget 256 [--half even|odd|all]
                                     [--data-dir DIR] [--json OUT]
    python -m bench.packing_diagnose --data FILE.json --conversations ID,… --budget 512,1024 --data-dir KEEP
                                     [--configs full] [--excerpt-tokens N]
    python -m bench.packing_diagnose --compare BEFORE.json AFTER.json   (paired Δ per budget, misses before/after)

Miss kinds (of one evidence id of one question, full configuration):
  ``never``    not among the ranked candidates at all;
  ``out``      ranked, not packed: the budget went to other turns first (``ahead``: the tokens packed for turns
               ranked before it; ``context``: of those, the tokens of turns only a neighbour made candidates);
  ``excerpt``  packed, but as an excerpt of a long turn whose text lacks the gold answer (answer@B sets); its
               ``quoted`` says what the excerpt took: ``sentences`` of a chat turn, or of a long turn the
               ``answering passage`` (the one holding the answer, other sentences of it) or ``another passage``;
               ``answer_sentence``: where the sentence holding the answer ranks among the turn's sentences by the
               question's words (the excerpt's first key) and by meaning (cosine to the question).
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


def diagnose_question(services, user: str, q, budget: int, qvec,
                      configs: Sequence[str] = CONFIGS) -> dict[str, Any]:
    """One question's row: recall@B per configuration (``configs``, "full" always), the evidence's ranks, its
    misses' kinds."""
    from lumina_memory.nodes.retrieval.budget import pack

    row: dict[str, Any] = {"question": q.question, "evidence": list(q.evidence), "budget": budget}
    configs = ["full", *(c for c in configs if c != "full")]
    runs = {c: _run(services, user, q.question, budget, qvec, c) for c in configs}
    for c, run in runs.items():
        packed, covered, used = pack(run.items, budget)
        row[c] = sum(e in covered for e in q.evidence) / len(q.evidence)
        if q.answer:
            row[c + "_answer"] = packed_answer(q.answer, packed)
    full = runs["full"]
    off = runs.get("no_context", full)  # (its relevance tells the neighbours' turns apart: "context" below)
    turns = full.index.turns
    ordered = list(full.ordered)
    rank_of: dict[str, int] = {}
    for r, cand in enumerate(ordered):
        rank_of.setdefault(_source(turns[cand[1]]), r)
    plain_rank: dict[str, int] = {}
    for r, cand in enumerate(runs["plain"].ordered if "plain" in runs else ()):
        plain_rank.setdefault(_source(turns[cand[1]]), r)
    base = off.rel if off.rel is not None else np.zeros(len(turns))
    packed_turns = {t for item in full.items for t in item.get("turn_ids", [])}
    packed, covered, _ = pack(full.items, budget)
    per_day = Counter()
    for item in packed:
        per_day[item.get("date", "")] += item.get("tokens", 0)
    # how spread the packed context is over sessions: its days, and the most one day took of what was packed
    row["days"] = len(per_day)
    row["top_day_share"] = round(max(per_day.values()) / max(1, sum(per_day.values())), 3) if per_day else 0.0
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
                text = next(t.text for t in turns if _source(t) == e)
                entry["quoted"] = _quoted(services.settings, q.answer, item, e, text)
                ranks = answer_sentence_ranks(services.embedder, q.question, qvec, q.answer, text)
                if ranks is not None:
                    entry["answer_sentence"] = ranks
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
            entry["ahead"] = ahead
            if "no_context" in runs:  # which turns only a neighbour made candidates: relevance without context
                entry["context"] = context
        misses.append(entry)
    row["misses"] = misses
    return row


def _quoted(settings, answer: str, item: dict[str, Any], source: str, text: str) -> str:
    """What an excerpt that lacks the answer quoted of its turn: ``sentences`` of a chat turn, or of a long turn
    the ``answering passage`` (the passage holding the answer, its other sentences) or ``another passage``."""
    from lumina_memory.nodes.text.passages import passage_spans

    parts = [p for p in item.get("passages", []) if p.get("source_id") == source]
    if not parts:
        return "sentences"
    spans = passage_spans(text, settings.recall_passage_tokens, settings.recall_passage_min_tokens)
    number = parts[0]["passage"]
    holds = number < len(spans) and packed_answer(answer, [{"text": text[slice(*spans[number])]}])
    return "answering passage" if holds else "another passage"


def answer_sentence_ranks(embedder, question: str, qvec, answer: str, text: str) -> dict[str, int] | None:
    """Where the sentence that holds (part of) the answer ranks among the turn's sentences (0 = first): by the
    question's words (terms shared, then position: the first key of an excerpt's order, nodes.retrieval.excerpts,
    without its preference for the answering passage's sentences) and by meaning (cosine to the question). None
    when the turn has one sentence or no sentence holds the answer."""
    from lumina_memory.nodes.text.sentences import sentence_spans
    from lumina_memory.nodes.text.tokenize import terms

    sentences = [text[a:b] for a, b in sentence_spans(text)]
    holding = [k for k, s in enumerate(sentences) if packed_answer(answer, [{"text": s}])]
    if len(sentences) < 2 or not holding:
        return None
    asked = set(terms(question))
    shared = [len(asked & set(terms(s))) for s in sentences]
    by_words = sorted(range(len(sentences)), key=lambda k: (-shared[k], k))
    vectors = np.asarray(embedder.embed(sentences), dtype=np.float32)
    if qvec is None:
        qvec = embedder.embed([question])[0]
    by_meaning = list(np.argsort(-(vectors @ np.asarray(qvec, dtype=np.float32)), kind="stable"))
    return {"sentences": len(sentences), "by_words": min(by_words.index(k) for k in holding),
            "by_meaning": min(by_meaning.index(k) for k in holding)}


def interval(sums: dict[str, ConvSums]) -> tuple[float, float, float]:
    """Mean recall over the conversations' questions and its 95% bootstrap interval over conversations."""
    zero = {c: ConvSums(s.n, 0.0, 0.0) for c, s in sums.items()}
    ci = contribution(sums, zero, "recall")
    return ci["delta"], ci["lo"], ci["hi"]


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per budget: recall@B (and answer@B) of each configuration run, with intervals, and the misses' kinds."""
    out: dict[str, Any] = {}
    for budget in sorted({r.get("budget", 0) for r in rows}):
        out[str(budget)] = _summary([r for r in rows if r.get("budget", 0) == budget])
    return out


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for c in (c for c in CONFIGS if rows and c in rows[0]):
        sums: dict[str, ConvSums] = {}
        for r in rows:
            sums.setdefault(r["conv"], ConvSums()).add(r[c], r[c] == 1.0)
        mean, low, high = interval(sums)
        out[c] = {"recall": round(mean, 4), "ci": [round(low, 4), round(high, 4)]}
        answered = [r[c + "_answer"] for r in rows if r.get(c + "_answer") is not None]
        if answered:
            out[c]["answer"] = round(float(np.mean(answered)), 4)
    out["misses"] = dict(Counter(m["kind"] for r in rows for m in r["misses"]))
    out["excerpts_quoted"] = dict(Counter(m["quoted"] for r in rows for m in r["misses"] if "quoted" in m))
    ranks = [m["answer_sentence"] for r in rows for m in r["misses"] if "answer_sentence" in m]
    out["answer_sentence"] = {"excerpts": len(ranks), **{f"{by}_{name}": sum(1 for x in ranks if x[by] < top)
                                                         for by in ("by_words", "by_meaning")
                                                         for name, top in (("first", 1), ("top3", 3))}}
    outs = [m for r in rows for m in r["misses"] if m["kind"] == "out"]
    out["out_with_context_ahead"] = sum(1 for m in outs if m.get("context"))
    out["out_plain_rank_better"] = sum(1 for m in outs if m.get("plain_rank") is not None and m["plain_rank"] < m["rank"])
    return out


def _sums(rows: Sequence[dict[str, Any]], metric: str) -> dict[str, ConvSums]:
    """Per conversation, the full configuration's ``metric`` ("full" recall or "full_answer") summed."""
    sums: dict[str, ConvSums] = {}
    for r in rows:
        if r.get(metric) is not None:
            sums.setdefault(r["conv"], ConvSums()).add(float(r[metric]), r[metric] == 1.0)
    return sums


def compare(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Paired Δ (after − before) of the full configuration's recall@B and answer@B per budget, with 95% bootstrap
    intervals over conversations, and the misses' kinds of each run; the runs must hold the same questions."""
    out: dict[str, Any] = {}
    for budget in sorted({r["budget"] for r in after["rows"]}):
        a = [r for r in after["rows"] if r["budget"] == budget]
        convs = {r["conv"] for r in a}  # a run of one half against a run of both
        b = [r for r in before["rows"] if r["budget"] == budget and r["conv"] in convs]
        if [(r["conv"], r["question"]) for r in b] != [(r["conv"], r["question"]) for r in a]:
            raise ValueError(f"budget {budget}: the two runs did not ask the same questions")
        entry: dict[str, Any] = {"questions": len(a)}
        for metric in ("full", "full_answer"):
            sa, sb = _sums(a, metric), _sums(b, metric)
            if sa:
                ci = contribution(sa, sb, "recall")
                entry["recall" if metric == "full" else "answer"] = {
                    "before": round(sum(s.recall for s in sb.values()) / sum(s.n for s in sb.values()), 4),
                    "after": round(sum(s.recall for s in sa.values()) / sum(s.n for s in sa.values()), 4),
                    "delta": round(ci["delta"], 4), "ci": [round(ci["lo"], 4), round(ci["hi"], 4)]}
        entry["misses_before"] = dict(Counter(m["kind"] for r in b for m in r["misses"]))
        entry["misses_after"] = dict(Counter(m["kind"] for r in a for m in r["misses"]))
        out[str(budget)] = entry
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="", help="a named set (bench.ablation.materialise)")
    parser.add_argument("--data", default="", help="a LoCoMo-format JSON file instead of --set")
    parser.add_argument("--conversations", default="", help="comma-separated sample_ids (default: all)")
    parser.add_argument("--language", default="")
    parser.add_argument("--budget", default="256", help="one budget or several, comma-separated")
    parser.add_argument("--half", choices=("even", "odd", "all"), default="all")
    parser.add_argument("--data-dir", default="", help="where conversations are ingested (reused when there)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="configurations run beside full")
    parser.add_argument("--excerpt-share", type=float, default=None,
                        help="budget.EXCERPT_SHARE for this run (1 = the settings' excerpt lengths at any budget ≥ 48)")
    parser.add_argument("--excerpt-tokens", type=int, default=None,
                        help="settings.recall_passage_excerpt_tokens for this run")
    parser.add_argument("--context-share", type=float, default=None,
                        help="packing_groups.CONTEXT_SHARE for this run (1 = neighbours packed in rank order)")
    parser.add_argument("--json", default="")
    parser.add_argument("--compare", nargs=2, default=None, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        runs = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.compare]
        print(json.dumps(compare(*runs), indent=1))
        return 0
    if not (args.set or args.data):
        parser.error("--set or --data is required")

    from bench.locomo import ingest
    from lumina_memory.nodes.retrieval import budget as budget_module
    from lumina_memory.nodes.retrieval import packing_groups
    from lumina_memory.stores.redis_server import stop_server

    if args.excerpt_share is not None:
        budget_module.EXCERPT_SHARE = args.excerpt_share
    if args.context_share is not None:
        packing_groups.CONTEXT_SHARE = args.context_share
    budgets = [int(b) for b in args.budget.split(",") if b]
    configs = [c for c in args.configs.split(",") if c]
    wanted = [c for c in args.conversations.split(",") if c] or None

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.data) if args.data else materialise(args.set, Path(tmp))
        convs = [c for c in load(path, wanted) if not args.language or c.language == args.language]
        root = Path(args.data_dir or tmp) / ("" if args.data else f"{args.set}{args.language}")
        rows: list[dict[str, Any]] = []
        for conv in in_half(convs, args.half):
            settings, services, _ = ingest(conv, root / conv.sample_id, quiet=True)
            if args.excerpt_tokens is not None:
                services.settings.recall_passage_excerpt_tokens = args.excerpt_tokens
            try:
                for q in conv.questions:
                    qvec = services.embedder.embed([q.question])[0]
                    for budget in budgets:
                        row = diagnose_question(services, conv.sample_id, q, budget, qvec, configs)
                        row["conv"] = conv.sample_id
                        rows.append(row)
            finally:
                services.close()
                stop_server(settings)
    report = {"set": args.set or args.data, "language": args.language, "budgets": budgets, "half": args.half,
              "excerpt_share": budget_module.EXCERPT_SHARE, "context_share": packing_groups.CONTEXT_SHARE,
              "excerpt_tokens": args.excerpt_tokens, "summary": summarise(rows), "rows": rows}
    print(json.dumps(report["summary"], indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
