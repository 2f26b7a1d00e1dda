"""The capacity report and the forgetting preview (issue 49) on the real archive, embedded and on PostgreSQL:
a user over the ratio targets is warned before the batch compresses, one under them is not; the protected cap
warns from 90 %; the preview names exactly what the next batch then does, and writes nothing. The commands
`capacity`, `forget-preview` and `undo` in-process."""

from __future__ import annotations

import json

import pytest

from lumina_memory.nodes.lifecycle.capacity import capacity_report
from lumina_memory.nodes.lifecycle.forget_preview import forget_preview
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.models import SegmentRecord
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

pytestmark = pytest.mark.slow  # opens services on both engines

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC
SECRET = "capacity-test-secret-0123456789abcdef"


@pytest.fixture(params=["duckdb", "postgres"])
def services(request, tmp_path):
    server = {"database_url": request.getfixturevalue("pg_uri"), "secret_key": SECRET} if request.param == "postgres" else {}
    opened = open_services(make_settings(tmp_path / "data", lifecycle=LifecycleParams(max_protected_memories=10), **server))
    yield opened
    opened.close()
    from lumina_memory.stores.redis_server import stop_server

    stop_server(make_settings(tmp_path / "data"))


def _memories(services, user: str, levels: list[int], protected: int = 0) -> list[str]:
    """Memories of ``user`` at ``levels`` (the first ``protected`` of them protected), with their segments."""
    archive = services.stores.archive
    ids = [f"{user}:m{i}" for i in range(len(levels))]
    for i, memory_id in enumerate(ids):
        archive.put_segment(SegmentRecord(
            segment_id=memory_id, user_id=user, turn_ids=[f"{memory_id}:t"], source_ids=["s"], start_ts=T0 - 60 + i,
            end_ts=T0 + i, summary=f"summary {i}", keywords=[f"kw{i}"], embedding=[0.1] * services.embedder.dim,
            text=f"user: invented line number {i}"))
    archive.memories.insert_new([dict(
        memory_id=m, user_id=user, created=T0 + i, category="casual", intensity=60.0, valence="neutral",
        valence_score=0.0, arousal=50.0, tags=[], decay=0.999, memory_days=0.0, retention=60.0, level=level,
        protected=i < protected, recalled=False, recall_count=0, unbatched=True, idle_days=0.0,
        archived_on=-1 if level < 4 else 1, archive_reason=0 if level < 4 else 1, revival_requested=False,
        emotion_path="offline") for i, (m, level) in enumerate(zip(ids, levels))])
    return ids


def test_over_the_targets_warns_and_under_them_does_not(services):
    # carol: 10 memories all at level 1, against room for 1 (15 %): the batch will compress 9, then push on.
    _memories(services, "carol", [1] * 10)
    # dave: 1 / 3 / 3 / 3 of 10: 10 % / 30 % / 30 %, each within 15 / 30 / 35 %.
    _memories(services, "dave", [1, 2, 2, 2, 3, 3, 3, 4, 4, 4])
    over = capacity_report(services, "carol")
    assert over["levels"] == {1: 10, 2: 0, 3: 0, 4: 0} and over["ratio_total"] == 10
    assert [(r["level"], r["allowed"], r["forced"]) for r in over["ratios"]] == [(1, 1, 9), (2, 3, 6), (3, 3, 3)]
    assert len(over["warnings"]) == 3 and "level 1 is over its target" in over["warnings"][0]
    assert "the next batch compresses 9" in over["warnings"][0]
    under = capacity_report(services, "dave")
    assert [r["forced"] for r in under["ratios"]] == [0, 0, 0] and under["warnings"] == []
    assert under["protected"] == {"count": 0, "cap": 10, "share": 0.0}


def test_the_protected_cap_warns_from_ninety_percent(services):
    _memories(services, "erin", [1] * 12, protected=9)
    report = capacity_report(services, "erin")
    assert report["protected"]["count"] == 9
    assert any("9 of 10 protected memories" in w for w in report["warnings"])
    assert report["ratio_total"] == 3  # protected memories are outside the ratios
    _memories(services, "finn", [1] * 12, protected=8)
    assert not any("of 10 protected memories" in w for w in capacity_report(services, "finn")["warnings"])


def test_the_preview_names_what_the_batch_then_does_and_writes_nothing(services):
    ids = _memories(services, "carol", [1] * 10)
    _memories(services, "dave", [1, 2, 2, 2, 3, 3, 3, 4, 4, 4])
    table = services.stores.archive.memories
    before = table.rows("carol")
    preview = forget_preview(services, "carol", now=T0 + DAY)
    assert table.rows("carol") == before and table.undo.count("carol") == 0 and table.last_days() == {}
    assert preview["counts"] == {"compress": 6, "archive": 3, "delete": 0}
    assert {c["memory_id"] for c in preview["changes"]} == set(ids[:-1])  # ties: the oldest go first
    run_lifecycle(services, now=T0 + DAY)
    after = {r["memory_id"]: int(r["level"]) for r in table.rows("carol")}
    assert {c["memory_id"]: c["level_to"] for c in preview["changes"]} == {m: after[m] for m in after if after[m] > 1}
    assert {e["target_id"]: e["step"] for e in table.undo.entries("carol")} == {
        c["memory_id"]: c["step"] for c in preview["changes"]}
    assert forget_preview(services, "dave", now=T0 + DAY + 60)["day"] == preview["day"] + 1  # today's already ran


def test_the_commands(cli_factory):
    run = cli_factory(in_process=True)
    services = open_services(make_settings(run.data_dir))
    try:
        _memories(services, "carol", [1] * 10)
    finally:
        services.close()
    out = run("capacity", "--user", "carol")
    assert "WARNING: level 1 is over its target" in out.stdout
    stats = run("stats", "--user", "carol").stdout  # the same numbers in the user's stats
    assert "capacity: memories by level 1: 10, 2: 0, 3: 0, 4: 0" in stats and "WARNING: level 1 is over" in stats
    report = json.loads(run("capacity", "--user", "carol", "--json").stdout)
    assert report["ratios"][0]["forced"] == 9
    preview = json.loads(run("forget-preview", "--user", "carol", "--json").stdout)
    assert preview["counts"]["compress"] + preview["counts"]["archive"] == 9
    refused = run("undo", "--user", "carol", check=False)
    assert refused.returncode != 0 and "nothing to undo" in refused.stdout + refused.stderr
    bad = run("undo", "--user", "carol", "--step", "erase", check=False)
    assert bad.returncode != 0 and "invalid choice" in bad.stdout + bad.stderr
    late = run("undo", "--user", "carol", "--since", "2026-13-01", check=False)
    assert late.returncode != 0 and "not a date" in late.stdout + late.stderr


def test_maintain_then_undo_through_the_cli_on_its_clock(cli_factory):
    run = cli_factory(in_process=True)
    services = open_services(make_settings(run.data_dir))
    try:
        _memories(services, "carol", [1] * 10)
    finally:
        services.close()
    preview = json.loads(run("forget-preview", "--user", "carol", "--now", "2026-01-02T04:00+00:00", "--json").stdout)
    run("maintain", "--user", "carol", "--now", "2026-01-02T04:00+00:00", "--json")
    levels = json.loads(run("memories", "--user", "carol", "--json").stdout)
    assert {c["memory_id"]: c["level_to"] for c in preview["changes"]} == {m["memory_id"]: m["level"] for m in levels
                                                                           if m["level"] > 1}
    undone = json.loads(run("undo", "--user", "carol", "--step", "compress", "--now", "2026-01-02T05:00+00:00",
                            "--json").stdout)
    assert undone["memories"] and all(m["level"] == 1 for m in undone["memories"])
    assert undone["entries"] == preview["counts"]["compress"]
    late = run("undo", "--user", "carol", "--now", "2026-03-01T05:00+00:00", check=False)
    assert late.returncode != 0 and "undo window has passed" in late.stdout + late.stderr
