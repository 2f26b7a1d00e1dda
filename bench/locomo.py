"""LoCoMo retrieval harness: evidence recall@B and hit@B of our memory against baselines, in one run.

    python -m bench.locomo --data PATH [--budget 1024[,256]] [--conversations ID,…] [--json OUT]
                           [--no-ablation] [--no-mem0] [--keep-data DIR]
                           [--lifecycle [--lifecycle-days-after DAYS]]

Each conversation is ingested through the real memory graph (graphs.memory_graph.build_graph, services from
lumina_memory.nodes.services.open_services on a fresh data dir): one user per conversation (user id = sample_id), session
date-times as turn timestamps (30 s apart within a session), ``source_id`` = dia_id, speaker_a → "user" and
speaker_b → "lumina" with the real name kept in the text ("Caroline: …"), blip captions appended as text.
Every category 1–4 question with evidence (and 6, "update", in sets of our own) is asked through nodes.retrieval.recall.recall (purpose
"question"); the items are taken in rank order while they fit in B tokens (nodes.retrieval.budget: a CJK
character is one token, other text counts its words) and the dia_ids they were built from are compared to the
evidence. The stricter **answer@B** reads the same packed items: the share of the gold answer's parts whose
text is in them (bench.common.answer_found; questions without an answer are left out of it). Baselines
(bench.baselines) run on the same turns, embedder and budget. One table per budget: recall and hit overall and
per category (the categories the file's questions have), context tokens, and latency p50 / p95 / p99 without and
with the query embedding; under it answer@B beside recall@B, overall and per category. Then recall's latency
tail: per channel and stage (from ``Timings``), its percentiles and the queries it was the slowest part of,
overall and above the p95. ``ANSWER answer=<float> baseline_best=<float> questions=<int> without_answer=<int>``
(first budget) comes before the last line (and before ``LIFECYCLE`` with --lifecycle), which stays
``RESULT recall=<float> hit=<float> baseline_best=<float>`` for the first budget.

``--lifecycle`` also ingests every conversation with the forgetting lifecycle's daily batch run along its own
clock, and reports deliberate recall, priming and levels against the run without it (bench.locomo_lifecycle).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bench.baselines import (
    BM25Baseline,
    InMemoryStoreBaseline,
    Mem0Baseline,
    RRFBaseline,
    embed_alone_seconds,
    embed_pool_alone_seconds,
    ingest_texts,
    mem0_unavailable_reason,
)
from bench import locomo_lifecycle
from bench.common import TAIL, LatencyTail, answer_found, answer_parts, bench_settings, peak_rss_mb, percentiles, render_tail
from bench.locomo_data import CATEGORY_NAMES, Conversation, categories_in, load
from lumina_memory.nodes.retrieval.budget import count_tokens, pack
from lumina_memory.nodes.retrieval.recall import SWITCHES, Timings, recall

OURS = "lumina"
BASELINE_LIMIT = 400  # ranked raw turns per baseline query: far more than any budget here can hold


def _progress(total: int, desc: str, quiet: bool):
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, file=sys.stderr, disable=quiet, leave=False, dynamic_ncols=True)
    except ImportError:  # pragma: no cover
        class _Null:
            def update(self, n=1): ...
            def close(self): ...
        return _Null()


def packed_answer(answer: str, packed: Sequence[dict]) -> float | None:
    """answer@B of one question: its gold answer against the text of exactly the items packed into B."""
    return answer_found(answer, (item.get("text", "") for item in packed))


class Scores:
    """Per-question evidence recall, hit and answer@B, by category, for one system at one budget."""

    def __init__(self) -> None:
        # (category, recall, hit, tokens, answer@B — None for a question without an answer, or not measured,
        # the conversation's language — "" when the set does not say, the conversation's sample_id)
        self.rows: list[tuple[int, float, bool, int, float | None, str, str]] = []
        self.latency_ms: list[float] = []
        self.latency_embed_ms: list[float] = []

    def add(self, category: int, evidence: Sequence[str], covered: set[str], tokens: int,
            answer: float | None = None, language: str = "", conv: str = "") -> None:
        found = sum(1 for e in evidence if e in covered)
        self.rows.append((category, found / len(evidence), found == len(evidence), tokens, answer, language, conv))

    def summary(self) -> dict[str, Any]:
        def agg(rows):
            answered = [r[4] for r in rows if r[4] is not None]
            answer = {"answer": round(float(np.mean(answered)), 4) if answered else float("nan"),
                      "answer_n": len(answered)}
            if not rows:
                return {"n": 0, "recall": float("nan"), "hit": float("nan"), **answer}
            return {
                "n": len(rows),
                "recall": round(float(np.mean([r[1] for r in rows])), 4),
                "hit": round(float(np.mean([r[2] for r in rows])), 4),
                **answer,
            }

        out = agg(self.rows)
        # Only the categories asked: every system answers every question, so all show the same ones.
        asked = {r[0] for r in self.rows}
        out["by_category"] = {name: agg([r for r in self.rows if r[0] == c]) for c, name in CATEGORY_NAMES.items() if c in asked}
        languages = sorted({r[5] for r in self.rows if r[5]})
        if len(languages) > 1:  # a set of several languages (its samples' "language"): each one's own figures
            out["by_language"] = {lang: agg([r for r in self.rows if r[5] == lang]) for lang in languages}
        out["context_tokens_mean"] = round(float(np.mean([r[3] for r in self.rows])), 1) if self.rows else 0.0
        # Per-conversation sums, overall and per category: what bench.sets_report resamples for its intervals.
        out["by_conversation"] = _conversation_sums(self.rows)
        out["by_category_conversation"] = {name: _conversation_sums([r for r in self.rows if r[0] == c])
                                           for c, name in CATEGORY_NAMES.items() if c in asked}
        if self.latency_ms:
            out["latency_ms"] = percentiles(self.latency_ms, TAIL)
        if self.latency_embed_ms:
            out["latency_with_embedding_ms"] = percentiles(self.latency_embed_ms, TAIL)
        return out


def _conversation_sums(rows) -> dict[str, dict[str, float]]:
    """Per conversation: recall and hit summed over its questions, and answer@B over those with an answer."""
    from bench.ablation_stats import ConvSums

    sums: dict[str, ConvSums] = {}
    answers: dict[str, list[float]] = {}
    for r in rows:
        if r[6]:
            sums.setdefault(r[6], ConvSums()).add(r[1], r[2])
            if r[4] is not None:
                answers.setdefault(r[6], []).append(r[4])
    return {conv: {**s.as_dict(), "answer": round(sum(answers.get(conv, ())), 6), "answer_n": len(answers.get(conv, ()))}
            for conv, s in sums.items()}


def _rows(conv: Conversation) -> list[dict]:
    return [{"speaker": t.speaker, "text": t.text, "ts": t.ts, "source_id": t.dia_id} for t in conv.turns]


def ingest(conv: Conversation, data_dir: Path, quiet: bool) -> tuple[Any, Any, dict]:
    """Open fresh services on ``data_dir`` and replay the conversation through the real graph; on any
    error, close them and stop the data dir's Redis before raising."""
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    settings = bench_settings(data_dir)
    try:
        services = open_services(settings)
    except BaseException:
        stop_server(settings)  # it may have started before another store failed to open
        raise
    try:
        return settings, services, _ingest_into(conv, settings, services, quiet)
    except BaseException:
        # Whatever fails (an input the graph rejects, Ctrl-C), what this started stops here: the
        # caller's temporary data dir is about to go, and a Redis without its directory ignores SIGTERM.
        services.close()
        stop_server(settings)
        raise


def _ingest_into(conv: Conversation, settings, services, quiet: bool) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import replay

    done = services.stores.archive.counts(conv.sample_id)["turns"]
    # ≥: a message over max_message_chars is archived as several parts (S3), so a complete ingest can hold more.
    if done >= len(conv.turns):
        # What the last flush of a live process did (nodes.retrieval.warm): the timed questions then measure a
        # running memory, not the cold start of a process that just opened the data.
        from lumina_memory.nodes.retrieval.warm import warm_indexes

        warm_indexes(services, conv.sample_id)
        return {"turns": done, "seconds": float("nan"), "reused": True}
    graph = build_graph(services, checkpointer=InMemorySaver())
    # The embedder's worker processes load their model once per process, like the in-process model
    # when services open: neither load is ingest time.
    start_workers = getattr(services.embedder.inner, "start_worker", None)
    workers = bool(start_workers and start_workers(wait=True))
    bar = _progress(len(conv.turns), f"ingest {conv.sample_id}", quiet)
    cpu_before = os.times()
    started = time.perf_counter()
    replay(graph, conv.sample_id, _rows(conv), progress=bar.update)
    elapsed = time.perf_counter() - started
    cpu_after = os.times()
    bar.close()
    stats = {
        "turns": len(conv.turns),
        "seconds": round(elapsed, 3),
        "segments": services.stores.archive.counts(conv.sample_id)["segments"],
        "long_term_points": services.stores.vectors.count(conv.sample_id),
        # CPU of this process only: with the workers on, the embedding's CPU is theirs, so this is
        # the pipeline's own work (plus sending texts and reading vectors).
        "main_cpu_seconds": (cpu_after.user + cpu_after.system) - (cpu_before.user + cpu_before.system),
        "embedding": services.embedder.ahead_path if workers else "in-process",
        "reused": False,
    }
    return stats


def _evaluate(
    conv: Conversation,
    budgets: Sequence[int],
    search: Callable[[str, np.ndarray, int], list[dict]],
    scores: dict[int, Scores],
    qvecs: list[np.ndarray],
    embed_ms: list[float],
) -> None:
    for q, qvec, e_ms in zip(conv.questions, qvecs, embed_ms):
        started = time.perf_counter()
        ranked = search(q.question, qvec, BASELINE_LIMIT)
        ms = (time.perf_counter() - started) * 1000
        for budget in budgets:
            packed, covered, tokens = pack(ranked, budget)
            scores[budget].add(q.category, q.evidence, covered, tokens, packed_answer(q.answer, packed), conv.language,
                               conv.sample_id)
            scores[budget].latency_ms.append(ms)
            scores[budget].latency_embed_ms.append(ms + e_ms)


def run(args) -> dict[str, Any]:
    budgets = [int(b) for b in str(args.budget).split(",") if b.strip()]
    wanted = [c.strip() for c in args.conversations.split(",")] if args.conversations else None
    conversations = load(args.data, wanted)
    if not conversations:
        raise SystemExit(f"no conversations found in {args.data} (asked for {wanted})")
    quiet = args.quiet
    from lumina_memory.nodes.text.embedder import CachedEmbedder, Usem3Embedder

    # The baselines' embedder: same model, its own instance and cache (so nothing is shared with ours).
    ref_embedder = CachedEmbedder(Usem3Embedder(threads=2), 100_000)
    systems = [OURS, "bm25", "vectors", "rrf"]
    mem0_reason = None if args.mem0 else "disabled by --no-mem0"
    if mem0_reason is None:
        mem0_reason = mem0_unavailable_reason()
    if mem0_reason is None:
        systems.append("mem0")
    scores: dict[str, dict[int, Scores]] = {s: {b: Scores() for b in budgets} for s in systems}
    only = [a for a in getattr(args, "ablate", "").split(",") if a]
    unknown = sorted(set(only) - set(SWITCHES))
    if unknown:
        raise SystemExit(f"--ablate: unknown switch(es) {', '.join(unknown)}; known: {', '.join(SWITCHES)}")
    ablations = (only or list(SWITCHES)) if args.ablation else []
    ablation_scores: dict[str, dict[int, Scores]] = {a: {b: Scores() for b in budgets} for a in ablations}
    keep = Path(args.keep_data) if args.keep_data else None
    tmp = tempfile.TemporaryDirectory(prefix="locomo-") if keep is None else None
    try:
        return _run(args, conversations, budgets, quiet, ref_embedder, systems, scores, ablations, ablation_scores,
                    mem0_reason, keep or Path(tmp.name))
    finally:
        if tmp is not None:  # after every server in it stopped (each conversation's finally)
            tmp.cleanup()


def _run(args, conversations, budgets, quiet, ref_embedder, systems, scores, ablations, ablation_scores,
         mem0_reason, root: Path) -> dict[str, Any]:
    from lumina_memory.stores.redis_server import stop_server

    ingest_stats: dict[str, Any] = defaultdict(float)
    baseline_ingest: dict[str, float] = defaultdict(float)
    tail = LatencyTail()  # ours, once per question (at the largest budget)
    total_questions = sum(len(c.questions) for c in conversations)
    qbar = _progress(total_questions, "questions", quiet)
    life = _LifecycleRun(budgets) if args.lifecycle else None
    for conv in conversations:
        data_dir = root / conv.sample_id
        settings, services, stats = ingest(conv, data_dir, quiet)
        try:
            texts = ingest_texts(conv.sample_id, conv.turns, settings)  # the turns as stored and the passages
            embed_s, _ = embed_alone_seconds(ref_embedder, texts)
            if not stats["reused"]:
                ingest_stats["turns"] += stats["turns"]
                ingest_stats["seconds"] += stats["seconds"]
                ingest_stats["embed_alone_seconds"] += embed_s
                ingest_stats["main_cpu_seconds"] += stats["main_cpu_seconds"]
                ingest_stats["embedding"] = stats["embedding"]
                pool_s = embed_pool_alone_seconds(services.embedder.inner, texts)
                if pool_s is not None:
                    ingest_stats["pool_alone_seconds"] += pool_s
            ingest_stats["segments"] += services.stores.archive.counts(conv.sample_id)["segments"]
            # Questions: our embedder (uncached for them) gives the "with embedding" latency.
            qvecs, embed_ms = [], []
            for q in conv.questions:
                started = time.perf_counter()
                qvecs.append(services.embedder.embed([q.question])[0])
                embed_ms.append((time.perf_counter() - started) * 1000)
            ref_embedder.embed([q.question for q in conv.questions])  # baselines' cache: same queries
            for q, qvec, e_ms in zip(conv.questions, qvecs, embed_ms):
                timings = Timings()
                started = time.perf_counter()
                items = recall(services, conv.sample_id, q.question, purpose="question", budget=max(budgets),
                               query_vector=qvec, timings=timings)
                # Excluding every query embedding: the question's (precomputed) and its content view's (made inside).
                ms = (time.perf_counter() - started) * 1000 - timings.embed_ms
                tail.add(ms, timings.channels, timings.stages)
                for budget in budgets:
                    if budget != max(budgets):
                        items_b = recall(services, conv.sample_id, q.question, purpose="question", budget=budget, query_vector=qvec)
                    else:
                        items_b = items
                    packed, covered, tokens = pack(items_b, budget)
                    real = sum(count_tokens(i["text"]) for i in packed)
                    assert real <= budget and len(packed) == len(items_b), (real, budget, len(packed), len(items_b))
                    scores[OURS][budget].add(q.category, q.evidence, covered, real, packed_answer(q.answer, packed),
                                             conv.language, conv.sample_id)
                    scores[OURS][budget].latency_ms.append(ms)
                    scores[OURS][budget].latency_embed_ms.append(ms + timings.embed_ms + e_ms)
                    for name in ablations:
                        ab = recall(services, conv.sample_id, q.question, purpose="question", budget=budget,
                                    query_vector=qvec, disabled=(name,))
                        ab_packed, ab_cov, ab_tokens = pack(ab, budget)
                        ablation_scores[name][budget].add(q.category, q.evidence, ab_cov, ab_tokens,
                                                          packed_answer(q.answer, ab_packed), conv.language,
                                                          conv.sample_id)
                qbar.update(1)
            # Baselines on the same turns and budget.
            bm25 = BM25Baseline(conv.turns)
            vectors = InMemoryStoreBaseline(conv.turns, ref_embedder, (conv.sample_id, "turns"))
            rrf = RRFBaseline(bm25, vectors)
            baselines = [bm25, vectors, rrf]
            if "mem0" in systems:
                try:
                    baselines.append(Mem0Baseline(conv.turns, ref_embedder, conv.sample_id))
                except Exception as exc:  # noqa: BLE001
                    mem0_reason = f"mem0 failed here: {type(exc).__name__}: {exc}"
                    systems.remove("mem0")
                    scores.pop("mem0", None)
            for baseline in baselines:
                baseline_ingest[baseline.name] += baseline.ingest_s
                _evaluate(conv, budgets, baseline.search, scores[baseline.name], qvecs, embed_ms)
                if hasattr(baseline, "close"):
                    baseline.close()
            if life is not None:  # what the run without the lifecycle primes, at the same end time
                life.segments_without += services.stores.archive.counts(conv.sample_id, ("segments",))["segments"]
                locomo_lifecycle.prime(services, conv, conv.turns[-1].ts + args.lifecycle_days_after * locomo_lifecycle.DAY,
                                       life.priming_without)
        finally:
            services.close()
            stop_server(settings)
            gc.collect()
        if life is not None:
            life.conversation(conv, root, args.lifecycle_days_after, qvecs, quiet)
    qbar.close()
    turns = ingest_stats.get("turns", 0)
    report: dict[str, Any] = {
        "data": str(args.data),
        "conversations": [c.sample_id for c in conversations],
        "questions": total_questions,
        # Left out of answer@B: nothing to look for in the context.
        "questions_without_answer": sum(1 for c in conversations for q in c.questions if not answer_parts(q.answer)),
        "categories": categories_in(conversations),
        # Sessions placed a day after the one before for want of a readable date (bench.locomo_data.read_when).
        "unreadable_session_dates": {c.sample_id: c.unreadable_dates for c in conversations if c.unreadable_dates},
        "budgets": budgets,
        "machine": f"{platform.machine()} {platform.processor() or ''} {platform.python_version()}".strip(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(["python -m bench.locomo", *sys.argv[1:]]),
        "ingest": {
            "turns": int(turns),
            "turns_per_s": round(turns / ingest_stats["seconds"], 1) if ingest_stats.get("seconds") else None,
            "seconds": round(ingest_stats.get("seconds", 0.0), 2),
            "embedder_alone_seconds": round(ingest_stats.get("embed_alone_seconds", 0.0), 2),
            "pipeline_overhead_vs_embedder": (
                round((ingest_stats["seconds"] - ingest_stats["embed_alone_seconds"]) / ingest_stats["embed_alone_seconds"], 2)
                if ingest_stats.get("embed_alone_seconds") else None
            ),
            "embedding": ingest_stats.get("embedding", "in-process"),
            "main_process_cpu_seconds": round(ingest_stats.get("main_cpu_seconds", 0.0), 2),
            "embedder_workers_alone_seconds": (
                round(ingest_stats["pool_alone_seconds"], 2) if ingest_stats.get("pool_alone_seconds") else None
            ),
            "pipeline_overhead_vs_embedder_workers": (
                round((ingest_stats["seconds"] - ingest_stats["pool_alone_seconds"]) / ingest_stats["pool_alone_seconds"], 2)
                if ingest_stats.get("pool_alone_seconds") else None
            ),
            "segments": int(ingest_stats.get("segments", 0)),
            "baseline_ingest_seconds": {k: round(v, 2) for k, v in baseline_ingest.items()},
        },
        "results": {s: {str(b): scores[s][b].summary() for b in budgets} for s in scores},
        "ablation": {a: {str(b): ablation_scores[a][b].summary() for b in budgets} for a in ablations},
        "channel_latency_ms": tail.channel_percentiles(),
        "recall_tail": tail.summary(),
        "mem0": mem0_reason or "ran",
    }
    if life is not None:
        report["lifecycle"] = life.report(report["results"][OURS], args.lifecycle_days_after)
    report["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return report


class _LifecycleRun:
    """--lifecycle: each conversation again, with the daily batch along its clock (bench.locomo_lifecycle)."""

    def __init__(self, budgets: Sequence[int]) -> None:
        self.budgets = budgets
        self.scores = {b: Scores() for b in budgets}
        self.priming_without = locomo_lifecycle.Priming()
        self.priming_with = locomo_lifecycle.Priming()
        self.reached: Counter = Counter()
        self.conversations: dict[str, dict[str, Any]] = {}
        self.segments_without = 0

    def conversation(self, conv: Conversation, root: Path, days_after: float, qvecs, quiet: bool) -> None:
        from lumina_memory.stores.redis_server import stop_server

        bar = _progress(len(conv.turns), f"ingest {conv.sample_id} with the lifecycle", quiet)
        settings, services, stats = locomo_lifecycle.ingest_with_lifecycle(
            conv, root / f"{conv.sample_id}-lifecycle", days_after, quiet, lambda n, _user: bar.update(n))
        bar.close()
        try:
            # The same query vectors as the run without: only the memory differs.
            locomo_lifecycle.deliberate(services, conv, self.budgets, qvecs, self.scores, self.reached)
            locomo_lifecycle.prime(services, conv, stats["end_now"], self.priming_with)
            self.conversations[conv.sample_id] = stats
        finally:
            services.close()
            stop_server(settings)
            gc.collect()

    def report(self, without: dict[str, Any], days_after: float) -> dict[str, Any]:
        results = {str(b): self.scores[b].summary() for b in self.budgets}
        return {
            "days_after": days_after,
            "results": results,
            "comparison": locomo_lifecycle.compare(without, results),
            "reached": dict(self.reached),
            "priming": {"without": self.priming_without.summary(), "with": self.priming_with.summary()},
            "conversations": self.conversations,
            "totals": locomo_lifecycle.totals(self.conversations, self.segments_without),
        }


def _fmt(x: float) -> str:
    return "  —  " if x != x else f"{x:.3f}"


def _tail(latency: dict[str, float]) -> str:
    return " / ".join(str(latency.get(f"p{q}", "")) for q in TAIL)


def render(report: dict[str, Any]) -> str:
    lines: list[str] = []
    budgets = report["budgets"]
    categories = report["categories"]
    lines.append(f"LoCoMo retrieval — {report['data']} — {len(report['conversations'])} conversations, "
                 f"{report['questions']} questions ({', '.join(categories)}; with evidence)")
    unreadable = report.get("unreadable_session_dates") or {}
    if unreadable:
        lines.append(f"WARNING: {sum(map(len, unreadable.values()))} session date(s) unreadable, each placed a day after "
                     "the session before (temporal questions are measured on that clock): "
                     + "; ".join(f"{c} {', '.join(keys)}" for c, keys in unreadable.items()))
    ing = report["ingest"]
    if ing["turns"]:
        lines.append(
            f"ingest through the graph: {ing['turns']} turns in {ing['seconds']} s = {ing['turns_per_s']} turns/s; "
            f"embedder alone on the texts ingest embeds (turns, passages) {ing['embedder_alone_seconds']} s "
            f"(pipeline overhead = {ing['pipeline_overhead_vs_embedder']}× the embedder time); {ing['segments']} segments"
        )
        lines.append(
            f"  embedding during ingest: {ing['embedding']}; this process's CPU during ingest "
            f"{ing['main_process_cpu_seconds']} s; the embedder's worker processes alone on the same texts "
            f"{ing['embedder_workers_alone_seconds']} s (overhead against them = "
            f"{ing['pipeline_overhead_vs_embedder_workers']}×)"
        )
    else:
        lines.append("ingest: reused kept data dirs (no ingest timing in this run)")
    lines.append(f"baseline ingest seconds: {ing['baseline_ingest_seconds']}")
    if report["mem0"] != "ran":
        lines.append(f"mem0: not run — {report['mem0']}")
    for budget in budgets:
        b = str(budget)
        lines.append("")
        lines.append(f"## budget B = {budget} tokens")
        header = f"| system | recall@B | hit@B | " + " | ".join(f"{n} R / H" for n in categories) + \
            " | ctx tokens | p50 / p95 / p99 ms | p50 / p95 / p99 ms incl. query embedding |"
        lines.append(header)
        lines.append("|" + "---|" * (header.count("|") - 1))
        for system, per in report["results"].items():
            s = per[b]
            cats = " | ".join(f"{_fmt(s['by_category'][n]['recall'])} / {_fmt(s['by_category'][n]['hit'])}" for n in categories)
            lat = s.get("latency_ms", {})
            late = s.get("latency_with_embedding_ms", {})
            lines.append(
                f"| {system} | {_fmt(s['recall'])} | {_fmt(s['hit'])} | {cats} | {s['context_tokens_mean']} | "
                f"{_tail(lat)} | {_tail(late)} |"
            )
        lines += _language_table(report, b)
        lines += _answer_table(report, b)
        if report["ablation"]:
            full = report["results"][OURS][b]
            lines.append("")
            lines.append(f"ablation at B = {budget} (each channel/stage off in turn):")
            lines.append("| switched off | recall@B | Δ recall | hit@B | Δ hit |")
            lines.append("|---|---|---|---|---|")
            lines.append(f"| (nothing) | {_fmt(full['recall'])} | | {_fmt(full['hit'])} | |")
            for name, per in report["ablation"].items():
                s = per[b]
                lines.append(f"| {name} | {_fmt(s['recall'])} | {s['recall'] - full['recall']:+.3f} | {_fmt(s['hit'])} | "
                             f"{s['hit'] - full['hit']:+.3f} |")
    if report.get("lifecycle"):
        lines += locomo_lifecycle.render(report)
    if report["recall_tail"]["queries"]:
        lines.append("")
        lines += render_tail(report["recall_tail"], report["channel_latency_ms"])
    lines.append(f"peak RSS {report['peak_rss_mb']} MB; {report['machine']}; {report['date']}")
    return "\n".join(lines)


def _language_table(report: dict[str, Any], b: str) -> list[str]:
    """Recall / hit per language, for a set whose samples say their language (several of them)."""
    languages = list(report["results"][OURS][b].get("by_language", {}))
    if not languages:
        return []
    lines = ["", f"by language at B = {b} (recall / hit):",
             "| system | " + " | ".join(languages) + " |", "|---|" + "---|" * len(languages)]
    for system, per in report["results"].items():
        by = per[b].get("by_language", {})
        lines.append(f"| {system} | " + " | ".join(
            f"{_fmt(by[lang]['recall'])} / {_fmt(by[lang]['hit'])}" if lang in by else "–" for lang in languages) + " |")
    return lines


def _answer_table(report: dict[str, Any], b: str) -> list[str]:
    """answer@B beside evidence recall, so the gap between "the turn was packed" and "the answer was packed" shows."""
    categories = report["categories"]
    without = report.get("questions_without_answer", 0)
    lines = ["", f"answer@B at B = {b}: the gold answer's text in the packed context (share of its parts; "
                 f"{without} question{'s' if without != 1 else ''} without an answer left out):",
             # answer@B first, so the main table stays the only one whose header starts "| system | recall@B |".
             "| system | answer@B | recall@B | " + " | ".join(f"{n} A / R" for n in categories) + " |"]
    lines.append("|" + "---|" * (lines[-1].count("|") - 1))
    for system, per in report["results"].items():
        s = per[b]
        cats = " | ".join(f"{_fmt(s['by_category'][n]['answer'])} / {_fmt(s['by_category'][n]['recall'])}"
                          for n in categories)
        lines.append(f"| {system} | {_fmt(s['answer'])} | {_fmt(s['recall'])} | {cats} |")
    return lines


def answer_line(report: dict[str, Any]) -> str:
    """answer@B at the first budget, ours and the best baseline's (printed just before RESULT, which stays last)."""
    b = str(report["budgets"][0])
    ours = report["results"][OURS][b]
    theirs = [per[b]["answer"] for system, per in report["results"].items() if system != OURS]
    best = max((a for a in theirs if a == a), default=float("nan"))  # NaN: a set with no answers at all
    return (f"ANSWER answer={ours['answer']:.4f} baseline_best={best:.4f} questions={ours['answer_n']} "
            f"without_answer={report['questions_without_answer']}")


def result_line(report: dict[str, Any]) -> str:
    b = str(report["budgets"][0])
    ours = report["results"][OURS][b]
    best = max(per[b]["recall"] for system, per in report["results"].items() if system != OURS)
    return f"RESULT recall={ours['recall']:.4f} hit={ours['hit']:.4f} baseline_best={best:.4f}"


def lifecycle_line(report: dict[str, Any]) -> str:
    """Deliberate recall with the lifecycle against without it, first budget (printed before RESULT)."""
    b = str(report["budgets"][0])
    life = report["lifecycle"]
    c = life["comparison"]["budgets"][b]
    return (f"LIFECYCLE recall={life['results'][b]['recall']:.4f} delta={c['recall_delta']:+.4f} "
            f"within_1_point={c['within_tolerance']} archived_primed={life['priming']['with']['archived_in_table']}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--budget", default="1024", help="context budget in tokens; several as 512,1024,2048, one table each (RESULT uses the first)")
    parser.add_argument("--conversations", default="", help="comma-separated sample_ids (default: all)")
    parser.add_argument("--json", default="", help="also write the full report here")
    parser.add_argument("--no-ablation", dest="ablation", action="store_false", help="skip the ablation table")
    parser.add_argument("--ablate", default="", help="comma-separated switches for the ablation table (default: all)")
    parser.add_argument("--no-mem0", dest="mem0", action="store_false", help="skip the mem0 baseline")
    parser.add_argument("--keep-data", default="", help="keep data dirs here and reuse complete ones (development)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--lifecycle", action="store_true",
                        help="also ingest with the daily forgetting batch along each conversation's clock and compare")
    parser.add_argument("--lifecycle-days-after", type=float, default=0.0,
                        help="with --lifecycle: the last batch runs this many days after the last turn")
    args = parser.parse_args(argv)
    report = run(args)
    print(render(report))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    # The last lines stay LIFECYCLE (with --lifecycle) then RESULT, where readers of the output look for them.
    print(answer_line(report))
    if report.get("lifecycle"):
        print(lifecycle_line(report))
    print(result_line(report))
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    sys.exit(main())
