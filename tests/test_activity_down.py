"""A turn is never lost to its activity log: when the log's server is down, ``record`` logs a warning naming the
event and the error, and the turn goes on (the log is context for recall, not a record anything depends on)."""

from __future__ import annotations

import logging
import socket
from types import SimpleNamespace

from lumina_memory.nodes.activity import record
from lumina_memory.stores.settings import LuminaSettings


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_an_activity_log_whose_server_is_down_costs_a_warning_not_the_turn(tmp_path, caplog):
    settings = LuminaSettings(data_dir=tmp_path, database_url=f"postgresql://u@127.0.0.1:{_closed_port()}/db",
                              secret_key="s" * 40, database_timeout_seconds=1)
    with caplog.at_level(logging.WARNING, logger="lumina.activity"):
        record(SimpleNamespace(settings=settings), "alice", "recall", query="q")
    assert any("activity log not written event=recall" in r.getMessage() for r in caplog.records)
