"""A5 on `langgraph dev`: the server's timer (langgraph.json http.app → graphs.idle_server) encodes a quiet
thread's open segment with no cron and no next message; a thread still within the idle gap is left open."""

from __future__ import annotations

import asyncio
import time

import pytest
from langgraph_sdk import get_client

from lumina_memory.stores.redis_server import stop_server

from .test_langgraph_server import Server, _turn

pytestmark = pytest.mark.slow


async def _scenario(url: str) -> dict:
    client = get_client(url=url)
    seen: dict = {}
    now = time.time()
    quiet = (await client.threads.create())["thread_id"]
    live = (await client.threads.create())["thread_id"]
    for thread, user, ts in ((quiet, "aoi", now - 3600), (live, "sora", now + 3600)):
        for i, text in enumerate(["来週の金曜に引っ越しの見積もりが来る", "段ボールを二十箱たのんでおいた"]):
            await client.runs.wait(thread, "lumina_memory", input=_turn(user, "a", i, "user", text, ts + i * 2),
                                   context={"user_id": user, "respond": False}, raise_error=True)
    deadline = time.monotonic() + 120  # stops a hung server only: the timer runs every second
    while time.monotonic() < deadline:
        state = await client.threads.get_state(quiet)
        if not (state["values"].get("turns") or []):
            break
        await asyncio.sleep(0.5)
    seen["quiet_turns"] = (await client.threads.get_state(quiet))["values"].get("turns")
    seen["quiet_pending"] = (await client.threads.get_state(quiet))["values"].get("pending")
    seen["live_turns"] = len((await client.threads.get_state(live))["values"].get("turns") or [])
    seen["recall"] = await client.runs.wait(None, "lumina_memory", input=_turn("aoi", "b", 0, "user",
                                            "引っ越しの準備はどうなってた？", now + 60),
                                            context={"user_id": "aoi"}, raise_error=True)
    return seen


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    # Idle after 5 s of no writes (the server's clock) and no turns (the conversation's): the quiet thread's turns
    # are an hour old, the live one's an hour ahead.
    env = {"LUMINA_IDLE_SWEEP_SECONDS": "1", "LUMINA_BOUNDARY_IDLE_SECONDS": "5", "LUMINA_LOG_LEVEL": "INFO"}
    server = Server(tmp_path_factory.mktemp("idle-data"), tmp_path_factory.mktemp("idle-cwd"), env)
    try:
        server.start()
        result = asyncio.run(_scenario(server.url))
        result["log"] = server.tail(400)
        yield result
    finally:
        try:
            server.stop()
        finally:
            stop_server(server.settings)


def test_the_servers_timer_encodes_a_quiet_thread_and_leaves_a_live_one_open(seen):
    assert seen["quiet_turns"] == [], seen["log"][-2000:]
    assert seen["live_turns"] == 2
    assert "idle sweep" in seen["log"]
    recalled = seen["recall"].get("recalled") or []
    assert any("段ボール" in item.get("text", "") or "引っ越し" in item.get("text", "") for item in recalled)
