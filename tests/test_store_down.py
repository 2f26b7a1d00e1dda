"""A store that is down never loses a turn: the flush goes on, the turns and the segment reach the
archive, the derived write waits in the archive's outbox (stats shows the degraded mode), and it is
applied when the store is back."""

from __future__ import annotations

from lumina_memory.graphs.inspect import tier_stats
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
        mem.graph.invoke({"flush": True}, config, context=ctx)  # no error: only mid-term waits
        assert mem.graph.get_state(config).values["pending"] == []
        stats = tier_stats(mem.services, "hal")
        assert stats["archive"]["turns"] == 3 and stats["archive"]["segments"] == 1
        assert stats["long-term"]["points"] == 1 and stats["graph"]["nodes"]["Segment"] == 1
        assert str(stats["mid-term"]["segments"]).startswith("unavailable")
        assert stats["derivations"]["owed"] == {"mid-term": 1} and "mid-term" in stats["derivations"]["degraded"]
        server = start_redis(tmp_path, sock)
        # The next flush first applies what was owed, in order, then its own segment.
        mem.graph.invoke({"turn": {"speaker": "user", "text": "湖の周りは二十キロあるらしい", "ts": 1_790_003_000}},
                         config, context=ctx)
        mem.graph.invoke({"flush": True}, config, context=ctx)
        stats = tier_stats(mem.services, "hal")
        assert stats["mid-term"]["segments"] == 2 and stats["archive"]["segments"] == 2
        assert stats["derivations"] == {"segments": 0, "owed": {}, "degraded": {}}
        first = mem.services.stores.archive.segments("hal")[-1]
        assert 0 < mem.services.stores.midterm.ttl("hal", first.segment_id) <= mem.settings.midterm_ttl_seconds
    finally:
        stop_redis(server)
