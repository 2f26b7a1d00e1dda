"""bench.lifecycle in --quick mode: the report has every figure the issue asks for, the vectorised batch and the
notes' per-memory reference agree on the quick subset, and the round trip through the product's lifecycle table
(stores.memories_duckdb.MemoryTable) gives back what it was given. No wall-clock assertions: timings are only
checked to exist."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from bench import lifecycle
from bench.lifecycle_data import BATCH_EPOCH, by_user, imported_population, next_day
from bench.lifecycle_store import FIELDS, MemoryTableRoundTrip, memory_ids
from lumina_memory.nodes.lifecycle import LifecycleParams, daily_batch, drop_rows
from lumina_memory.nodes.lifecycle import reference as ref

PARAMS = LifecycleParams()


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "lifecycle.json"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = lifecycle.main(["--quick", "--quiet", "--out", str(out)])
    assert code == 0
    return json.loads(out.read_text(encoding="utf-8")), out.with_suffix(".md").read_text(encoding="utf-8"), stdout.getvalue()


def test_report_has_every_figure(quick):
    report, markdown, stdout = quick
    q = lifecycle.QUICK
    assert report["config"]["quick"] is True
    assert report["config"]["users"] == q["users"] and report["config"]["memories_per_user"] == q["memories_per_user"]
    scale = report["scale"]
    assert scale["population"]["memories"] == q["users"] * q["memories_per_user"]
    assert len(scale["days"]) == q["days"]
    for batch in [scale["first"], *scale["days"]]:
        for key in ("load_s", "core_s", "autolink_s", "write_s", "total_s", "core_memories_per_s",
                    "core_and_autolink_memories_per_s"):
            assert batch[key] > 0, key
        assert len(batch["core_runs_s"]) == q["repeats"] and batch["core_s"] == pytest.approx(
            float(np.median(batch["core_runs_s"])), abs=1e-4)
        assert batch["rows_written"] == batch["memories"]  # run_day writes every row's batch columns
        assert set(batch["autolink_per_user_ms"]) == {"p50", "p95", "max"}
        assert sum(batch["levels_after"].values()) == batch["memories"] - batch["deleted"]
        assert np.asarray(batch["transitions"]).sum() == batch["memories"]
    assert scale["first"]["batch_peak_alloc_mb"] > 0 and scale["days"][0]["batch_peak_alloc_mb"] > 0
    assert scale["days"][0]["autolink_one_call_s"] > 0
    assert report["peak_rss_mb"] >= scale["rss_after_generation_mb"] > 0
    verdicts = report["verdicts"]
    assert set(verdicts["speedup_at_scale"]) == {"first", "typical day"}
    assert isinstance(verdicts["daily_batch_met"], bool) and verdicts["daily_batch_target_s"] == 120
    assert "| first full batch |" in markdown and "| typical day 1 |" in markdown and markdown.strip() in stdout


def test_first_batch_sorts_the_year_and_a_typical_day_moves_few(quick):
    report, _, _ = quick
    first, days = report["scale"]["first"], report["scale"]["days"]
    transitions = np.asarray(first["transitions"])
    assert transitions[1:].sum() == 0  # imported: every memory starts at level 1
    assert first["level_changes"] > first["memories"] // 2  # a year of decay is applied at once
    for day in days:
        assert day["new_memories"] > 0 and day["flagged"] > 0
        assert day["level_changes"] < first["level_changes"] // 4
        assert day["memories"] == day["levels_after"]["1"] + day["levels_after"]["2"] + day["levels_after"]["3"] \
            + day["levels_after"]["4"] + day["deleted"]


def test_disk_figures_per_level(quick):
    report, _, _ = quick
    disk = report["bytes_per_memory"]
    assert disk["level1"]["text_chars_mean"] == 0
    assert 150 <= disk["level2"]["text_chars_mean"] <= 260
    assert 0 < disk["level3"]["text_chars_mean"] < disk["level2"]["text_chars_mean"]
    for level in (1, 2, 3, 4):
        assert disk[f"level{level}"]["rows"] == lifecycle.QUICK["level_rows"]
        assert disk[f"level{level}"]["bytes_per_memory"] > 0
    assert disk["vectors"]["raw_bytes_per_memory"] == 384 * 4
    assert disk["vectors"]["fixed_bytes_per_memory"] > 0 and disk["vectors"]["list_bytes_per_memory"] > 0


def test_reference_and_vectorised_agree_in_the_report(quick):
    report, _, _ = quick
    batches = report["reference"]["batches"]
    assert [(b["batch"], b["steps"]) for b in batches] == [
        ("first", "steps 1–6, 8"), ("first", "with auto-link"),
        ("typical day", "steps 1–6, 8"), ("typical day", "with auto-link")]
    for b in batches:
        assert b["agree"] is True and b["differs"] == [], b
        assert b["vectorised_s"] > 0 and b["reference_s"] > 0 and b["reference_loop_s"] > 0
    assert any(b["links_added"] > 0 for b in batches if b["steps"] == "with auto-link")
    assert report["verdicts"]["reference_agrees"] is True


def test_reference_and_vectorised_agree_on_the_quick_subset():
    """The same comparison made here, outside the bench: the quick subset's first batch and next day, with
    auto-link, to the bit; and the comparison does see a one-bit difference."""
    population = imported_population(1, lifecycle.QUICK["reference_memories"], 5, PARAMS)
    ids = [f"m{i}" for i in range(len(population.columns))]
    moved = links = 0
    for _ in range(2):
        records = ref.to_records(population.columns, population.relations, ids)
        outcome = daily_batch(population.columns, population.relations, population.today, PARAMS,
                              embeddings=population.embeddings, dtype=np.float64)
        kept, deleted = ref.reference_daily_batch(records, population.today, PARAMS, dict(zip(ids, population.embeddings)))
        keep = ~outcome.deleted
        columns, relations = drop_rows(outcome.columns, outcome.relations, keep)
        assert lifecycle._same_state(columns, relations, kept) == []
        assert [ids[i] for i in np.flatnonzero(outcome.deleted)] == deleted
        moved += int((outcome.level_before != outcome.level_after).sum())
        links += len(outcome.links_added)
        nudged = columns.with_(retention=np.nextafter(columns.retention, np.inf))
        assert lifecycle._same_state(nudged, relations, kept) == ["retention"]
        population.embeddings = population.embeddings[keep]
        ids = [i for i, k in zip(ids, keep) if k]
        population, fresh = next_day(population, columns, relations, 9, PARAMS)
        ids += [f"n{population.today}-{j}" for j in range(fresh)]
    assert moved > 0 and links > 0  # the days compared did compress and link


def test_round_trip_through_the_product_table_is_exact(tmp_path):
    """Import, a batch day written back, then a day's new memories and recall flags: each load gives back the
    state written, in the store's order (user, then insertion)."""
    population = imported_population(2, 1000, 3, PARAMS)
    keys = np.arange(len(population.columns), dtype=np.int64)
    ids = memory_ids(keys)
    store = MemoryTableRoundTrip(tmp_path / "lifecycle.duckdb", population.users)
    store.insert(population.columns, ids)
    store.import_relations(population.relations, population.columns, ids)
    columns, relations, got_ids, seqs, rows = store.load()
    assert got_ids.tolist() == ids.tolist() and len(set(seqs.tolist())) == len(seqs)
    assert lifecycle._same_state_columns(columns, population.columns) == []
    assert lifecycle._edges(relations) == lifecycle._edges(population.relations) and len(rows) == len(relations)

    outcome = daily_batch(columns, relations, 0, PARAMS)
    assert store.write_day(0, got_ids, seqs, outcome, outcome.relations, rows, BATCH_EPOCH) == len(columns)
    again, again_relations, _, _, _ = store.load()
    assert lifecycle._same_state_columns(again, outcome.columns) == []
    assert lifecycle._edges(again_relations) == lifecycle._edges(outcome.relations)

    # the next day: new memories (put_new) and flags (mark_recalled), then the rows in the store's order
    population.relations = outcome.relations
    population, fresh = next_day(population, outcome.columns, outcome.relations, 0, PARAMS)
    old = len(outcome.columns)
    flagged = population.columns.take(np.arange(old))
    recalled = flagged.recalled & ~outcome.columns.recalled
    asked = flagged.revival_requested & ~outcome.columns.revival_requested
    assert fresh > 0 and recalled.any() and len(set(flagged.group[asked].tolist())) == 2  # both users ask
    new_keys = np.arange(old, old + fresh, dtype=np.int64)
    store.insert(population.columns.take(np.arange(old, old + fresh)), memory_ids(new_keys))
    store.flag(flagged, ids, recalled, asked)
    order = by_user(population, np.concatenate([keys, new_keys]))
    third, third_relations, third_ids, _, _ = store.load()
    assert third_ids.tolist() == np.concatenate([ids, memory_ids(new_keys)])[order].tolist()
    assert not np.array_equal(order, np.arange(len(order)))  # a day's memories go to their user's rows
    assert lifecycle._same_state_columns(third, population.columns) == []
    assert lifecycle._edges(third_relations) == lifecycle._edges(population.relations)
    assert store.close() > 0
    assert set(FIELDS) >= {"level", "retention", "revival_requested_at"}
