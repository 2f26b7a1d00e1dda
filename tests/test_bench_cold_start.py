"""bench.cold_start on a few memories: the users warmed at start find their indexes ready at their first
recall; a cold one builds it inside the recall, once from the texts (the baseline) and once from the reads the
archive kept at write time, which reads no text, and once from the snapshot kept at write time; the report says so."""

from __future__ import annotations

import json

from bench import cold_start


def test_cold_start_bench_warms_the_recent_users_and_reports_the_ratios(tmp_path):
    out = tmp_path / "cold.json"
    cold_start.main(["--memories", "60", "--long-share", "0.5", "--data-dir", str(tmp_path / "data"), "--out", str(out),
                     "--snapshot-min-turns", "10"])
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["warmed_users"] == 2 and result["turns_per_user"] == 60
    first = result["first_recall"]
    cold = [f"{u} ({how})" for u in cold_start.USERS[:2] for how in ("from the texts", "from the kept reads", "from the snapshot")]
    assert set(first) == {*cold, *cold_start.USERS[2:]}
    for lang in ("en", "ja"):
        assert all("index" in first[user]["stages_ms"] for user in first if user.split(" ")[0].endswith(lang))
        assert set(result["ratios"][lang]) == {"texts_over_kept_reads", "kept_reads_over_snapshot", "snapshot_over_warmed"}
    # Only the baseline read texts (the 2 cold users'); the kept-read builds decoded what the fill kept at write
    # time; the warm-up and the last two cold recalls loaded the snapshots the fill wrote. The rebuilds are the
    # cold users' two builds each and the user without memories: a warmed user's first recall built nothing.
    index = result["recall_index"]
    assert index["turns_read"] == 2 * 60 and index["reads_decoded"] == 2 * 60
    assert index["snapshots_loaded"] == 4 and index["rebuilds"] == 4 + 1  # + the user without memories
