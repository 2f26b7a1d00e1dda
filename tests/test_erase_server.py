"""Erasing a user on a LangGraph server: the `erase` graph (langgraph.json) run through `langgraph dev`.

Alice and Bob each tell a secret sentence on two threads of their own (one flushed down the tiers, one left
open in the server's checkpoints), keep an item in the server's store and ask a question recalling it. The
`erase` graph plans (counts + token), refuses a wrong token and a run on a conversation's thread, then erases
Alice. Through the server her threads are gone (404) and nothing recalls or finds her text; Bob's threads and
memories are whole. The server is stopped and the raw bytes of its files (`.langgraph_api/`) and of the data
dir are scanned: none holds Alice's sentences, while the same scan finds Bob's.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError

from lumina_memory.stores.places.server_threads import ServerThreadsPlace
from lumina_memory.stores.redis_server import stop_server
from lumina_memory.stores.user_data import missing_methods

from .test_langgraph_server import Server, _turn
from .test_residue import _decoded

T0 = float(int(time.time() - 86_400))
# Plain words: the PII redaction (on by default) would rewrite digits, e-mails or long tokens.
SCRIPTS = {
    "alice": {
        "secret": "Between us, the spare house key hides inside the blue heron statue by the mill pond, Zorvakel.",
        "open": "Nobody knows that I keep my diary under the loose floorboard in the attic, Zorvakel.",
        "question": "Where does the spare house key hide?",
    },
    "bob": {
        "secret": "Between us, my grandmother's ring is wrapped in a wool sock behind the piano, Quintabrix.",
        "open": "Nobody knows that I sing opera in the shower every morning, Quintabrix.",
        "question": "Where is my grandmother's ring hidden?",
    },
}
MARKER = {"alice": "Zorvakel", "bob": "Quintabrix"}


def _needles(user: str) -> list[bytes]:
    script = SCRIPTS[user]
    return [script["secret"].encode(), script["open"].encode(), MARKER[user].encode()]


async def _run(client, thread_id, assistant_id, user: str, **input) -> dict:
    return await client.runs.wait(thread_id, assistant_id, input=input, raise_error=True,
                                  context={"user_id": user, "respond": False})


async def _chat(client, aid: str, user: str) -> list[str]:
    """The secret in a segment sent down the tiers (thread 1), another left open (thread 2), a store item."""
    script = SCRIPTS[user]
    told = (await client.threads.create())["thread_id"]
    lines = [("user", script["secret"]), ("lumina", "I will keep that between us, promise."),
             ("user", "Thank you, it matters a lot to me.")]
    for i, (speaker, text) in enumerate(lines):
        await _run(client, told, aid, user, **_turn(user, "a", i, speaker, text, T0 + 20 * i))
    await _run(client, told, aid, user, flush=True)
    left_open = (await client.threads.create())["thread_id"]
    await _run(client, left_open, aid, user, **_turn(user, "b", 0, "user", script["open"], T0 + 3600))
    await client.store.put_item(("memories", user), "confided", {"text": script["secret"]})
    return [told, left_open]


async def _ask(client, aid: str, user: str) -> tuple[str, dict]:
    """A question as a chat message on a new thread, answered with recall."""
    thread = (await client.threads.create())["thread_id"]
    message = {"type": "human", "content": SCRIPTS[user]["question"]}
    answer = await client.runs.wait(thread, aid, input={"messages": [message]}, raise_error=True,
                                    context={"user_id": user, "character": "clarisse", "purpose": "question"})
    return thread, answer


async def _refused(coro) -> str:
    try:
        await coro
    except Exception as exc:  # the SDK raises a plain Exception("<error>: <message>") for a failed run
        return str(exc)
    return "not refused"


async def _exists(client, thread_id: str) -> bool:
    try:
        await client.threads.get(thread_id)
    except NotFoundError:
        return False
    return True


async def _scenario(url: str) -> dict:
    client = get_client(url=url)
    aid = (await client.assistants.search(graph_id="lumina_memory"))[0]["assistant_id"]
    eid = "erase"  # the graph's name serves as its assistant id, as in the README
    seen: dict = {}
    threads = dict(zip(SCRIPTS, await asyncio.gather(*(_chat(client, aid, u) for u in SCRIPTS))))
    for user in SCRIPTS:
        asked, seen[f"before_{user}"] = await _ask(client, aid, user)
        threads[user].append(asked)
    seen["threads"] = threads

    # The plan, on a fresh thread of its own (a thread with no state yet, like any new run's).
    own = (await client.threads.create())["thread_id"]
    seen["plan"] = await client.runs.wait(own, eid, input={"user_id": "alice"}, raise_error=True)
    seen["plan_again"] = await client.runs.wait(own, eid, input={"user_id": "alice"}, raise_error=True)
    bob_token = (await client.runs.wait(None, eid, input={"user_id": "bob"}, raise_error=True))["token"]
    seen["refusals"] = {
        "bob's token": await _refused(client.runs.wait(None, eid, input={"user_id": "alice", "token": bob_token})),
        "made up": await _refused(client.runs.wait(None, eid, input={"user_id": "alice", "token": "4102444800.00ff"})),
        "on her thread": await _refused(client.runs.wait(threads["alice"][0], eid, input={"user_id": "alice"})),
    }
    seen["after_refusals"] = {t: await _exists(client, t) for t in threads["alice"]}
    # The thread's values, as the server keeps them and erasure searches them (its metadata now names the
    # `erase` graph, which get_state would read the checkpoint with: the server sets that as a run starts).
    seen["owner_after_refusal"] = ((await client.threads.get(threads["alice"][0]))["values"] or {}).get("owner")

    seen["erased"] = await client.runs.wait(None, eid, input={"user_id": "alice", "token": seen["plan"]["token"]},
                                            raise_error=True)
    seen["plan_after"] = await client.runs.wait(None, eid, input={"user_id": "alice"}, raise_error=True)
    seen["exists"] = {u: {t: await _exists(client, t) for t in threads[u]} for u in SCRIPTS}
    seen["bob_states"] = [(await client.threads.get_state(t))["values"] for t in threads["bob"][:2]]
    seen["store"] = {u: await client.store.search_items(("memories", u), query=SCRIPTS[u]["secret"]) for u in SCRIPTS}
    for user in SCRIPTS:
        _, seen[f"after_{user}"] = await _ask(client, aid, user)
    return seen


@pytest.fixture(scope="module")
def erased(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("erase-data"), tmp_path_factory.mktemp("erase-cwd"))
    try:
        server.start()
        seen = asyncio.run(_scenario(server.url))
        server.stop()  # graceful: langgraph dev writes its .langgraph_api/ files as it stops
        seen["server"] = server
        yield seen
    finally:
        try:
            server.stop()
        finally:
            stop_server(server.settings)


def _recalled_sources(answer: dict) -> set[str]:
    return {s for r in answer["recalled"] for s in r["source_ids"]}


def _hits(root: Path, needles: list[bytes]) -> list[str]:
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files, f"nothing to scan under {root}"
    return sorted({f"{p}: {n.decode()[:30]!r}" for p in files for blob in _decoded(p.read_bytes())
                   for n in needles if n in blob})


def test_the_server_threads_place_implements_the_whole_protocol():
    assert missing_methods(ServerThreadsPlace(client=None, loop=None)) == []


def test_the_plan_counts_every_place_with_the_servers_threads(erased):
    plan = erased["plan"]
    assert plan["user_id"] == "alice" and plan["token"] and plan["expires_at"] > time.time()
    counts = plan["counts"]
    assert counts["server.threads"] == 3  # the told, the open and the question's thread
    assert counts["store.items"] == 1
    assert counts["archive.turn_archive"] >= 3 and counts["midterm.redis"] >= 1 and counts["graph"] >= 1
    # A second run on the same thread plans again: the first plan's token in the thread's state erases nothing.
    assert erased["plan_again"]["counts"] == counts and "removed" not in erased["plan_again"]


def test_a_wrong_token_or_a_conversation_thread_is_refused_before_anything_goes(erased):
    refusals = erased["refusals"]
    assert "invalid token" in refusals["bob's token"] and "not issued for user 'alice'" in refusals["bob's token"]
    assert "invalid token" in refusals["made up"]
    assert "holds a conversation" in refusals["on her thread"]
    assert all(erased["after_refusals"].values())
    assert erased["owner_after_refusal"] == "alice"  # the refused run left her thread's state as it was


def test_the_erasure_removes_her_threads_and_memories_everywhere(erased):
    removed = erased["erased"]["removed"]
    assert removed["server.threads"] == 3 and removed["store.items"] == 1
    assert {k: v for k, v in removed.items() if k != "cache.embedder"} == {
        k: v for k, v in erased["plan"]["counts"].items() if k != "cache.embedder"}
    # The embedder's cache is not filed by user (registry.EmbedderCachePlace): erasure empties it whole.
    assert {k: v for k, v in erased["plan_after"]["counts"].items() if v and k != "cache.embedder"} == {}


def test_her_threads_are_gone_and_bobs_are_whole(erased):
    assert not any(erased["exists"]["alice"].values())
    assert all(erased["exists"]["bob"].values())
    told, left_open = erased["bob_states"]
    assert told["owner"] == left_open["owner"] == "bob"
    assert [t["text"] for t in left_open["turns"]] == [SCRIPTS["bob"]["open"]]


def test_nothing_recalls_or_finds_her_text_through_the_server(erased):
    # Before: her question recalled the segment that told the secret; after: nothing of hers.
    assert "alice-a0" in _recalled_sources(erased["before_alice"])
    after = erased["after_alice"]
    assert not any(s.startswith("alice-") for s in _recalled_sources(after)), after["recalled"]
    assert MARKER["alice"] not in str(after)
    assert erased["store"]["alice"]["items"] == []
    # Bob's memories answer as before.
    assert "bob-a0" in _recalled_sources(erased["before_bob"]) and "bob-a0" in _recalled_sources(erased["after_bob"])
    assert [i["value"]["text"] for i in erased["store"]["bob"]["items"]] == [SCRIPTS["bob"]["secret"]]


def test_no_byte_on_the_servers_disk_holds_her_sentences(erased):
    server = erased["server"]
    assert server.proc.poll() is not None, "scan the files once the server has written them and stopped"
    roots = [server.workdir / ".langgraph_api", server.data_dir]
    assert [h for root in roots for h in _hits(root, _needles("alice"))] == []
    # The same scan finds Bob's sentences in the server's files and in the data dir: it would find a leak.
    for root in roots:
        assert _hits(root, _needles("bob")), root
