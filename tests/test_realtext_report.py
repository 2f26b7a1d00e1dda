"""bench.realtext's report: per-category recall with intervals over conversations, Lumina − plain vectors with a
paired interval, miss classes counted per category, and saved runs merged into one report. Rows are written here
(what the run would record per question), so the aggregation is checked apart from any engine."""

from __future__ import annotations

import argparse
import json

from bench import realtext


def _rows() -> list[dict]:
    rows = []
    for conv, lang in (("c1", "en"), ("c2", "en"), ("c3", "ja")):
        for kind, ours, theirs in (("extraction", 1.0, 0.0), ("knowledge_update", 0.5, 1.0)):
            for system, recall in (("lumina", ours), ("vectors", theirs), ("bm25", 0.0), ("rrf", theirs)):
                rows.append({"system": system, "budget": 1024, "conv": conv, "kind": kind, "language": lang,
                             "recall": recall, "hit": recall == 1.0, "answer": recall})
    return rows


def _misses() -> list[dict]:
    return [{"conv": "c1", "kind": "knowledge_update", "language": "en", "question": "q", "evidence": ["D1:1", "D2:1"],
             "misses": [{"id": "D2:1", "kind": "out"}]},
            {"conv": "c3", "kind": "extraction", "language": "ja", "question": "q2", "evidence": ["D3:2"],
             "misses": [{"id": "D3:2", "kind": "excerpt"}]}]


def _report(rows, misses, turns=10.0):
    args = argparse.Namespace(split="dev", seed=1, per_language=3, size="tiny", diagnose_budget=1024)
    samples = [{"sample_id": c, "qa": [{}] * 2} for c in ("c1", "c2", "c3")]
    totals = {"turns": turns, "words": 100.0, "seconds": 5.0, "embed_alone_seconds": 2.0}
    return realtext.report(args, samples, [1024], rows, misses, totals)


def test_categories_languages_and_the_gain_over_plain_vectors():
    rep = _report(_rows(), _misses())
    at = rep["results"]["lumina"]["1024"]
    assert at["extraction"]["recall"] == 1.0 and at["knowledge_update"]["recall"] == 0.5
    assert at["lang:en"]["n"] == 4 and at["lang:ja"]["n"] == 2
    assert rep["results"]["vectors"]["1024"]["all"]["recall"] == 0.5
    assert realtext.gain_over(rep["rows"], 1024, "extraction").startswith("+100.0")
    assert realtext.gain_over(rep["rows"], 1024, "knowledge_update").startswith("-50.0")
    assert rep["ingest"]["turns_per_s"] == 2.0 and rep["ingest"]["ratio_to_embedder"] == 2.5
    text = realtext.render(rep)
    assert "| extraction | 3 |" in text and "| all | 3 | 0 | 1 | 1 |" in text


def test_misses_are_counted_per_category():
    rep = _report(_rows(), _misses())
    assert rep["misses"]["by_kind"] == {"extraction": {"excerpt": 1}, "knowledge_update": {"out": 1}}
    assert rep["misses"]["evidence_by_kind"] == {"extraction": 1, "knowledge_update": 2}


def test_merge_reads_saved_runs_into_one_report(tmp_path):
    rows, misses = _rows(), _misses()
    en = _report([r for r in rows if r["language"] == "en"], misses[:1])
    ja = _report([r for r in rows if r["language"] == "ja"], misses[1:], turns=30.0)
    paths = []
    for name, rep in (("en", en), ("ja", ja)):
        rep["conversations"] = sorted({r["conv"] for r in rep["rows"]})
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(rep), encoding="utf-8")
        paths.append(str(path))
    merged = realtext.merge(paths)
    whole = _report(rows, misses)
    assert merged["conversations"] == ["c1", "c2", "c3"]
    assert merged["results"] == whole["results"] and merged["misses"] == whole["misses"]
    assert merged["ingest"]["turns"] == 40 and merged["ingest"]["seconds"] == 10.0


def test_an_excerpt_miss_counts_only_where_the_turn_itself_holds_the_answer():
    texts = {"D1:1": "Maya: the cache is Valkey 8.", "D2:1": "Maya: the CI system is Jenkins."}
    misses = [{"id": "D1:1", "kind": "excerpt"}, {"id": "D2:1", "kind": "excerpt"}, {"id": "D2:1", "kind": "out"}]
    kept = realtext.own_excerpts(misses, "Valkey 8", texts)
    assert kept == [{"id": "D1:1", "kind": "excerpt"}, {"id": "D2:1", "kind": "out"}]
