"""bench.cold_start on a few memories: the users warmed at start find their indexes ready at their first
recall, the cold ones build theirs inside it (the baseline), and the report says so."""

from __future__ import annotations

import json

from bench import cold_start


def test_cold_start_bench_warms_the_recent_users_and_reports_the_ratio(tmp_path):
    out = tmp_path / "cold.json"
    cold_start.main(["--memories", "60", "--long-share", "0.5", "--data-dir", str(tmp_path / "data"), "--out", str(out)])
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["warmed_users"] == 2 and result["turns_per_user"] == 60
    first = result["first_recall"]
    assert set(first) == set(cold_start.USERS)
    for lang in ("en", "ja"):
        # A cold user's first recall builds the indexes (its index stage); a warmed user's finds them ready.
        assert first[f"cold-{lang}"]["stages_ms"]["index"] > first[f"warm-{lang}"]["stages_ms"]["index"]
        assert result["cold_over_warmed"][lang] > 0
