"""A store that is down: a clear error, nothing lost, and the flush completes once it is back."""

from __future__ import annotations

import pytest

from graphs.inspect import tier_stats
from stores.errors import StoreUnavailable
from tests.redis_process import start_redis, stop_redis


def test_redis_down_during_flush_loses_nothing(memory_factory, tmp_path):
    sock = tmp_path / "prod.sock"
    server = start_redis(tmp_path, sock)
    try:
        mem = memory_factory(redis_url=f"unix://{sock}")
        assert mem.services.stores.midterm.backend == "redis"
        config = {"configurable": {"thread_id": "down"}}
        ctx = {"user_id": "hal", "respond": False}
        for i, text in enumerate(["新しい自転車を買ったよ", "赤いロードバイクなんだ", "週末に湖まで走る予定"]):
            mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": 1_790_000_000 + 30 * i}}, config,
                             context=ctx)
        stop_redis(server)
        with pytest.raises(StoreUnavailable) as err:
            mem.graph.invoke({"flush": True}, config, context=ctx)
        assert "mid-term" in str(err.value)
        state = mem.graph.get_state(config)
        assert state.next == ("flush_to_redis",) and len(state.values["pending"][0]["turns"]) == 3
        server = start_redis(tmp_path, sock)
        mem.graph.invoke(None, config, context=ctx)  # resume once the store is back
        stats = tier_stats(mem.services, "hal")
        assert stats["mid-term"]["segments"] == 1 and stats["archive"]["turns"] == 3
        assert stats["long-term"]["points"] == 1 and stats["graph"]["nodes"]["Segment"] == 1
    finally:
        stop_redis(server)
