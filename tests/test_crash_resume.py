"""A failure between two writes of a flush loses nothing: the run resumes from the checkpoint."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.stores.archive_duckdb import DuckDBArchive


class FlakyArchive(DuckDBArchive):
    """The real DuckDB archive, made to fail once at the moment after the Redis write."""

    failures_left = 1

    def _fail_once(self):
        if self.failures_left:
            self.failures_left -= 1
            raise OSError("disk unplugged (injected)")

    def put_segment(self, record):
        self._fail_once()
        return super().put_segment(record)

    def put_segments(self, records):
        self._fail_once()
        return super().put_segments(records)


def test_failure_after_the_redis_write_resumes_and_completes(memory):
    stores = memory.services.stores
    real = stores.archive
    path = real.database
    real.close()
    stores.archive = FlakyArchive(path)
    config = {"configurable": {"thread_id": "crash"}}
    ctx = {"user_id": "carol", "respond": False}
    turns = [
        {"speaker": "user", "text": "週末に京都へ行って金閣寺を見てきた", "ts": 1_790_000_000},
        {"speaker": "lumina", "text": "いいなあ、金閣寺きれいだった？", "ts": 1_790_000_040},
        {"speaker": "user", "text": "すごく輝いてた！湯豆腐もおいしかった", "ts": 1_790_000_080},
    ]
    for turn in turns:
        memory.graph.invoke({"turn": turn}, config, context=ctx)
    with pytest.raises(OSError, match="injected"):
        memory.graph.invoke({"flush": True}, config, context=ctx)
    # The segment reached Redis, not the archive; the checkpoint still holds it as pending.
    assert stores.midterm.count("carol") == 1
    assert stores.archive.counts("carol")["segments"] == 0
    state = memory.graph.get_state(config)
    assert state.next == ("archive_to_duckdb",)
    assert state.values["pending"][0]["stages"] == ["redis"]
    memory.graph.invoke(None, config, context=ctx)  # resume
    stats = tier_stats(memory.services, "carol")
    assert stats["archive"] == {"backend": "duckdb", "turns": 3, "segments": 1}
    assert stats["mid-term"]["segments"] == 1 and stats["long-term"]["points"] == 1
    assert stats["graph"]["nodes"]["Segment"] == 1
    assert memory.graph.get_state(config).values["pending"] == []
