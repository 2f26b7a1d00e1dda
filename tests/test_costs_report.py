"""Issue 49: `lumina-memory report` and `stats` summarise the cost records; the figures are computed here from the
records themselves."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from lumina_memory.nodes.costs_summary import spread, summarize
from lumina_memory.nodes.retrieval.recall import recall

from .conftest import Memory

TS = 1_790_000_000


def _expected(values: list[float]) -> dict[str, float]:
    array = np.asarray(values, dtype=float)
    return {"n": len(values), "p50": round(float(np.percentile(array, 50)), 3),
            "p95": round(float(np.percentile(array, 95)), 3), "mean": round(float(array.mean()), 3)}


def test_spread_and_summary_of_hand_made_records():
    records = [
        {"op": "recall", "path": "offline", "ms": ms, "stages": {"rank": ms / 2, "pack": 1.0}, "error": "",
         "calls": 0, "input_tokens": 0, "output_tokens": 0, "models": {}} for ms in (4.0, 8.0, 6.0, 30.0)
    ] + [{"op": "reply", "path": "llm", "ms": 50.0, "stages": {"respond": 50.0}, "error": "respond: RuntimeError",
          "calls": 2, "input_tokens": 40, "output_tokens": 10, "models": {"m": {"calls": 2, "input_tokens": 40,
                                                                                "output_tokens": 10}},
          "stage_calls": {"respond": {"calls": 2, "input_tokens": 40, "output_tokens": 10}}},
         {"op": "reply", "path": "llm", "ms": 70.0, "stages": {"respond": 70.0}, "error": "", "calls": 1,
          "input_tokens": 20, "output_tokens": 5, "models": {"m": {"calls": 1, "input_tokens": 20, "output_tokens": 5}},
          "stage_calls": {"respond": {"calls": 1, "input_tokens": 20, "output_tokens": 5}}}]
    summary = summarize(records)
    assert list(summary) == ["recall", "reply"]
    assert summary["recall"]["ms"] == _expected([4.0, 8.0, 6.0, 30.0])
    assert summary["recall"]["stages"]["rank"] == _expected([2.0, 4.0, 3.0, 15.0])
    reply = summary["reply"]
    assert (reply["count"], reply["calls"], reply["calls_per_op"], reply["input_tokens_per_op"]) == (2, 3, 1.5, 30.0)
    assert reply["errors"] == {"respond: RuntimeError": 1} and reply["paths"] == {"llm": 2}
    assert reply["models"] == {"m": {"calls": 3, "input_tokens": 60, "output_tokens": 15}}
    assert reply["stage_calls"] == {"respond": {"calls_per_op": 1.5, "input_tokens_per_op": 30.0,
                                                "output_tokens_per_op": 7.5}}
    assert summary["recall"]["stage_calls"] == {}
    assert spread([]) == {"n": 0, "p50": 0.0, "p95": 0.0, "mean": 0.0}


@pytest.fixture
def seeded(cli_factory):
    """The CLI's data dir after two turns, a flush and two recalls, plus one record three days old; its records."""
    cli = cli_factory(in_process=True)
    mem = Memory(cli.data_dir)
    try:
        config = {"configurable": {"thread_id": "r"}}
        for i, text in enumerate(["週末は鎌倉で海を見た", "しらす丼がおいしかった"]):
            mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": TS + i}}, config,
                             context={"user_id": "joy", "respond": False})
        mem.graph.invoke({"flush": True}, config, context={"user_id": "joy", "respond": False})
        recall(mem.services, "joy", "鎌倉で何を食べた？")
        recall(mem.services, "joy", "海はどうだった？")
        table = mem.services.stores.archive.op_costs()
        table.add({"ts": time.time() - 3 * 86_400, "op": "recall", "path": "offline", "ms": 999.0,
                   "stages": {"rank": 999.0}, "error": "", "calls": 0, "input_tokens": 0, "output_tokens": 0,
                   "models": {}})
        records = table.since(0)
    finally:
        mem.close()
    return cli, records


@pytest.mark.slow  # the CLI opens the memory three times
def test_report_json_summarises_the_kept_records(seeded):
    cli, records = seeded
    report = json.loads(cli("report", "--json").stdout)
    assert report["operations"] == len(records) and report["since_days"] == 14 and report["recording"] is True
    assert list(report["by_op"]) == ["write", "flush", "recall"]
    recalls = [r for r in records if r["op"] == "recall"]
    got = report["by_op"]["recall"]
    assert got["count"] == len(recalls) == 3 and got["paths"] == {"offline": 3}
    assert got["ms"] == _expected([r["ms"] for r in recalls])
    assert got["stages"]["rank"] == _expected([r["stages"]["rank"] for r in recalls])
    assert got["calls_per_op"] == 0 and got["input_tokens"] == 0
    flushes = [r for r in records if r["op"] == "flush"]
    assert report["by_op"]["flush"]["stages"]["upsert_long_term"] == _expected(
        [r["stages"]["upsert_long_term"] for r in flushes])
    recent = json.loads(cli("report", "--since", "1", "--json").stdout)  # the old record left out
    assert recent["by_op"]["recall"]["count"] == 2 and recent["operations"] == len(records) - 1


@pytest.mark.slow  # the CLI opens the memory three times
def test_report_table_and_stats_lines_name_each_operation(seeded):
    cli, _records = seeded
    table = cli("report").stdout
    for word in ("write", "flush", "recall", "ingest_turn", "upsert_long_term", "rank", "p95 ms", "offline 3"):
        assert word in table
    stats = cli("stats").stdout
    assert "costs, last 14 days" in stats and "  recall: 3 ops" in stats and "0 model calls/op" in stats
    refused = cli("report", "--since", "soon", check=False)
    assert refused.returncode == 2 and "--since takes a number of days" in refused.stderr


def test_the_table_keeps_every_figure_whole_in_an_80_column_terminal(monkeypatch, capsys):
    """A narrow terminal shortens the stage names, never a figure ('298…' for 298.4 ms says nothing)."""
    from rich.console import Console

    from lumina_memory.graphs import cli_report

    records = [{"op": "flush", "path": "offline", "ms": ms, "error": "", "calls": 0, "input_tokens": 0,
                "output_tokens": 0, "models": {}, "stages": {"archive_to_duckdb.learn_and_a_long_stage_name": ms / 2}}
               for ms in (298.4, 602.7, 1234.5)]
    summary = {"since_days": 14.0, "operations": 3, "recording": True, "by_op": summarize(records)}
    monkeypatch.setattr(cli_report, "console", Console(width=80, emoji=False, soft_wrap=True, force_terminal=False))
    cli_report.print_report(summary)
    shown = capsys.readouterr().out
    flush = summary["by_op"]["flush"]
    for figure in (flush["ms"]["p50"], flush["ms"]["p95"], flush["ms"]["mean"],
                   flush["stages"]["archive_to_duckdb.learn_and_a_long_stage_name"]["p95"]):
        assert f"{figure:.1f}" in shown
    assert all(len(line) <= 80 for line in shown.splitlines())
