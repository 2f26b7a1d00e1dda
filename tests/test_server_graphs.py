"""Every graph of langgraph.json run through `langgraph dev` as a deployment calls it (runs.wait with input and
context): ``maintenance`` (a cron's run, with and without a user, its scheduled backups included), ``erase``
(plan, then confirm), ``lumina_memory`` and ``agents`` (one agent's events in; its retrieval, working memory and
prompt out); bad input is answered with a named error in the run's result.

The server's LuminaStore (langgraph.json ``store``) holds the data directory's embedded engines for the server's
lifetime: a step that needs the store inside a run (a backup, an erasure) must use that one, not open another.
One server for the module: each run costs about a second of queue polling.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from langgraph_sdk import get_client

from lumina_memory.stores.redis_server import stop_server

from .test_langgraph_server import Server, _turn

T0 = float(int(time.time() - 86_400))
FAILED = "__error__"  # where runs.wait puts a failed run's error (raise_error=False)


async def _wait(client, graph: str, input: dict, context: dict | None = None, thread: str | None = None) -> dict:
    return await client.runs.wait(thread, graph, input=input, context=context or {}, raise_error=False)


async def _scenario(url: str) -> dict:
    client = get_client(url=url)
    seen: dict = {}
    thread = (await client.threads.create())["thread_id"]
    for i, text in enumerate(["My sister Mireille grows lavender in Provence.", "She sends me a bag every July."]):
        await client.runs.wait(thread, "lumina_memory", input=_turn("alice", "a", i, "user", text, T0 + 20 * i),
                               context={"user_id": "alice", "respond": False}, raise_error=True)
    await client.runs.wait(thread, "lumina_memory", input={"flush": True},
                           context={"user_id": "alice", "respond": False}, raise_error=True)
    await client.store.put_item(("memories", "alice"), "lavender", {"text": "Alice's sister grows lavender"})
    try:  # a look-alike of her namespace through the server's /store API
        await client.store.put_item(("memories", "alice\n"), "lavender", {"text": "Alice's sister grows lavender"})
        seen["lookalike_put"] = "accepted"
    except Exception as exc:  # noqa: BLE001 - the SDK's HTTP error; its text is asserted
        seen["lookalike_put"] = f"{type(exc).__name__}: {exc}"
    seen["namespaces"] = (await client.store.list_namespaces(prefix=["memories"]))["namespaces"]

    # A deployment's cron: no input to speak of, the run's context (a user or none).
    seen["maintenance"] = await _wait(client, "maintenance", {}, {})
    seen["maintenance_alice"] = await _wait(client, "maintenance", {"force": True}, {"user_id": "alice"})
    seen["maintenance_bad_user"] = await _wait(client, "maintenance", {}, {"user_id": "alice\n"})

    # One agent's turns of a simulation (the ``agents`` graph): events in, then WM, retrieval and prompt out.
    agent_thread = (await client.threads.create())["thread_id"]
    seen["agents_first"] = await _wait(client, "agents", {"agent_id": "agent_042", "now": T0, "events": [
        {"type": "conversation", "content": "Oren asked me to bring iron ore to the tower", "participants": ["agent_7"]},
        {"type": "observation", "content": "A wolf was drinking at the river"}],
        "wm_patch": {"current_action": {"type": "walking", "target": "tower"}, "active_goals": ["bring iron ore"]}},
        thread=agent_thread)
    seen["agents_second"] = await _wait(client, "agents", {
        "agent_id": "agent_042", "now": T0 + 600, "wm_patch": {"current_action": None},
        "query": "what did Oren ask me?", "module": "social"}, thread=agent_thread)
    seen["agents_other"] = await _wait(client, "agents", {"agent_id": "agent_043", "now": T0 + 600,
                                                          "query": "what did Oren ask me?"})
    seen["agents_bad"] = await _wait(client, "agents", {"agent_id": "../agent_042", "query": "x"})

    seen["erase_no_user"] = await _wait(client, "erase", {})
    seen["memory_bad_user"] = await _wait(client, "lumina_memory", _turn("x", "a", 0, "user", "hello", T0),
                                          {"user_id": "../x", "respond": False})
    seen["plan"] = await _wait(client, "erase", {"user_id": "alice"})
    token = seen["plan"].get("token")
    seen["erased"] = await _wait(client, "erase", {"user_id": "alice", "token": token})
    seen["plan_after"] = await _wait(client, "erase", {"user_id": "alice"})
    seen["store_after"] = await client.store.search_items(("memories", "alice"))
    return seen


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("graphs-data"), tmp_path_factory.mktemp("graphs-cwd"))
    try:
        server.start()
        seen = asyncio.run(_scenario(server.url))
        seen["log"] = "\n".join(l for l in server.tail(400).splitlines() if "Error" in l or "Traceback" in l)[-3000:]
        yield seen
    finally:
        try:
            server.stop()
        finally:
            stop_server(server.settings)


def _error(result: dict) -> dict:
    assert FAILED in result, f"the run did not fail: {str(result)[:300]}"
    return result[FAILED]


def _ok(result: dict, log: str) -> dict:
    assert FAILED not in result, f"the run failed: {result[FAILED]}\n{log}"
    return result


def test_a_cron_run_of_maintenance_takes_its_scheduled_backups_through_the_servers_store(runs):
    report = _ok(runs["maintenance"], runs["log"])["report"]
    backups = report["scheduled_backups"]
    assert sorted(backups["due"]) == ["archive", "redis", "vectors"] and backups["snapshot"]
    assert {"record_settings", "idle_segments", "prune_backups", "retention"} <= set(report)


def test_maintenance_for_one_user_runs_every_step_and_backs_up_again(runs):
    report = _ok(runs["maintenance_alice"], runs["log"])["report"]
    assert report["scheduled_backups"]["snapshot"] and report["scheduled_backups"]["snapshot"] != (
        runs["maintenance"]["report"]["scheduled_backups"]["snapshot"])
    assert "retention" in report


def test_bad_input_is_answered_with_a_named_error(runs):
    bad_user = _error(runs["maintenance_bad_user"])
    # The context is checked as the run starts (MaintenanceContext): pydantic names the field and our reason.
    assert bad_user["error"] == "ValidationError", bad_user
    assert "user_id" in bad_user["message"] and "is not allowed" in bad_user["message"], bad_user
    no_user = _error(runs["erase_no_user"])
    assert no_user["error"] == "InvalidInput" and "user_id: is missing" in no_user["message"], no_user
    memory = _error(runs["memory_bad_user"])
    assert memory["error"] == "InvalidInput" and "user_id" in memory["message"], memory


def test_the_servers_store_refuses_a_lookalike_of_a_users_namespace(runs):
    # A 400 naming the reason (the server's answer to a ValueError, InvalidInput is one).
    assert runs["lookalike_put"].startswith("BadRequestError") and "names a user" in runs["lookalike_put"]
    assert [tuple(ns) for ns in runs["namespaces"]] == [("memories", "alice")]


def test_an_erasure_through_the_server_plans_confirms_and_reaches_the_scheduled_backups(runs):
    plan = _ok(runs["plan"], runs["log"])
    assert plan["counts"]["store.items"] == 1 and plan["counts"]["archive.turn_archive"] == 2
    erased = _ok(runs["erased"], runs["log"])
    assert erased["removed"]["store.items"] == 1 and erased["removed"]["archive.turn_archive"] == 2
    # Both maintenance snapshots held her turns: the erasure rewrote them.
    (per_snapshot,) = erased["backups"].values()
    assert len(per_snapshot) == 2 and all(n > 0 for n in per_snapshot.values()), per_snapshot
    after = _ok(runs["plan_after"], runs["log"])["counts"]
    assert {k: v for k, v in after.items() if v and k != "cache.embedder"} == {}
    assert runs["store_after"]["items"] == []


def test_the_agents_graph_takes_events_and_answers_with_retrieval_wm_and_prompt(runs):
    first = _ok(runs["agents_first"], runs["log"])
    assert len(first["stored"]) == 2 and first["wm"]["active_goals"] == ["bring iron ore"]
    assert first["retrieved"] == [] and first["prompt"] == ""  # no query: nothing retrieved
    second = _ok(runs["agents_second"], runs["log"])
    assert "current_action" not in second["wm"] and second["wm"]["active_goals"] == ["bring iron ore"]
    top = second["retrieved"][0]
    assert top["content"] == "Oren asked me to bring iron ore to the tower" and top["layer"] == "stm"
    assert "bring iron ore" in second["prompt"] and "Oren asked me" in second["prompt"]
    assert second["prompt_tokens"]["memories"] > 0
    assert len(second["stored"]) == 2  # the thread's stored ids accumulate; this run stored none itself


def test_the_agents_graph_shows_an_agent_only_its_own_memory_and_names_a_bad_id(runs):
    other = _ok(runs["agents_other"], runs["log"])
    assert all("Oren" not in r["content"] for r in other["retrieved"]) and "Oren" not in other["prompt"]
    bad = _error(runs["agents_bad"])
    assert bad["error"] == "InvalidInput" and "agent" in bad["message"], bad
