"""Forgetting-lifecycle benchmark: the daily batch over many users' memories, against the notes' per-memory loop.

    python -m bench.lifecycle [--users 100] [--memories-per-user 10000] [--days 3] [--reference-memories 10000]
                              [--level-rows 100000] [--repeats 5] [--quick] [--out bench/results/lifecycle.json]

A year of memories per user (``bench.lifecycle_data``: ages over a year, categories and intensities per the notes,
recall history, pending recall flags, protected memories, relations, 384-d topic embeddings) is written to the
product's lifecycle table (``lumina_memory.stores.memories_duckdb.MemoryTable`` on its own DuckDB file, through
``bench.lifecycle_store``), then batched as a maintenance run would: load the users' columns and relations, run
``lumina_memory.nodes.lifecycle.daily_batch`` (steps 1–6 and 8), auto-link each user's new and re-embedded memories against all
their active ones (step 7, matrix products, one call per user), write the day back (``write_day``: every row's
batch columns, the relation set, derived writes owed, the day's mark, one transaction). First the *first full
batch* (every memory imported at level 1, never batched: the year is sorted at once), then ``--days`` *typical
daily batches* (each with that day's new memories, 1 % recalled, revival requests, written by ``put_new`` and
``mark_recalled`` before the batch). Model time is excluded: no text is compressed and nothing is re-embedded
(a compressed memory keeps its vector).

Side by side in the same process: ``lumina_memory.nodes.lifecycle.reference`` (the notes' pseudocode over dicts) on one user's
``--reference-memories`` memories, timed against the vectorised core on the same memories, and checked equal to
the bit (columns, relations, deletions; auto-link in float64 there, as the tests do). Every timing of the core
and of the reference is the median of ``--repeats`` runs. Memory: the batch's own peak allocation
(``tracemalloc``, a separate run of the same batch) and the process's peak RSS (``getrusage`` ``ru_maxrss``).
Disk: DuckDB files of memories at each level (``bench.lifecycle_store``).
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path
from statistics import median
from typing import Any, Callable, Sequence

import numpy as np

from bench.common import peak_rss_mb
from bench.lifecycle_data import (
    BATCH_EPOCH, DAY_SECONDS, Population, by_user, imported_population, next_day, user_rows, user_slice,
)
from bench.lifecycle_store import FIELDS, MemoryTableRoundTrip, level_file_bytes, memory_ids, vector_file_bytes
from lumina_memory.nodes.lifecycle import (
    ARCHIVED, LifecycleParams, MemoryColumns, Relations, auto_link, daily_batch, drop_rows, level_transitions,
)
from lumina_memory.nodes.lifecycle import reference as ref

TARGET_SPEEDUP = 20.0
TARGET_DAILY_SECONDS = 120.0
QUICK = {"users": 3, "memories_per_user": 500, "days": 2, "reference_memories": 500, "level_rows": 1000,
         "repeats": 3}


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def _median_time(fn: Callable[[], Any], repeats: int) -> float:
    return median(_timed(fn)[1] for _ in range(repeats))


def _traced_peak_mb(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        return round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    finally:
        tracemalloc.stop()


class _CopyMadeBeforeTheClock:
    """Stands in for ``copy`` inside the reference while its loop alone is timed: the reference deep-copies its
    input first (it is a pure function); that copy is made before the clock starts instead."""

    @staticmethod
    def deepcopy(value):
        return value


def _reference_loop_time(records: list[dict], today: int, params: LifecycleParams, given, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        fresh = copy.deepcopy(records)
        saved, ref.copy = ref.copy, _CopyMadeBeforeTheClock
        try:
            times.append(_timed(lambda: ref.reference_daily_batch(fresh, today, params, given))[1])
        finally:
            ref.copy = saved
    return median(times)


def _ms(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values) * 1000
    return {"p50": round(float(np.percentile(arr, 50)), 2), "p95": round(float(np.percentile(arr, 95)), 2),
            "max": round(float(arr.max()), 2)}


def _same_state(columns: MemoryColumns, relations: Relations, records: list[dict]) -> list[str]:
    """Fields (and 'relations') where the vectorised state differs from the reference's records."""
    expected, expected_relations, _ = ref.from_records(records)
    wrong = [name for name in FIELDS if not np.array_equal(
        getattr(columns, name), getattr(expected, name), equal_nan=getattr(columns, name).dtype.kind == "f")]
    if _edges(relations) != _edges(expected_relations):
        wrong.append("relations")
    return wrong


def _edges(relations: Relations) -> set[tuple[int, int, int]]:
    return set(zip(relations.src.tolist(), relations.dst.tolist(), relations.kind.tolist()))


# --- the batch at scale ------------------------------------------------------------------------------
def link_per_user(population: Population, outcome, params: LifecycleParams, tick=None) -> tuple[Relations, list[float]]:
    """Step 7 one user at a time: that user's new and re-embedded memories × all their active memories."""
    parts, seconds = [], []
    for rows in user_rows(outcome.columns.group, population.users):
        columns, relations, vectors = user_slice(population, outcome.columns, outcome.relations, rows)
        (links, _), took = _timed(lambda: auto_link(vectors, outcome.link_candidates[rows], columns, relations, params))
        parts.append(Relations(rows[links.src], rows[links.dst], links.kind))
        seconds.append(took)
        if tick:
            tick()
    return (Relations.of(*(np.concatenate(x) for x in zip(*[(p.src, p.dst, p.kind) for p in parts])))
            if parts else Relations.empty()), seconds


def batch_day(store: MemoryTableRoundTrip, population: Population, ids: np.ndarray, params: LifecycleParams,
              repeats: int = 1, tick=None):
    """One maintenance run over every memory: load → core → auto-link per user → write, through the product's
    table. Returns the figures, the batch's input (columns, relations, seqs) and its outcome with the
    auto-links (``relations_after``)."""
    (columns, relations, loaded_ids, seqs, relation_rows), load_s = _timed(store.load)
    moved = _same_state_columns(columns, population.columns)
    if not np.array_equal(loaded_ids, ids):
        moved.append("memory ids or their order")
    if _edges(relations) != _edges(population.relations):
        moved.append("relations")
    if moved:  # the table must give back exactly the state the bench made (a report says so by existing)
        raise AssertionError(f"the DuckDB round trip changed {moved}")
    population.relations = relations
    now = BATCH_EPOCH + population.today * DAY_SECONDS
    # the core alone, median of ``repeats`` runs on the same input (it is pure: same outcome every run)
    outcome, first_run = _timed(lambda: daily_batch(columns, relations, population.today, params))
    core_runs = [first_run] + [_timed(lambda: daily_batch(columns, relations, population.today, params))[1]
                               for _ in range(repeats - 1)]
    core_s = median(core_runs)
    (links, per_user), link_s = _timed(lambda: link_per_user(population, outcome, params, tick))
    after_relations = outcome.relations.concat(links)
    written, write_s = _timed(lambda: store.write_day(population.today, loaded_ids, seqs, outcome, after_relations,
                                                      relation_rows, now))
    n = len(columns)
    changed = (outcome.level_before != outcome.level_after) | outcome.deleted
    figures = {
        "day": population.today, "memories": n, "load_s": round(load_s, 3), "core_s": round(core_s, 4),
        "core_runs_s": [round(x, 4) for x in core_runs],
        "autolink_s": round(link_s, 3), "autolink_per_user_ms": _ms(per_user), "write_s": round(write_s, 3),
        "total_s": round(load_s + core_s + link_s + write_s, 3),
        "core_memories_per_s": round(n / core_s), "core_and_autolink_memories_per_s": round(n / (core_s + link_s)),
        "level_changes": int(changed.sum()), "level_changes_share": round(float(changed.mean()), 5),
        "transitions": level_transitions(outcome.level_before, outcome.level_after, outcome.deleted).tolist(),
        "levels_after": {str(lv): int((outcome.level_after == lv).sum()) for lv in (1, 2, 3, 4)},
        "reinforced": int(outcome.reinforced.sum()), "revived": int(outcome.revived.sum()),
        "revival_refused": int(outcome.revival_refused.sum()), "link_candidates": int(outcome.link_candidates.sum()),
        "links_added": len(links), "relations_after": len(after_relations), "rows_written": written,
        "deleted": int(outcome.deleted.sum()),
    }
    return figures, (columns, relations, seqs), outcome, after_relations


def after_day(population: Population, outcome, relations: Relations, ids: np.ndarray, keys: np.ndarray):
    """The state the next day starts from: deleted memories gone from the columns, relations, vectors and ids."""
    keep = ~outcome.deleted
    columns, relations = drop_rows(outcome.columns, relations, keep)
    population.embeddings = population.embeddings[keep]
    return columns, relations, ids[keep], keys[keep]


def _same_state_columns(got: MemoryColumns, want: MemoryColumns) -> list[str]:
    return [name for name in FIELDS if not np.array_equal(
        getattr(got, name), getattr(want, name), equal_nan=getattr(got, name).dtype.kind == "f")]


def at_scale(args, params: LifecycleParams, root: Path, progress) -> tuple[dict[str, Any], Population]:
    users, per_user = args.users, args.memories_per_user
    task = progress.add_task("generate memories", total=users)
    population = imported_population(users, per_user, args.seed, params, args.history_days,
                                     progress=lambda: progress.advance(task))
    out: dict[str, Any] = {"population": describe(population), "rss_after_generation_mb": round(peak_rss_mb(), 1)}
    keys = np.arange(len(population.columns), dtype=np.int64)
    ids = memory_ids(keys)
    store = MemoryTableRoundTrip(root / "lifecycle.duckdb", users)
    task = progress.add_task("import (put_new)", total=1)
    _, initial_write_s = _timed(lambda: (store.insert(population.columns, ids),
                                         store.import_relations(population.relations, population.columns, ids)))
    progress.advance(task)
    out["initial_write_s"] = round(initial_write_s, 3)

    task = progress.add_task("first full batch (auto-link per user)", total=users)
    first, (before, before_relations, _), outcome, linked = batch_day(
        store, population, ids, params, args.repeats, lambda: progress.advance(task))
    first["batch_peak_alloc_mb"] = _traced_peak_mb(lambda: daily_batch(before, before_relations, population.today, params))
    columns, relations, ids, keys = after_day(population, outcome, linked, ids, keys)
    out["first"] = first
    out["rss_after_first_batch_mb"] = round(peak_rss_mb(), 1)

    out["days"] = []
    for day in range(args.days):
        population, fresh = next_day(population, columns, relations, args.seed + 1000 + day, params)
        old = len(columns)
        new_keys = np.arange(keys.max(initial=-1) + 1, keys.max(initial=-1) + 1 + fresh, dtype=np.int64)
        new_ids = memory_ids(new_keys)
        now = population.columns.take(np.arange(old))
        recalled = now.recalled & ~columns.recalled
        asked = now.revival_requested & ~columns.revival_requested
        _, insert_s = _timed(lambda: (store.insert(population.columns.take(np.arange(old, len(population.columns))),
                                                   new_ids),
                                      store.flag(now, ids, recalled, asked)))
        keys, ids = np.concatenate([keys, new_keys]), np.concatenate([ids, new_ids])
        order = by_user(population, keys)
        keys, ids = keys[order], ids[order]
        task = progress.add_task(f"typical day {day + 1} (auto-link per user)", total=users)
        figures, (before, before_relations, _), outcome, linked = batch_day(
            store, population, ids, params, args.repeats, lambda: progress.advance(task))
        figures.update(new_memories=fresh, flagged=int(recalled.sum() + asked.sum()),
                       between_batches_write_s=round(insert_s, 3))
        if day == 0:
            figures["batch_peak_alloc_mb"] = _traced_peak_mb(
                lambda: daily_batch(before, before_relations, population.today, params))
            figures["autolink_one_call_s"] = _one_call_autolink(population, outcome, params, progress)
        columns, relations, ids, keys = after_day(population, outcome, linked, ids, keys)
        out["days"].append(figures)
    population.columns, population.relations = columns, relations
    out["rss_after_days_mb"] = round(peak_rss_mb(), 1)
    out["lifecycle_file_bytes_per_memory"] = round(store.close() / len(columns), 1)
    return out, population


def _one_call_autolink(population: Population, outcome, params: LifecycleParams, progress) -> float:
    """Step 7 for every user in one ``auto_link`` call over the whole embedding matrix, as
    ``daily_batch(embeddings=…)`` runs it (reported beside the per-user runs)."""
    task = progress.add_task("auto-link, all users in one call", total=1)
    _, took = _timed(lambda: auto_link(population.embeddings, outcome.link_candidates, outcome.columns,
                                       outcome.relations, params))
    progress.advance(task)
    return round(took, 3)


def describe(population: Population) -> dict[str, Any]:
    c = population.columns
    return {
        "memories": len(c), "users": population.users, "dim": int(population.embeddings.shape[1]),
        "category_share": {name: round(float((c.category == i).mean()), 3)
                           for i, name in enumerate(("casual", "work", "decision", "emotional"))},
        "intensity_mean": round(float(c.intensity.mean()), 1),
        "intensity_above_80_share": round(float((c.intensity > 80).mean()), 3),
        "age_days_max": round(float((BATCH_EPOCH - c.created).max() / DAY_SECONDS), 1),
        "memory_days_mean": round(float(c.memory_days.mean()), 1), "recall_count_mean": round(float(c.recall_count.mean()), 2),
        "recalled_flags": int(c.recalled.sum()), "protected": int(c.protected.sum()), "relations": len(population.relations),
    }


# --- the notes' loop beside the core -----------------------------------------------------------------
def reference_side_by_side(args, params: LifecycleParams, progress) -> dict[str, Any]:
    """One user's memories: the first batch and a typical day, each without and with auto-link, timed both
    ways (median of ``repeats``) and compared to the bit."""
    task = progress.add_task(f"reference, 1 user × {args.reference_memories:,}", total=4)
    population = imported_population(1, args.reference_memories, args.seed + 1, params, args.history_days)
    ids = [f"m{i}" for i in range(len(population.columns))]
    out: dict[str, Any] = {"users": 1, "memories_per_user": args.reference_memories, "batches": []}
    for phase in ("first", "typical day"):
        c, r, today = population.columns, population.relations, population.today
        records = ref.to_records(c, r, ids)
        vectors = dict(zip(ids, population.embeddings))
        for mode, embeddings in (("steps 1–6, 8", None), ("with auto-link", population.embeddings)):
            given = None if embeddings is None else vectors
            vec_s = _median_time(lambda: daily_batch(c, r, today, params, embeddings=embeddings), args.repeats)
            ref_s = _median_time(lambda: ref.reference_daily_batch(records, today, params, given), args.repeats)
            loop_s = _reference_loop_time(records, today, params, given, args.repeats)
            exact = daily_batch(c, r, today, params, embeddings=embeddings, dtype=np.float64)
            product = daily_batch(c, r, today, params, embeddings=embeddings)
            kept, deleted = ref.reference_daily_batch(records, today, params, given)
            keep = ~exact.deleted
            after, after_relations = drop_rows(exact.columns, exact.relations, keep)
            wrong = _same_state(after, after_relations, kept)
            if [ids[i] for i in np.flatnonzero(exact.deleted)] != deleted:
                wrong.append("deleted")
            _, ref_relations, _ = ref.from_records(kept)
            n = len(c)
            out["batches"].append({
                "batch": phase, "steps": mode, "memories": n, "vectorised_s": round(vec_s, 5),
                "reference_s": round(ref_s, 5), "reference_loop_s": round(loop_s, 5),
                "vectorised_memories_per_s": round(n / vec_s), "reference_memories_per_s": round(n / ref_s),
                "reference_loop_memories_per_s": round(n / loop_s),
                "speedup": round(ref_s / vec_s, 1), "speedup_vs_loop": round(loop_s / vec_s, 1),
                "level_changes": int((exact.level_before != exact.level_after).sum()),
                "links_added": len(exact.links_added), "agree": not wrong, "differs": wrong,
                "float32_links_differ": len(_edges(drop_rows(product.columns, product.relations, keep)[1])
                                            ^ _edges(ref_relations)),
            })
            progress.advance(task)
        # the next day starts from the full batch (with auto-link), as the reference left it
        population.embeddings = population.embeddings[keep]
        ids = [i for i, k in zip(ids, keep) if k]
        population, fresh = next_day(population, after, after_relations, args.seed + 1, params)
        ids += [f"m{today}-{j}" for j in range(fresh)]
    return out


# --- disk --------------------------------------------------------------------------------------------
def bytes_per_level(args, population: Population, root: Path, progress) -> dict[str, Any]:
    task = progress.add_task("on-disk bytes per level", total=5)
    rng = np.random.default_rng(args.seed + 2)
    rows = np.sort(rng.choice(len(population.columns), size=min(args.level_rows, len(population.columns)), replace=False))
    sample = population.columns.take(rows)
    out: dict[str, Any] = {}
    for level in (1, 2, 3, 4):
        out[f"level{level}"] = level_file_bytes(root / f"level{level}.duckdb", sample, level, rng)
        progress.advance(task)
    out["vectors"] = vector_file_bytes(root / "vectors.duckdb", population.embeddings[rows])
    progress.advance(task)
    return out


# --- report ------------------------------------------------------------------------------------------
def verdicts(report: dict[str, Any]) -> dict[str, Any]:
    """Targets: the typical day within 2 minutes; the core's memories/s at scale ≥ 20× the reference's on its
    subset, batch for batch (first vs first, worst typical day vs typical day; steps 1–6 and 8, where the notes'
    loop is per memory — their auto-link is already a matrix product)."""
    scale, reference = report["scale"], report["reference"]
    typical = scale["days"]
    worst_total = max(d["total_s"] for d in typical)
    at_scale = {"first": scale["first"]["core_memories_per_s"],
                "typical day": min(d["core_memories_per_s"] for d in typical)}
    ratios = {}
    for b in reference["batches"]:
        if b["steps"] == "steps 1–6, 8":
            ratios[b["batch"]] = {
                "vs_reference": round(at_scale[b["batch"]] / b["reference_memories_per_s"], 1),
                "vs_reference_loop": round(at_scale[b["batch"]] / b["reference_loop_memories_per_s"], 1),
            }
    return {
        "daily_batch_seconds_worst": worst_total, "daily_batch_target_s": TARGET_DAILY_SECONDS,
        "daily_batch_met": worst_total <= TARGET_DAILY_SECONDS,
        "speedup_at_scale": ratios, "speedup_target": TARGET_SPEEDUP,
        "speedup_met_vs_reference": min(r["vs_reference"] for r in ratios.values()) >= TARGET_SPEEDUP,
        "speedup_met_vs_reference_loop": min(r["vs_reference_loop"] for r in ratios.values()) >= TARGET_SPEEDUP,
        "level_changes_share_max": max(d["level_changes_share"] for d in typical),
        "reference_agrees": all(b["agree"] for b in reference["batches"]),
    }


def render(report: dict[str, Any]) -> str:
    s, r, v, disk = report["scale"], report["reference"], report["verdicts"], report["bytes_per_memory"]
    pop = s["population"]
    lines = [
        f"`{report['command']}` — {report['machine']} — {report['date']} — numpy {report['numpy']}, duckdb {report['duckdb']}",
        "",
        f"{pop['memories']:,} memories ({pop['users']} users × {report['config']['memories_per_user']:,}), ages up to "
        f"{pop['age_days_max']:.0f} days, categories {pop['category_share']}, intensity mean {pop['intensity_mean']} "
        f"({pop['intensity_above_80_share']:.1%} above 80), {pop['recalled_flags']:,} recalled flags, "
        f"{pop['protected']:,} protected, {pop['relations']:,} relations, {pop['dim']}-d embeddings. "
        "Model time excluded (no text compression, no re-embedding). Store: the product's lifecycle table "
        "(`lumina_memory.stores.memories_duckdb.MemoryTable`): load = `load` + `relation_rows` + ids to rows; write = `write_day` "
        "with every row's batch columns and the relation set, as `run_day` calls them.",
        "",
        f"| batch | memories | new | level changes | load s | core s (median of {report['config']['repeats']}) "
        "| auto-link s (per user p50/p95/max ms) | write s "
        "| total s | core memories/s | core + auto-link memories/s | batch's peak alloc MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, d in [("first full batch", s["first"])] + [(f"typical day {i + 1}", d) for i, d in enumerate(s["days"])]:
        per = d["autolink_per_user_ms"]
        lines.append(
            f"| {label} | {d['memories']:,} | {d.get('new_memories', '—')} | {d['level_changes']:,} "
            f"({d['level_changes_share']:.2%}) | {d['load_s']} | {d['core_s']} | {d['autolink_s']} "
            f"({per['p50']}/{per['p95']}/{per['max']}) | {d['write_s']} | **{d['total_s']}** | "
            f"{d['core_memories_per_s']:,} | {d['core_and_autolink_memories_per_s']:,} | {d.get('batch_peak_alloc_mb', '—')} |")
    day1 = s["days"][0]
    lines += [
        "",
        f"- Typical daily batch over {day1['memories']:,} memories: worst {v['daily_batch_seconds_worst']} s "
        f"(target ≤ {v['daily_batch_target_s']:.0f} s: {'met' if v['daily_batch_met'] else 'NOT met'}); at most "
        f"{v['level_changes_share_max']:.2%} of memories changed level in a typical day.",
        f"- Auto-link for all users in one `auto_link` call (as `daily_batch(embeddings=…)` runs it), typical day 1: "
        f"{day1['autolink_one_call_s']} s, against {day1['autolink_s']} s one user at a time.",
        f"- Levels after the first batch {s['first']['levels_after']}, after the last day {s['days'][-1]['levels_after']}; "
        f"first batch: {s['first']['links_added']:,} same_topic links from {s['first']['link_candidates']:,} candidates.",
        f"- Peak RSS (getrusage ru_maxrss, whole process, monotone): {s['rss_after_generation_mb']} MB after "
        f"generating, {s['rss_after_first_batch_mb']} MB after the first batch, {report['peak_rss_mb']} MB at the end. "
        "Batch's peak alloc: tracemalloc peak of a separate run of `daily_batch` (steps 1–6, 8) on the same input.",
        f"- The product table's file: {s['lifecycle_file_bytes_per_memory']} bytes per memory (lifecycle columns, ids, "
        f"emotion, relations, outbox; no text: none was compressed). Outside the batches: writing the imported "
        f"memories (`put_new`) took {s['initial_write_s']:.1f} s; a day's new memories (`put_new`) and recall flags "
        f"(`mark_recalled`) {', '.join(str(d['between_batches_write_s']) for d in s['days'])} s.",
        "",
        f"Reference (`lumina_memory.nodes.lifecycle.reference`, the notes' loop over dicts) on 1 user × {r['memories_per_user']:,}, "
        "same process, median of "
        f"{report['config']['repeats']}:",
        "",
        "| batch | steps | memories | vectorised s | reference s (loop alone) | speedup (vs loop alone) "
        "| memories/s: vectorised / reference (loop alone) | agree to the bit | float32 links differing |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for b in r["batches"]:
        lines.append(
            f"| {b['batch']} | {b['steps']} | {b['memories']:,} | {b['vectorised_s']} | {b['reference_s']} "
            f"({b['reference_loop_s']}) | {b['speedup']}× ({b['speedup_vs_loop']}×) | "
            f"{b['vectorised_memories_per_s']:,} / {b['reference_memories_per_s']:,} ({b['reference_loop_memories_per_s']:,}) "
            f"| {'yes' if b['agree'] else 'NO: ' + ', '.join(b['differs'])} | {b['float32_links_differ']} |")
    ratios = "; ".join(f"{batch}: {x['vs_reference']}× ({x['vs_reference_loop']}× vs the loop alone)"
                       for batch, x in v["speedup_at_scale"].items())
    lines += [
        "",
        "- What is timed, each side: the core is `daily_batch(columns, relations, today, params)` (steps 1–6, 8) on "
        "numpy columns already loaded, including its copy of the columns it writes (it never writes its input); "
        "the reference is `reference_daily_batch(records, today, params)` on dicts already built, including its "
        "deep copy of the input (it never writes its input either). \"Loop alone\": the reference without that "
        "copy (made before the clock), the core still paying its own. No store, no conversion on either side.",
        f"- At scale, the core's memories/s over {s['first']['memories']:,} memories ({s['population']['users']} users) "
        f"against the reference's on its subset (1 user: its best case, as it scans every memory once per user; "
        f"steps 1–6, 8; typical day: the worst day): {ratios}. Target ≥ {v['speedup_target']:.0f}×: "
        f"{'met' if v['speedup_met_vs_reference'] else 'NOT met'} against the reference as written, "
        f"{'met' if v['speedup_met_vs_reference_loop'] else 'NOT met'} against its loop alone.",
        "",
        "On disk (DuckDB, one file per level, every per-memory field; file size / rows):",
        "",
        "| level | rows | text chars (mean) | bytes per memory |",
        "|---|---|---|---|",
    ]
    for level in (1, 2, 3, 4):
        d = disk[f"level{level}"]
        lines.append(f"| {level} | {d['rows']:,} | {d['text_chars_mean']} | {d['bytes_per_memory']} |")
    vec = disk["vectors"]
    lines.append(f"| vector ({pop['dim']}-d float32) | {vec['rows']:,} | — | {vec['raw_bytes_per_memory']} raw; "
                 f"{vec['fixed_bytes_per_memory']} as FLOAT[{pop['dim']}], {vec['list_bytes_per_memory']} as FLOAT[] |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import duckdb
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    parser = argparse.ArgumentParser(prog="python -m bench.lifecycle", description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--memories-per-user", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=3, help="typical daily batches after the first full batch")
    parser.add_argument("--history-days", type=float, default=365.0, help="ages spread over this many days")
    parser.add_argument("--reference-memories", type=int, default=10_000, help="one user's memories for the reference")
    parser.add_argument("--level-rows", type=int, default=100_000, help="memories per level file (disk bytes)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="the core at scale and both sides on the reference subset: median of this many runs")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--quick", action="store_true", help=f"smoke test: {QUICK}")
    parser.add_argument("--data-dir", default="", help="keep the DuckDB files here (default: a temp dir, removed)")
    parser.add_argument("--out", default=None, help="JSON report (default bench/results/lifecycle[_quick].json)")
    parser.add_argument("--md", default=None, help="markdown report (default next to --out, .md)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.quick:
        for name, value in QUICK.items():
            setattr(args, name, value)
    out = Path(args.out or f"bench/results/lifecycle{'_quick' if args.quick else ''}.json")
    md = Path(args.md) if args.md else out.with_suffix(".md")
    params = LifecycleParams()
    console = Console(stderr=True)
    tmp = tempfile.TemporaryDirectory(prefix="lumina-lifecycle-") if not args.data_dir else None
    root = Path(args.data_dir or tmp.name)
    root.mkdir(parents=True, exist_ok=True)
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, disable=args.quiet)
    try:
        with progress:
            scale, population = at_scale(args, params, root, progress)
            reference = reference_side_by_side(args, params, progress)
            disk = bytes_per_level(args, population, root, progress)
    finally:
        if tmp is not None:
            tmp.cleanup()
    report: dict[str, Any] = {
        "command": " ".join(["python -m bench.lifecycle", *(sys.argv[1:] if argv is None else argv)]),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "numpy": np.__version__, "duckdb": duckdb.__version__,
        "config": {k: getattr(args, k) for k in ("users", "memories_per_user", "days", "history_days",
                                                  "reference_memories", "level_rows", "repeats", "seed", "quick")},
        "scale": scale, "reference": reference, "bytes_per_memory": disk, "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    report["verdicts"] = verdicts(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md.write_text(render(report) + "\n", encoding="utf-8")
    print(render(report))
    return 0 if report["verdicts"]["reference_agrees"] else 1


if __name__ == "__main__":
    sys.exit(main())
