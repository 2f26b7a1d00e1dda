"""A11: a reply being generated is journalled; a process killed mid-reply leaves an orphan that start-up
recovers (torn last line skipped) into the activity log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from langchain_core.messages import HumanMessage

from lumina_memory.nodes.activity import recent_activity
from lumina_memory.nodes.respond import recover_replies
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.journal import Journal
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

ROOT = Path(__file__).resolve().parents[1]
REPLY = " ".join(["ルミナだよ。モカは3歳の茶トラで、窓辺で昼寝するのが好きだったね。"] * 40)

CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.nodes.services import open_services
    from tests.conftest import make_settings

    class SlowStream(GenericFakeChatModel):
        def _stream(self, *args, **kwargs):
            for chunk in super()._stream(*args, **kwargs):
                time.sleep(0.05)  # a model that takes its time: the parent kills us meanwhile
                yield chunk

    services = open_services(make_settings({data!r}, journal_flush_chars=30, journal_flush_seconds=0.2))
    services.chat_model = SlowStream(messages=iter([AIMessage({reply!r})]))
    graph = build_graph(services)
    graph.invoke({{"messages": [HumanMessage("モカのこと覚えてる？")]}}, context={{"user_id": "kim"}})
    print("finished", flush=True)
    """
)


def _text_lines(folder: Path) -> int:
    return sum(p.read_text(encoding="utf-8").count('"event": "text"') for p in folder.glob("*.jsonl")) if folder.exists() else 0


def test_a_reply_killed_mid_stream_is_recovered(tmp_path):
    data = tmp_path / "data"
    settings = make_settings(data, journal_flush_chars=30, journal_flush_seconds=0.2)
    journal = Journal.for_settings(settings)
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(root=str(ROOT), data=str(data), reply=REPLY), encoding="utf-8")
    child = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300  # generous: only a hung child ever reaches it
        while _text_lines(journal.folder) < 3 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        (orphan,) = journal.folder.glob("*.jsonl")
        assert "kim" not in orphan.name
        with orphan.open("ab") as handle:
            handle.write(b'{"event": "text", "text": "half a li')  # a torn last line
        assert journal.orphans() == [orphan]  # its process is dead

        services = open_services(settings)  # start-up recovers the orphan, before any reply
        try:
            assert not orphan.exists() and recover_replies(services) == []
            (event,) = recent_activity(services, "kim", 10, events=("reply_interrupted",))
            assert event["character"] == "lumina"
            assert event["text"] and REPLY.startswith(event["text"]) and len(event["text"]) < len(REPLY)
            assert "half a li" not in event["text"] and event["chars"] == len(event["text"])
            assert services.stores.archive.counts("kim")["turns"] == 0  # the interrupted run wrote no turn
        finally:
            services.close()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        stop_server(settings)


def test_a_completed_reply_leaves_no_journal(memory):
    config = {"configurable": {"thread_id": "j"}}
    out = memory.graph.invoke({"messages": [HumanMessage("こんばんは、ノクス")]}, config, context={"user_id": "lee"})
    journal = Journal.for_settings(memory.settings)
    assert out["reply"] and journal.folder.exists() and list(journal.folder.iterdir()) == []
    assert [e["event"] for e in recent_activity(memory.services, "lee", 10)][-1] == "reply"


def test_flush_by_size_and_by_time(tmp_path):
    journal = Journal(tmp_path / "journal", flush_seconds=3_600, flush_chars=10)
    entry = journal.open("u", "reply-1", character="nox")
    entry.write("abc")
    assert journal.read(entry.path)["text"] == ""  # buffered: under 10 chars, under an hour
    entry.write("defghijk")
    assert journal.read(entry.path)["text"] == "abcdefghijk"
    timed = Journal(tmp_path / "journal2", flush_seconds=0.001, flush_chars=10_000).open("u", "reply-2")
    time.sleep(0.01)
    timed.write("x")
    assert journal.read(timed.path)["text"] == "x"
    # a live process's replies are not orphans; the place counts and erases them per user
    assert journal.orphans() == [] and journal.count("u") == 1 and journal.count("u2") == 0
    assert journal.erase("u") == 1 and not entry.path.exists()
    redacting = journal.open("v", "reply-3", redact=lambda t: t.replace("secret", "[secret]"))
    redacting.write("my secret")
    redacting.flush()
    assert journal.read(redacting.path)["text"] == "my [secret]"
    redacting.finish()
    assert journal.count("v") == 0


def test_a_model_failing_mid_reply_is_recorded_at_once(memory):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    class Breaks(GenericFakeChatModel):
        def _stream(self, *args, **kwargs):
            for n, chunk in enumerate(super()._stream(*args, **kwargs)):
                if n == 3:
                    raise ConnectionError("stream cut")
                yield chunk

    memory.services.chat_model = Breaks(messages=iter([AIMessage("one two three four five six")]))
    memory.settings.journal_flush_chars = 1
    config = {"configurable": {"thread_id": "breaks"}}
    try:
        memory.graph.invoke({"messages": [HumanMessage("ねえ、聞いて")]}, config, context={"user_id": "max"})
    except ConnectionError:
        pass
    else:
        raise AssertionError("the model's error must reach the caller")
    (event,) = recent_activity(memory.services, "max", 10, events=("reply_interrupted",))
    assert event["text"] == "one two" and event["character"]  # the three chunks before the error
    assert list(Journal.for_settings(memory.settings).folder.iterdir()) == []
