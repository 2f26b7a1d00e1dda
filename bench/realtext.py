"""Recall on the real-text set (bench.realtext_data): Lumina (full) against plain vectors, BM25 and RRF at each
budget, per issue category with 95% bootstrap intervals over conversations, why Lumina misses, and ingest speed.

    python -m bench.realtext [--split dev|report|all] [--language en|ja] [--per-language 9] [--seed 46]
                             [--budget 512,1024,2048] [--diagnose-budget 1024] [--conversations ID,…]
                             [--questions template|written] [--keep-data DIR] [--out bench/results/realtext_dev]
    python -m bench.realtext --merge A.json B.json --out C    (one report from saved runs)

Each conversation is ingested through the real memory graph (bench.locomo.ingest) and every question asked
through ``recall`` (purpose "question") at every budget; the baselines (bench.baselines: ``vectors`` = LangGraph's
InMemoryStore over raw turns with the same embedder, ``bm25``, ``rrf``) rank the same turns and bench.locomo's
packer cuts every ranking at B. Per question: evidence recall@B, hit@B and answer@B (bench.locomo.packed_answer).
Intervals resample conversations (bench.ablation_stats, via bench.packing_diagnose.interval).

Misses (``--diagnose-budget``, Lumina full): for each evidence id not covered, bench.packing_diagnose's classes —
``never`` a candidate, a candidate packed ``out`` by the budget, packed as an ``excerpt`` that lacks the answer.
Ingest: turns/s through the graph, and the graph's time over the embedder's own time on the same texts.
The default split is ``dev``: the held-out ``report`` conversations are for reporting only.
Questions: ``template`` (bench.realtext_questions, every conversation) or ``written`` (the paraphrased questions of
bench.realtext_written, only the conversations that have them). ``--keep-data DIR`` keeps each conversation's data
dir under DIR (one folder per seed, size and padding) and reuses a complete one instead of ingesting it again.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from bench import realtext_data as rt
from bench.ablation_stats import ConvSums
from bench.locomo_data import load
from bench.realtext_phrases import KIND_CATEGORY

SYSTEMS = ("lumina", "vectors", "bm25", "rrf")
MISS_KINDS = ("never", "out", "excerpt")
BASELINE_LIMIT = 400


def _row(system: str, budget: int, conv: str, kind: str, language: str, evidence: Sequence[str],
         covered: set[str], answer: float | None) -> dict[str, Any]:
    found = sum(1 for e in evidence if e in covered)
    return {"system": system, "budget": budget, "conv": conv, "kind": kind, "language": language,
            "recall": found / len(evidence), "hit": found == len(evidence), "answer": answer}


def own_excerpts(misses: Sequence[dict], answer: str, texts: dict[str, str]) -> list[dict]:
    """The misses without the ``excerpt`` ones of evidence turns that hold no part of the answer themselves (the
    second turn of "which came first", whose answer is the first turn's value): an excerpt of such a turn cannot
    lack what the turn never said."""
    from bench.common import answer_found

    return [m for m in misses if m["kind"] != "excerpt" or answer_found(answer, [texts.get(m["id"], "")])]


def ask_conversation(services, conv, kinds: Sequence[str], budgets: Sequence[int], ref_embedder,
                     diagnose_budget: int | None) -> tuple[list[dict], list[dict]]:
    """Every question of one ingested conversation: score rows of every system and budget, and miss rows.
    ``conv.questions`` whose answer is worked out from dates carry no answer here (nothing to find in a text)."""
    from bench.baselines import BM25Baseline, InMemoryStoreBaseline, RRFBaseline
    from bench.locomo import packed_answer
    from bench.packing_diagnose import diagnose_question
    from lumina_memory.nodes.retrieval.budget import pack
    from lumina_memory.nodes.retrieval.recall import recall

    rows, misses = [], []
    texts = {t.dia_id: t.text for t in conv.turns}
    qvecs = [services.embedder.embed([q.question])[0] for q in conv.questions]
    for q, kind, qvec in zip(conv.questions, kinds, qvecs):
        for budget in budgets:
            items = recall(services, conv.sample_id, q.question, purpose="question", budget=budget, query_vector=qvec)
            packed, covered, _ = pack(items, budget)
            rows.append(_row("lumina", budget, conv.sample_id, kind, conv.language, q.evidence, covered,
                             packed_answer(q.answer, packed)))
        if diagnose_budget:
            diag = diagnose_question(services, conv.sample_id, q, diagnose_budget, qvec)
            misses.append({"conv": conv.sample_id, "kind": kind, "language": conv.language, "question": q.question,
                           "evidence": list(q.evidence), "misses": own_excerpts(diag["misses"], q.answer, texts)})
    ref_embedder.embed([q.question for q in conv.questions])
    bm25 = BM25Baseline(conv.turns)
    vectors = InMemoryStoreBaseline(conv.turns, ref_embedder, (conv.sample_id, "turns"))
    for baseline in (vectors, bm25, RRFBaseline(bm25, vectors)):
        for q, kind, qvec in zip(conv.questions, kinds, qvecs):
            ranked = baseline.search(q.question, qvec, BASELINE_LIMIT)
            for budget in budgets:
                packed, covered, _ = pack(ranked, budget)
                rows.append(_row(baseline.name, budget, conv.sample_id, kind, conv.language, q.evidence, covered,
                                 packed_answer(q.answer, packed)))
    return rows, misses


def run(args) -> dict[str, Any]:
    from bench.baselines import embed_alone_seconds, ingest_texts
    from bench.locomo import ingest
    from lumina_memory.nodes.text.embedder import CachedEmbedder, Usem3Embedder
    from lumina_memory.stores.redis_server import stop_server

    budgets = [int(b) for b in args.budget.split(",") if b.strip()]
    languages = tuple(args.language.split(",")) if args.language else rt.LANGUAGES
    samples = _samples(args, languages)
    wanted = {c for c in args.conversations.split(",") if c} if args.conversations else None
    samples = [s for s in samples if not wanted or s["sample_id"] in wanted]
    ref_embedder = CachedEmbedder(Usem3Embedder(threads=2), 100_000)
    rows: list[dict] = []
    misses: list[dict] = []
    ingest_totals: dict[str, float] = defaultdict(float)
    with tempfile.TemporaryDirectory(prefix="realtext-") as tmp:
        root = Path(tmp) if not args.keep_data else Path(args.keep_data) / (
            f"seed{args.seed}-{args.size}-pad{getattr(args, 'pad', 0)}")
        path = Path(tmp) / "realtext.json"
        path.write_text(rt.dumps(samples), encoding="utf-8")
        for sample, conv in zip(samples, load(path)):
            kinds = [qa["kind"] for qa in sample["qa"]]
            assert len(kinds) == len(conv.questions), sample["sample_id"]
            for q, qa in zip(conv.questions, sample["qa"]):
                if qa["answer_in"] != "turns":  # a date or a count of days: answer@B and excerpts cannot see it
                    q.answer = ""
            settings, services, stats = ingest(conv, root / conv.sample_id, quiet=True)
            try:
                texts = [t.text for t in conv.turns]
                embed_s = 0.0
                if not stats.get("reused"):  # ingest speed counts fresh ingests only
                    embed_s, _ = embed_alone_seconds(ref_embedder, ingest_texts(conv.sample_id, conv.turns, settings))
                    ingest_totals["turns"] += stats["turns"]
                    ingest_totals["seconds"] += stats["seconds"]
                    ingest_totals["embed_alone_seconds"] += embed_s
                    ingest_totals["words"] += sum(len(t.split()) for t in texts)
                r, m = ask_conversation(services, conv, kinds, budgets, ref_embedder, args.diagnose_budget or None)
                rows += r
                misses += m
            finally:
                services.close()
                stop_server(settings)
                gc.collect()
            print(f"[realtext] {conv.sample_id}: {stats['turns']} turns ingested in {stats['seconds']:.1f} s, "
                  f"embedder alone {embed_s:.1f} s, {len(conv.questions)} questions", file=sys.stderr, flush=True)
    return report(args, samples, budgets, rows, misses, ingest_totals)


def _samples(args, languages: tuple[str, ...]) -> list[dict]:
    """The conversations of the split with their template questions, or (``--questions written``) those that have
    written questions, with them (bench.realtext_written; dropped ones are printed)."""
    pad = getattr(args, "pad", 0)
    if args.questions == "template":
        extra = {"pad": pad} if pad > 0 else {}
        return rt.generate(args.per_language, args.seed, rt.SIZES[args.size], args.split, languages, **extra)
    from bench.realtext_written import build

    samples, dropped = build(args.split, pad, languages, args.per_language, args.seed, rt.SIZES[args.size])
    for line in dropped.details:
        print(f"[realtext] dropped {line}", file=sys.stderr)
    return samples


def _ci(rows: Sequence[dict]) -> dict[str, Any]:
    from bench.packing_diagnose import interval

    sums: dict[str, ConvSums] = {}
    for r in rows:
        sums.setdefault(r["conv"], ConvSums()).add(r["recall"], r["hit"])
    if not sums:
        return {"n": 0}
    mean, lo, hi = interval(sums)
    answers = [r["answer"] for r in rows if r["answer"] is not None]
    return {"n": len(rows), "recall": round(mean, 4), "ci": [round(lo, 4), round(hi, 4)],
            "hit": round(sum(r["hit"] for r in rows) / len(rows), 4),
            "answer": round(sum(answers) / len(answers), 4) if answers else None}


def report(args, samples, budgets, rows, misses, ingest_totals) -> dict[str, Any]:
    kinds = [k for k in KIND_CATEGORY if any(r["kind"] == k for r in rows)]
    results = {s: {str(b): {"all": _ci([r for r in rows if r["system"] == s and r["budget"] == b]),
                            **{k: _ci([r for r in rows if r["system"] == s and r["budget"] == b and r["kind"] == k])
                               for k in kinds},
                            **{f"lang:{lang}": _ci([r for r in rows if r["system"] == s and r["budget"] == b
                                                    and r["language"] == lang])
                               for lang in sorted({r["language"] for r in rows})}}
                   for b in budgets} for s in SYSTEMS}
    miss_table = {k: dict(Counter(m["kind"] for row in misses if row["kind"] == k for m in row["misses"]))
                  for k in kinds}
    evidence = {k: sum(len(row["evidence"]) for row in misses if row["kind"] == k) for k in kinds}
    seconds, embed = ingest_totals.get("seconds", 0.0), ingest_totals.get("embed_alone_seconds", 0.0)
    return {
        "command": " ".join(["python -m bench.realtext", *sys.argv[1:]]),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "split": args.split, "seed": args.seed, "per_language": args.per_language, "size": args.size,
        "question_set": getattr(args, "questions", "template"),
        "conversations": [s["sample_id"] for s in samples],
        "questions": sum(len(s["qa"]) for s in samples),
        "budgets": budgets, "kinds": kinds, "results": results,
        "misses": {"budget": args.diagnose_budget, "by_kind": miss_table, "evidence_by_kind": evidence},
        "ingest": {"turns": int(ingest_totals.get("turns", 0)), "words": int(ingest_totals.get("words", 0)),
                   "seconds": round(seconds, 1), "embedder_alone_seconds": round(embed, 1),
                   "turns_per_s": round(ingest_totals["turns"] / seconds, 2) if seconds else None,
                   "ratio_to_embedder": round(seconds / embed, 2) if embed else None},
        "rows": rows, "miss_rows": misses,
    }


def _cell(x: dict[str, Any]) -> str:
    if not x.get("n"):
        return "–"
    return f"{x['recall']:.3f} [{x['ci'][0]:.2f}, {x['ci'][1]:.2f}]"


def _sums(rows: Sequence[dict]) -> dict[str, ConvSums]:
    out: dict[str, ConvSums] = {}
    for r in rows:
        out.setdefault(r["conv"], ConvSums()).add(r["recall"], r["hit"])
    return out


def gain_over(rows: Sequence[dict], budget: int, column: str, base: str = "vectors") -> str:
    """Lumina − ``base`` on one column's questions, in points, with its paired bootstrap interval."""
    from bench.ablation_stats import contribution

    def pick(system):
        return _sums([r for r in rows if r["system"] == system and r["budget"] == budget and
                      (column == "all" or r["kind"] == column or f"lang:{r['language']}" == column)])

    ours, theirs = pick("lumina"), pick(base)
    if not ours:
        return "–"
    c = contribution(ours, theirs, "recall")
    return f"{c['delta'] * 100:+.1f} [{c['lo'] * 100:+.1f}, {c['hi'] * 100:+.1f}]"


def render(rep: dict[str, Any]) -> str:
    ing = rep["ingest"]
    lines = [f"# Real-text set, split {rep['split']} ({rep['date']})", "",
             f"`{rep['command']}` — {len(rep['conversations'])} conversations, {rep['questions']} questions; "
             "recall@B [95% bootstrap interval over conversations]; Δ = Lumina − plain vectors in points, paired "
             "bootstrap.", "",
             f"Ingest: {ing['turns']} turns ({ing['words']:,} words) in {ing['seconds']} s = {ing['turns_per_s']} "
             f"turns/s; the embedder alone on the texts ingest embeds (turns and long turns' passages) "
             f"{ing['embedder_alone_seconds']} s: the graph takes {ing['ratio_to_embedder']}× the embedder's time.", ""]
    first = rep["results"]["lumina"][str(rep["budgets"][0])]
    columns = ["all", *rep["kinds"], *[k for k in first if k.startswith("lang:")]]
    for b in rep["budgets"]:
        lines += [f"## B = {b}", "", "| category | questions | " + " | ".join(SYSTEMS) + " | Δ vs vectors |",
                  "|---|---|" + "---|" * (len(SYSTEMS) + 1)]
        for c in columns:
            cells = [_cell(rep["results"][s][str(b)][c]) for s in SYSTEMS]
            lines.append(f"| {c} | {rep['results']['lumina'][str(b)][c].get('n', 0)} | " + " | ".join(cells) +
                         f" | {gain_over(rep['rows'], b, c)} |")
        lines.append("answer@B: " + ", ".join(f"{s} {rep['results'][s][str(b)]['all'].get('answer')}"
                                              for s in SYSTEMS))
        lines.append("")
    m = rep["misses"]
    if m["budget"]:
        lines += [f"## Why Lumina misses at B = {m['budget']} (evidence ids; bench.packing_diagnose's classes)", "",
                  "| category | evidence ids | never a candidate | packed out | excerpt lacks the answer |",
                  "|---|---|---|---|---|"]
        for k in rep["kinds"]:
            c = m["by_kind"].get(k, {})
            lines.append(f"| {k} | {m['evidence_by_kind'].get(k, 0)} | " +
                         " | ".join(str(c.get(x, 0)) for x in MISS_KINDS) + " |")
        total = Counter()
        for c in m["by_kind"].values():
            total.update(c)
        lines.append(f"| all | {sum(m['evidence_by_kind'].values())} | " +
                     " | ".join(str(total.get(x, 0)) for x in MISS_KINDS) + " |")
    return "\n".join(lines) + "\n"


def merge(paths: Sequence[str]) -> dict[str, Any]:
    """One report from the rows of several saved runs (e.g. English and Japanese run apart)."""
    reps = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    first = reps[0]
    args = argparse.Namespace(split=first["split"], seed=first["seed"], per_language=first["per_language"],
                              size=first["size"], diagnose_budget=first["misses"]["budget"])
    samples = [{"sample_id": c, "qa": []} for r in reps for c in r["conversations"]]
    totals: dict[str, float] = defaultdict(float)
    for r in reps:
        ing = r["ingest"]
        totals["turns"] += ing["turns"]
        totals["words"] += ing["words"]
        totals["seconds"] += ing["seconds"]
        totals["embed_alone_seconds"] += ing["embedder_alone_seconds"]
    merged = report(args, samples, first["budgets"], [row for r in reps for row in r["rows"]],
                    [row for r in reps for row in r["miss_rows"]], totals)
    merged["questions"] = sum(r["questions"] for r in reps)
    merged["command"] = "; ".join(r["command"] for r in reps)
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realtext", description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "report", "all"), default="dev")
    parser.add_argument("--language", default="", help="en, ja or en,ja (default: both)")
    parser.add_argument("--per-language", type=int, default=rt.DEFAULT_PER_LANGUAGE)
    parser.add_argument("--seed", type=int, default=rt.DEFAULT_SEED)
    parser.add_argument("--size", choices=sorted(rt.SIZES), default="default")
    parser.add_argument("--budget", default="512,1024,2048")
    parser.add_argument("--diagnose-budget", type=int, default=1024, help="0: no miss classes")
    parser.add_argument("--conversations", default="", help="comma-separated sample_ids (default: all of the split)")
    parser.add_argument("--questions", choices=("template", "written"), default="template",
                        help="written: the hand-written questions of bench.realtext_written")
    parser.add_argument("--keep-data", default="", help="keep data dirs here and reuse complete ones (development)")
    parser.add_argument("--out", default="", help="write OUT.json (with every question's row) and OUT.md")
    parser.add_argument("--merge", nargs="+", default=[], metavar="JSON",
                        help="no run: one report from saved runs' JSON files (written to --out)")
    args = parser.parse_args(argv)
    rep = merge(args.merge) if args.merge else run(args)
    text = render(rep)
    print(text)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(rep, ensure_ascii=False, indent=1), encoding="utf-8")
        out.with_suffix(".md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
