"""A5's resolution propagation into knowledge (nodes.knowledge.resolutions) on both archive engines: an item the
user raised is a current ``issue`` fact after the daily batch; once resolved, the next batch ends it with history
kept (a negative item supersedes it), ends the plan about it, and leaves unrelated facts and another user's
alone; the profile (what priming serves) no longer presents it and recall marks it resolved."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest

from lumina_memory.nodes.issues import track_issues
from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.nodes.knowledge.profile import build_profile
from lumina_memory.nodes.knowledge.recall_items import knowledge_hits
from lumina_memory.nodes.knowledge.resolutions import ISSUE, RESOLVED_NOTE, propagate_resolutions
from lumina_memory.stores import ids
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.models import SegmentRecord, Turn
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

USER, OTHER = "yui", "kai"
DAY = 86_400.0
T0 = datetime.fromisoformat("2026-04-01T20:00+09:00").timestamp()
pytestmark = pytest.mark.slow  # a PostgreSQL server, Sudachi
PRINTER = "The printer is broken and I need to fix…"


@pytest.fixture(params=["duckdb", "postgres"])
def services(request, tmp_path):
    if request.param == "duckdb":
        settings = make_settings(tmp_path / "data")
        archive = DuckDBArchive(tmp_path / "archive.duckdb")
    else:
        from lumina_memory.stores.archive_postgres import PostgresArchive

        uri = request.getfixturevalue("pg_uri")
        settings = make_settings(tmp_path / "data", database_url=uri)  # the activity log in PostgreSQL too
        archive = PostgresArchive(uri, timeout=10)
    try:
        yield SimpleNamespace(settings=settings, stores=SimpleNamespace(archive=archive))
    finally:
        archive.close()


def say(services, user: str, n: int, texts: list[str], ts: float) -> None:
    """One closed segment of user turns, as encoding leaves it: archived, its items and issues recorded."""
    turns = [Turn(turn_id=ids.segment_id(user, f"s{n}t{i}"), source_id=f"s{n}t{i}", user_id=user, speaker="user",
                  text=text, ts=ts + i * 30) for i, text in enumerate(texts)]
    record = SegmentRecord(segment_id=ids.segment_id(user, f"s{n}"), user_id=user, turn_ids=[t.turn_id for t in turns],
                           source_ids=[t.source_id for t in turns], start_ts=ts, end_ts=ts + 60, summary=texts[0])
    services.stores.archive.put_turns([t.model_copy(update={"segment_id": record.segment_id}) for t in turns])
    services.stores.archive.put_segment(record)
    dicts = [t.model_dump() for t in turns]
    learn_segments(services, user, [(record, dicts)], now=ts)
    track_issues(services, user, [(record, dicts)])


def current(services, user: str) -> dict[tuple[str, str], dict]:
    """What holds now (a current negative item records that something is no longer so)."""
    return {(r["attribute"], r["value"]): r for r in services.stores.archive.knowledge.items(user)
            if r["polarity"] == "positive"}


def test_a_resolved_issue_ends_in_the_daily_batch_with_its_plan_and_nothing_else(services):
    say(services, USER, 1, ["風邪をひいて困ってる", "コーヒーが好き"], T0)
    say(services, USER, 2, ["来月大阪に引っ越す予定", "I'm planning to visit Kyoto next week"], T0 + DAY)
    say(services, USER, 3, ["The printer is broken and I need to fix it"], T0 + DAY + 3600)
    say(services, OTHER, 1, ["風邪をひいて困ってる"], T0)

    first = propagate_resolutions(services, USER, now=T0 + 2 * DAY)
    assert first == {"issues": 3, "resolved": 0, "ended": 0}
    assert propagate_resolutions(services, OTHER, now=T0 + 2 * DAY)["issues"] == 1
    facts = current(services, USER)
    assert {v for a, v in facts if a == ISSUE} == {"風邪をひいて困ってる", "来月大阪に引っ越す予定", PRINTER}
    # A value is a short phrase (max_value_chars, 40): a longer sentence is cut there, whole in the item's text.
    assert facts[(ISSUE, PRINTER)]["text"] == "The printer is broken and I need to fix it"
    assert ("plan", "大阪に引っ越す") in facts and ("likes", "コーヒー") in facts
    assert "風邪をひいて困ってる" in {f["value"] for f in build_profile(services, USER)["facts"]}

    say(services, USER, 4, ["風邪治った！", "大阪への引っ越し終わった"], T0 + 3 * DAY)
    report = propagate_resolutions(services, USER, now=T0 + 4 * DAY)
    assert report == {"issues": 0, "resolved": 2, "ended": 1}
    facts = current(services, USER)
    assert {v for a, v in facts if a == ISSUE} == {PRINTER}  # still open
    assert ("plan", "大阪に引っ越す") not in facts  # the plan about the move ended with it
    assert ("plan", "visit Kyoto") in facts and ("likes", "コーヒー") in facts  # unrelated: untouched
    profile = {f["value"] for f in build_profile(services, USER)["facts"]}
    assert "風邪をひいて困ってる" not in profile and "大阪に引っ越す" not in profile and "コーヒー" in profile

    history = {r["item_id"]: r for r in services.stores.archive.knowledge.items(USER, history=True)}
    cold = next(r for r in history.values() if r["value"] == "風邪をひいて困ってる" and r["polarity"] == "positive")
    recovered = history[cold["superseded_by"]]
    assert cold["status"] == "superseded" and cold["note"] == RESOLVED_NOTE + "風邪治った！"
    assert cold["valid_to"] == recovered["said_at"] == T0 + 3 * DAY
    assert recovered["polarity"] == "negative" and recovered["text"] == "風邪治った！" and recovered["attribute"] == ISSUE
    assert recovered["status"] == "current" and recovered["episode_ids"] == [ids.segment_id(USER, "s4")]
    assert cold["source_ids"] == ["s1t0"] and recovered["source_ids"] == ["s4t0"]
    plan = next(r for r in history.values() if r["value"] == "大阪に引っ越す")
    assert plan["valid_to"] == T0 + 3 * DAY + 30 and plan["note"] == RESOLVED_NOTE + "大阪への引っ越し終わった"

    hits = knowledge_hits(services, USER, "風邪はどう？", limit=5)
    assert any(h["item_id"] == cold["item_id"] and h["text"].endswith("(resolved)]") for h in hits)
    # Another user's same words stay open.
    assert {v for a, v in current(services, OTHER) if a == ISSUE} == {"風邪をひいて困ってる"}
    # A re-run changes nothing.
    assert propagate_resolutions(services, USER, now=T0 + 5 * DAY) == {"issues": 0, "resolved": 0, "ended": 0}


def test_the_daily_step_propagates_a_resolution_said_in_conversation_into_priming(memory):
    from lumina_memory.graphs.maintenance_graph import run_maintenance
    from lumina_memory.nodes.priming.channels import profile_channel
    from tests.test_issues import _say

    services = memory.services
    _say(memory, USER, ["パソコンのWi-Fiが壊れて困ってる", "それは大変ですね"], T0)
    _say(memory, OTHER, ["Wi-Fiが壊れて困ってる", "ルーターを見てみましょう"], T0)
    first = run_maintenance(services, now=T0 + DAY)["knowledge_daily"]
    assert first["issues"] == 2 and first["resolved"] == 0

    def primed(user: str) -> list[str]:
        return [i["text"] for i in profile_channel(services, user, "おはよう", "greeting", "lumina")]

    assert any("Wi-Fiが壊れて困ってる" in t for t in primed(USER))
    _say(memory, USER, ["やっとWi-Fi直ったよ！", "よかったですね！"], T0 + 2 * DAY)
    second = run_maintenance(services, now=T0 + 3 * DAY)["knowledge_daily"]
    assert second["resolved"] == 1 and second["issues"] == 0
    assert not any("Wi-Fi" in t for t in primed(USER))  # no longer presented as open
    assert any("Wi-Fiが壊れて困ってる" in t for t in primed(OTHER))  # the other user's stays
    ended = [r for r in services.stores.archive.knowledge.items(USER, history=True, attribute=ISSUE)
             if r["valid_to"] is not None]
    assert [r["note"] for r in ended] == [RESOLVED_NOTE + "やっとWi-Fi直ったよ！"]
    # The graph holds the history too: the ended item, and the resolution superseding it.
    nodes = {n["item_id"]: n for n in services.stores.graph.knowledge(USER) if n["attribute"] == ISSUE}
    assert nodes[ended[0]["item_id"]]["status"] == "superseded"
    assert nodes[ended[0]["superseded_by"]]["polarity"] == "negative"
    assert ended[0]["item_id"] in nodes[ended[0]["superseded_by"]]["supersedes"]
    # Erasure reaches what the propagation wrote (the knowledge table, the activity log's issue events).
    from lumina_memory.graphs.erase import erase_plan, erase_user
    from lumina_memory.nodes.activity import activity_log

    erase_user(services, USER, erase_plan(services, USER)["token"])
    assert services.stores.archive.knowledge.items(USER, history=True) == []
    assert activity_log(services.settings).events(USER) == []
    assert any(r["attribute"] == ISSUE for r in services.stores.archive.knowledge.items(OTHER))
