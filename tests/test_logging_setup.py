"""LUMINA_LOG_FORMAT=json: one JSON object per node run, with user, segment, tier and timing as fields."""

from __future__ import annotations

import io
import json
import logging

import pytest

from lumina_memory.graphs.logging_setup import LOGGER, configure_logging
from lumina_memory.graphs.replay import replay


@pytest.fixture
def restore_lumina_logger():
    logger = logging.getLogger(LOGGER)
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved[0], saved[1], saved[2]


def test_json_lines_carry_node_user_segment_tier_and_timing(memory, demo_rows, restore_lumina_logger):
    stream = io.StringIO()
    configure_logging("json", "INFO", stream)
    replay(memory.graph, "log-user", demo_rows[:8])
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    nodes = [r for r in lines if r["logger"] == "lumina.graph" and "node" in r]
    assert {r["node"] for r in nodes} >= {"ingest_turn", "detect_boundary", "flush_to_redis", "link_associations"}
    flush = next(r for r in nodes if r["node"] == "flush_to_redis")
    assert flush["user"] == "log-user" and flush["tier"] == "mid-term" and "segment" in flush
    assert any(r["segment"] for r in nodes)  # ids of the open segment (flush-stage lines may leave it empty)
    assert isinstance(flush["ms"], float) and flush["level"] == "INFO"


def test_text_is_the_default_and_a_bad_format_is_refused(monkeypatch, restore_lumina_logger):
    monkeypatch.delenv("LUMINA_LOG_FORMAT", raising=False)
    stream = io.StringIO()
    configure_logging(level="INFO", stream=stream)
    configure_logging(level="INFO", stream=stream)  # idempotent: still one handler
    logging.getLogger("lumina.test").info("node=x user=u")
    assert stream.getvalue().count("node=x user=u") == 1
    monkeypatch.setenv("LUMINA_LOG_FORMAT", "yaml")
    with pytest.raises(ValueError, match="text or json"):
        configure_logging()
