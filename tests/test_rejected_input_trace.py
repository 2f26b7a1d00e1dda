"""A refused run leaves no trace in the checkpoint database (issue 16: NUL text, a 1 MB text and an unknown
speaker were refused, yet written into the CLI's checkpoints.sqlite by LangGraph's input checkpoint)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.replay import thread_config
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

MARK = "ZQXREJECTEDMARKER"
TS = "2026-10-01T10:00:00+09:00"
BAD_RUNS = [
    ({"turn": {"speaker": "user", "text": f"{MARK} nul \x00 byte", "ts": TS}}, "text"),
    ({"turn": {"speaker": "user", "text": MARK + "あ" * 1_000_000, "ts": TS}}, "text"),
    ({"turn": {"speaker": "mallory", "text": f"{MARK} from an unknown speaker", "ts": TS}}, "speaker"),
    ({"turn": {"speaker": "user", "text": f"{MARK} bad id", "ts": TS, "source_id": "../etc"}}, "source_id"),
    ({"messages": [HumanMessage(f"{MARK} chat \x00 nul")]}, "messages"),
    ({"messages": [HumanMessage(MARK + "x" * 1_000_000)]}, "messages"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": MARK + "\x07bell"}]}]}, "messages"),
    ({"transcript": [{"speaker": "user", "text": f"{MARK} fine", "ts": TS},
                     {"speaker": "nobody", "text": f"{MARK} second", "ts": TS}]}, "transcript[1].speaker"),
]


def _raw_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.glob("checkpoints.sqlite*"))


@pytest.mark.parametrize("bad, field", BAD_RUNS, ids=[f"{i}-{f}" for i, (_, f) in enumerate(BAD_RUNS)])
def test_a_refused_run_is_not_in_the_checkpoint_file(tmp_path, bad, field):
    settings = make_settings(tmp_path)
    services, graph, conn = _open(settings)
    config = thread_config("u1")
    ctx = {"user_id": "u1", "respond": False}
    try:
        graph.invoke({"turn": {"speaker": "user", "text": "こんにちは", "ts": TS}}, config, context=ctx)
        before = len(list(graph.get_state_history(config)))
        with pytest.raises(InvalidInput) as err:
            graph.invoke(bad, config, context=ctx)
        assert err.value.field == field
        state = graph.get_state(config)
        assert MARK not in repr(state.values)
        assert len(list(graph.get_state_history(config))) == before  # no checkpoint for the refused run
        # the thread goes on
        graph.invoke({"turn": {"speaker": "user", "text": "まだ大丈夫？", "ts": TS}}, config, context=ctx)
        assert graph.get_state(config).values["turns"][-1]["text"] == "まだ大丈夫？"
    finally:
        services.close()
        conn.close()
        stop_server(settings)
    raw = _raw_bytes(tmp_path)
    assert raw, "the CLI's checkpoint database exists"
    assert MARK.encode() not in raw


def test_content_blocks_are_read_as_text_and_a_refused_one_leaves_the_state_as_it_was(memory):
    """Content blocks are read as text (not a Python repr), and a refused one leaves the state as it was."""
    config = {"configurable": {"thread_id": "blocks"}}
    ctx = {"user_id": "u2", "respond": False}
    memory.graph.invoke({"messages": [{"role": "user", "content": [{"type": "text", "text": "猫の名前はモカ"},
                                                                  {"type": "image", "url": "https://x/y.png"}]}]},
                        config, context=ctx)
    turns = memory.graph.get_state(config).values["turns"]
    assert turns[-1]["text"] == "猫の名前はモカ"
    before = memory.graph.get_state(config).values
    with pytest.raises(InvalidInput):
        memory.graph.invoke({"messages": [{"role": "user", "content": [{"type": "image", "url": "https://x"}]}]},
                            config, context=ctx)
    assert memory.graph.get_state(config).values == before
