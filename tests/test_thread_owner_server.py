"""Smoke test through `langgraph dev` and langgraph_sdk, as Studio drives it: the caller picks thread_id and
user_id, so bob can aim a run at alice's thread. It is refused and leaves nothing in her thread."""

from __future__ import annotations

import asyncio
import json

from langgraph_sdk import get_client

from lumina_memory.stores.redis_server import stop_server

from .test_langgraph_server import Server

SECRET = "アリスの秘密：合言葉は青いペンギン"
BOB = "ZQXBOBWASHERE ペンギンの合言葉は？"


def test_bob_cannot_run_on_alices_thread_through_the_server(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("owner-data"), tmp_path_factory.mktemp("owner-cwd"))

    async def talk():
        client = get_client(url=server.url)
        aid = (await client.assistants.search(graph_id="lumina_memory"))[0]["assistant_id"]
        thread = (await client.threads.create())["thread_id"]
        await client.runs.wait(thread, aid, input={"turn": {"speaker": "user", "text": SECRET, "ts": 1_790_000_000}},
                               context={"user_id": "alice", "respond": False}, raise_error=True)
        before = await client.threads.get_history(thread, limit=100)
        outcomes = []
        for bad in ({"messages": [{"type": "human", "content": BOB}]}, {"flush": True}):
            run = await client.runs.create(thread, aid, input=bad, context={"user_id": "bob"})
            await client.runs.join(thread, run["run_id"])
            outcomes.append(await client.runs.get(thread, run["run_id"]))
        # a refused input of alice's own leaves nothing either
        run = await client.runs.create(thread, aid, input={"turn": {"speaker": "mallory", "text": BOB, "ts": 1}},
                                       context={"user_id": "alice", "respond": False})
        await client.runs.join(thread, run["run_id"])
        outcomes.append(await client.runs.get(thread, run["run_id"]))
        after = await client.threads.get_history(thread, limit=100)
        state = await client.threads.get_state(thread)
        return before, after, state, outcomes

    try:
        server.start()
        before, after, state, outcomes = asyncio.run(talk())
    finally:
        try:
            server.stop()
        finally:
            stop_server(server.settings)
    assert [o["status"] for o in outcomes] == ["error", "error", "error"], outcomes
    assert len(after) == len(before)  # no checkpoint for any refused run
    assert state["values"]["owner"] == "alice"
    assert "ZQXBOBWASHERE" not in json.dumps(after, ensure_ascii=False)
    assert [t["text"] for t in state["values"]["turns"]] == [SECRET]  # not flushed by bob
    log = server.log.read_text(errors="replace")
    assert "thread_id" in log and "not found" in log
