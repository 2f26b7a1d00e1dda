"""``python -m bench.locomo --lifecycle`` on the project's mini LoCoMo file (tests/data/mini_locomo.json): the
daily batch runs along each conversation's clock, and the report's figures agree with each other and with the
stores' own rules (every day batched once, levels summing to the memories, nothing archived primed)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import locomo
from bench.common import bench_settings
from bench.locomo_data import CATEGORY_NAMES, load
from lumina_memory.nodes.lifecycle.clock import batch_day

MINI = Path(__file__).parent / "data" / "mini_locomo.json"
LIFECYCLE = re.compile(r"^LIFECYCLE recall=(?P<recall>\d+\.\d+) delta=(?P<delta>[+-]\d+\.\d+) "
                       r"within_1_point=(?P<within>True|False) archived_primed=(?P<archived>\d+)$")
DAY = 86_400.0


def _run(tmp_path: Path, *extra: str) -> tuple[str, dict]:
    out = tmp_path / "report.json"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = locomo.main(["--data", str(MINI), "--no-ablation", "--no-mem0", "--quiet", "--lifecycle",
                            "--json", str(out), *extra])
    assert code == 0
    return buffer.getvalue(), json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("lifecycle"), "--budget", "150,400")


def _days_spanned(sample_id: str, days_after: float) -> int:
    """Batch days from the end of the first session (the user's first batch) to the last batch, inclusive."""
    params = bench_settings(Path("/nonexistent")).lifecycle
    conv = next(c for c in load(MINI) if c.sample_id == sample_id)
    first_session = [t for t in conv.turns if t.session == conv.turns[0].session]

    def day(ts: float) -> int:
        return batch_day(datetime.fromtimestamp(ts, UTC), params.schedule_hour, params.timezone)

    return day(conv.turns[-1].ts + days_after * DAY) - day(first_session[-1].ts) + 1


def test_deliberate_recall_is_reported_and_compared(harness):
    stdout, report = harness
    life = report["lifecycle"]
    for budget in ("150", "400"):
        without, with_ = report["results"]["lumina"][budget], life["results"][budget]
        assert with_["n"] == without["n"] == report["questions"]
        cmp_ = life["comparison"]["budgets"][budget]
        assert cmp_["recall_delta"] == pytest.approx(with_["recall"] - without["recall"], abs=1e-4)
        assert cmp_["hit_delta"] == pytest.approx(with_["hit"] - without["hit"], abs=1e-4)
        assert cmp_["within_tolerance"] == (cmp_["recall_delta"] >= -0.01 - 1e-9)
        assert set(with_["by_category"]) == set(without["by_category"]) == {CATEGORY_NAMES[c] for c in (1, 2, 3, 4)}
        for name, delta in cmp_["by_category"].items():
            assert delta == pytest.approx(with_["by_category"][name]["recall"] - without["by_category"][name]["recall"], abs=1e-4)
        assert with_["context_tokens_mean"] <= int(budget)
    # Forgetting changes what is remembered, not what is recorded: on this file nothing is lost.
    assert life["comparison"]["budgets"]["400"]["within_tolerance"]
    # Deliberate recall reached archived memories (their turns come from the record).
    reached = life["reached"]
    assert reached["archived"] == reached["level 4"] > 0
    assert sum(reached[f"level {x}"] for x in (1, 2, 3, 4)) == reached["items"]
    lines = stdout.strip().splitlines()
    assert lines[-1].startswith("RESULT ")  # still the last line
    match = LIFECYCLE.match(lines[-2])
    assert match, lines[-2]
    assert float(match["recall"]) == pytest.approx(life["results"]["150"]["recall"], abs=1e-4)
    assert float(match["delta"]) == pytest.approx(life["comparison"]["budgets"]["150"]["recall_delta"], abs=1e-4)
    assert "## forgetting lifecycle" in stdout and "issue 17 check" in stdout


def test_batch_follows_each_conversations_clock(harness):
    _stdout, report = harness
    for sample_id, conv in report["lifecycle"]["conversations"].items():
        batch = conv["batch"]
        # Catch-up is one day at a time, each batch day exactly once, from the first session to the end.
        assert batch["days"] == _days_spanned(sample_id, 0.0), sample_id
        assert batch["calls"] == 2 * 4 + 1  # before and after each of the 4 sessions, and at the end
        moves = batch["transitions"]
        # Every memory-day is counted once: the days the batch ran times the memories it held that day.
        assert sum(map(sum, moves)) > batch["days"]
        # Re-embedded from its new text: every memory that left level 1, or reached level 3 or the archive
        # from level 2 (an archived memory keeps level 3's keywords, nodes.lifecycle.formulas.compression_work).
        assert batch["reembedded"] == sum(moves[0][1:4]) + sum(moves[1][2:4]) > 0


def test_levels_sum_to_the_memories(harness):
    _stdout, report = harness
    life = report["lifecycle"]
    for sample_id, conv in life["conversations"].items():
        levels = conv["levels"]
        assert sum(levels["levels"].values()) == levels["memories"] == levels["segments"] > 0, sample_id
        assert 0 <= levels["protected"] <= levels["memories"]
        # Months of the notes' decay leave memories at several levels, some in the archive.
        assert levels["levels"]["4"] > 0 and levels["levels"]["1"] > 0
    totals = life["totals"]
    assert totals["memories"] == sum(c["levels"]["memories"] for c in life["conversations"].values())
    assert sum(totals["levels"].values()) == totals["memories"]
    assert totals["segments"] == totals["segments_without"]  # flushing each session cuts the same segments


def test_archived_memories_are_never_primed(harness):
    _stdout, report = harness
    priming = report["lifecycle"]["priming"]
    with_, without = priming["with"], priming["without"]
    assert with_["queries"] == without["queries"] == report["questions"] + len(report["conversations"])
    for run in (with_, without):
        assert run["archived_flagged"] == run["archived_in_table"] == run["levels"]["4"] == 0
        assert sum(run["levels"].values()) == run["memory_items"]
        assert run["memory_items"] + sum(run["learned_items"].values()) == run["items_total"]
        assert run["items_mean"] == pytest.approx(run["items_total"] / run["queries"], abs=0.01)
    # Faded memories are primed as they stand at their level; without the lifecycle everything is level 1.
    assert with_["levels"]["2"] + with_["levels"]["3"] > 0
    assert without["levels"]["1"] == without["memory_items"]
    assert with_["memory_items"] <= without["memory_items"]


def test_days_after_and_a_subset_of_conversations(tmp_path, harness):
    _stdout, first = harness
    _out, report = _run(tmp_path, "--budget", "150", "--conversations", "mini-en", "--lifecycle-days-after", "60")
    life = report["lifecycle"]
    assert report["conversations"] == ["mini-en"] and list(life["conversations"]) == ["mini-en"]
    conv = life["conversations"]["mini-en"]
    assert conv["batch"]["days"] == _days_spanned("mini-en", 60.0)
    assert conv["batch"]["days"] == first["lifecycle"]["conversations"]["mini-en"]["batch"]["days"] + 60
    # Two more months: the last session's memories were batched too, and nothing comes back by itself.
    before = first["lifecycle"]["conversations"]["mini-en"]["levels"]["levels"]
    assert conv["levels"]["levels"]["4"] >= before["4"] and conv["levels"]["levels"]["1"] <= before["1"]
    assert life["priming"]["with"]["archived_in_table"] == 0
