"""bench.priming end to end on the project's own mini set and the bundled demo: both systems scored at every
budget, nothing primed over its budget, and the pointers' share of the primed text reported (short against whole)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.priming import main

MINI = Path(__file__).parent / "data" / "mini_locomo.json"


def test_priming_bench_on_the_mini_set(tmp_path):
    out = tmp_path / "priming.json"
    assert main(["--data", str(MINI), "--conversations", "mini-ja", "--keep-data", str(tmp_path / "data"),
                 "--json", str(out), "--md", str(tmp_path / "priming.md"), "--quiet", "--demo"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    (block,) = report["sets"]
    assert block["questions"] > 10 and block["primed_over_budget"] == 0
    for row in block["rows"]:
        for system in ("recall", "priming"):
            assert 0.0 < block["results"][row][system]["recall"] <= 1.0, (row, system)
    # Recall's own figure at B-2 … B+2 (a token more or less of budget), and the questions compared one by one.
    for row in block["rows"]:
        near = block["recall_band"][row]
        assert set(near["by_offset"]) == {"-2", "-1", "1", "2"}
        assert near["min"] <= block["results"][row]["recall"]["recall"] <= near["max"]
        assert all(0.0 < v <= 1.0 for v in near["by_offset"].values())
        pairs = block["paired"][row]
        assert pairs["priming_more"] + pairs["priming_less"] <= block["questions"]
    assert "recall at B-2 … B+2" in (tmp_path / "priming.md").read_text(encoding="utf-8")
    share = block["pointer_chars"]
    assert share["texts"] == block["questions"]
    # Segment and fact ids are uuids: shown short, the text is shorter and pointers a smaller part of it.
    assert share["text_chars_mean"] < share["text_chars_mean_whole_pointers"]
    assert 0 < share["pointer_share_shown"] < share["pointer_share_whole"]
    assert "pointers (" in (tmp_path / "priming.md").read_text(encoding="utf-8")
    # The demo's messages carry default ids (t- and 24 hex digits): pointers shrink most there.
    demo = report["demo_pointer_chars"]
    assert demo["texts"] > 0 and demo["pointer_share_shown"] < demo["pointer_share_whole"] / 1.5
