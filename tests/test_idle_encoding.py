"""A5 without a cron: a quiet conversation's open segment is encoded by the next message (before the reply's
recall), and by the next opening of the memory graph on the data directory; a thread being written elsewhere
(its ``thread:<id>`` lease held) is left alone."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.idle_segments import thread_lease
from lumina_memory.graphs.replay import thread_config
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

T0 = datetime.fromisoformat("2026-03-01T10:00+09:00").timestamp()


def _turn(speaker: str, text: str, ts: float) -> dict:
    return {"turn": {"speaker": speaker, "text": text, "ts": ts}}


def test_a_message_after_the_idle_gap_encodes_the_quiet_segment_before_it_is_answered(memory):
    config = {"configurable": {"thread_id": "kana-chat"}}
    quiet = {"user_id": "kana", "respond": False}
    memory.graph.invoke(_turn("user", "週末に鎌倉へ行って大仏を見てきたよ", T0), config, context=quiet)
    memory.graph.invoke(_turn("lumina", "いいですね、鎌倉の大仏は大きかったですか？", T0 + 30), config, context=quiet)
    assert list_memories(memory.services, "kana") == []  # the segment is still open
    out = memory.graph.invoke(_turn("user", "鎌倉で見たものを覚えてる？", T0 + 11 * 60), config,
                              context={"user_id": "kana"})
    assert out["boundary"]["reason"] == "idle" and out["boundary"]["close"]
    memories = list_memories(memory.services, "kana")
    assert len(memories) == 1 and len(memories[0]["source_turn_ids"]) == 2  # the quiet segment, as a memory
    state = memory.graph.get_state(config).values
    assert state["turns"][0]["text"] == "鎌倉で見たものを覚えてる？"  # the new segment opens with the question
    assert any("大仏" in item.get("text", "") for item in out.get("recalled") or [])  # the reply's recall reached it


def _write_quiet_thread(settings, user: str) -> None:
    services, graph, checkpoints = _open(settings)
    try:
        quiet = {"user_id": user, "respond": False}
        graph.invoke(_turn("user", "明日は歯医者の予約がある、ちょっと憂うつ", T0), thread_config(user), context=quiet)
        graph.invoke(_turn("clarisse", "終わったらご褒美にケーキを食べましょう", T0 + 20), thread_config(user),
                     context=quiet)
    finally:
        checkpoints.close()
        services.close()


@pytest.mark.slow
def test_opening_the_memory_graph_encodes_every_quiet_thread_unless_its_lease_is_held(tmp_path):
    settings = make_settings(tmp_path / "data")
    try:
        off = settings.model_copy(update={"idle_sweep_on_open": False})
        _write_quiet_thread(off, "mio")
        _write_quiet_thread(off, "ren")
        services, graph, checkpoints = _open(off)
        try:
            assert list_memories(services, "mio") == [] and list_memories(services, "ren") == []
        finally:
            checkpoints.close()
            services.close()

        held, release = threading.Event(), threading.Event()
        services, graph, checkpoints = _open(off)

        def writer() -> None:  # another worker writing ren's thread
            with thread_lease(services, thread_config("ren")["configurable"]["thread_id"]) as got:
                assert got
                held.set()
                release.wait(60)

        worker = threading.Thread(target=writer)
        worker.start()
        try:
            held.wait(60)
            from lumina_memory.graphs.idle_segments import sweep_at_open

            services.settings = settings  # opened with the sweep off; on for this call
            report = sweep_at_open(services)
        finally:
            release.set()
            worker.join()
        assert report["flushed"] == 1 and [s["thread"] for s in report["skipped"]] == ["user:ren"]
        assert len(list_memories(services, "mio")) == 1 and list_memories(services, "ren") == []
        assert graph.get_state(thread_config("mio")).values["turns"] == []
        checkpoints.close()
        services.close()

        services, graph, checkpoints = _open(settings)  # the next opening: ren's lease is free now
        try:
            assert len(list_memories(services, "ren")) == 1
            assert graph.get_state(thread_config("ren")).values["turns"] == []
        finally:
            checkpoints.close()
            services.close()
    finally:
        stop_server(settings)
