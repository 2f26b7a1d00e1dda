"""Issue 19's harness figures on a set with our own category 6 ("update": a fact changed later, the evidence is
the latest statement): the mini LoCoMo file (tests/data/mini_locomo.json) with an update question added, run at
three budgets through the real graph, stores and baselines."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from bench import locomo
from bench.locomo_data import CATEGORY_NAMES, categories_in, load

MINI = Path(__file__).parent / "data" / "mini_locomo.json"
RESULT = re.compile(r"^RESULT recall=(?P<recall>\d+\.\d+) hit=(?P<hit>\d+\.\d+) baseline_best=(?P<best>\d+\.\d+)$")
BUDGETS = ("150", "100", "400")  # the first is not the largest: RESULT must still take it
# Alice was thinking about the hospital in Westfield (D3:17); later she got the job (D4:10).
UPDATE = {"question": "Where does Alice work now?", "answer": "Westfield Hospital, children's ward",
          "evidence": ["D4:10"], "category": 6}


def _with_update(path: Path) -> Path:
    data = json.loads(MINI.read_text(encoding="utf-8"))
    data[0]["qa"].append(UPDATE)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    root = tmp_path_factory.mktemp("tail")
    data, out = _with_update(root / "update.json"), root / "report.json"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = locomo.main(["--data", str(data), "--budget", ",".join(BUDGETS), "--conversations", "mini-en",
                            "--no-ablation", "--no-mem0", "--quiet", "--json", str(out)])
    assert code == 0
    return data, buffer.getvalue(), json.loads(out.read_text(encoding="utf-8"))


def test_update_question_is_loaded(harness):
    data, _stdout, _report = harness
    conv = load(data)[0]
    assert CATEGORY_NAMES[6] == "update" and 5 not in CATEGORY_NAMES
    update = [q for q in conv.questions if q.category == 6]
    assert [(q.question, q.evidence) for q in update] == [(UPDATE["question"], ["D4:10"])]
    assert categories_in([conv]) == ["multi-hop", "temporal", "open-domain", "single-hop", "update"]
    assert categories_in(load(MINI)) == ["multi-hop", "temporal", "open-domain", "single-hop"]


def test_update_is_scored_in_its_own_column(harness):
    _data, stdout, report = harness
    assert report["questions"] == 22  # mini-en's 21 and the update question
    assert report["categories"][-1] == "update"
    for system, per in report["results"].items():
        for budget in BUDGETS:
            s = per[budget]
            update = s["by_category"]["update"]
            assert update["n"] == 1 and update["recall"] in (0.0, 1.0) and update["hit"] == update["recall"]
            # The update question is one of the run's questions: overall recall is the mean of all of them.
            counted = sum(c["n"] for c in s["by_category"].values())
            assert counted == s["n"] == 22, (system, budget)
            weighted = sum(c["n"] * c["recall"] for c in s["by_category"].values() if c["n"]) / counted
            assert weighted == pytest.approx(s["recall"], abs=1e-3)
    header = next(line for line in stdout.splitlines() if line.startswith("| system |"))
    assert "| update R / H | ctx tokens |" in header
    row = next(line for line in stdout.splitlines() if line.startswith("| lumina |"))
    assert len(row.split("|")) == len(header.split("|"))


def test_three_budgets_give_three_tables_and_result_takes_the_first(harness):
    _data, stdout, report = harness
    assert report["budgets"] == [int(b) for b in BUDGETS]
    tables = re.findall(r"^## budget B = (\d+) tokens$", stdout, flags=re.M)
    assert tables == list(BUDGETS)
    assert stdout.count("| system | recall@B |") == 3
    match = RESULT.match(stdout.strip().splitlines()[-1])
    assert match
    first = report["results"]["lumina"]["150"]
    assert float(match["recall"]) == pytest.approx(first["recall"], abs=1e-4)
    assert float(match["hit"]) == pytest.approx(first["hit"], abs=1e-4)
    best = max(per["150"]["recall"] for system, per in report["results"].items() if system != "lumina")
    assert float(match["best"]) == pytest.approx(best, abs=1e-4)


def test_tail_counts_add_up_for_the_update_set(harness):
    _data, _stdout, report = harness
    tail = report["recall_tail"]
    assert sum(tail["slowest_channel"].values()) == tail["queries"] == 22
    ours = report["results"]["lumina"]
    # Recall runs once per question (at the largest budget); every budget reports that same latency.
    assert ours["100"]["latency_ms"] == ours["150"]["latency_ms"] == ours["400"]["latency_ms"] == tail["total_ms"]
    for lat in (tail["total_ms"], *tail["stages_ms"].values(), *report["channel_latency_ms"].values()):
        assert lat["p50"] <= lat["p95"] <= lat["p99"]
