"""Issue 19: index work in the background, never inside a recall. A process that starts (the LangGraph
server, through the process-wide services) builds its recently active users' recall indexes in a thread, so
their first recall finds them ready."""

from __future__ import annotations

import time

from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.warm import warm_at_start
from lumina_memory.stores.ids import turn_id
from lumina_memory.stores.models import Turn


def _turns(user: str, texts: list[str]) -> list[Turn]:
    return [Turn(turn_id=turn_id(user, f"D:{n}"), source_id=f"D:{n}", user_id=user, segment_id=f"{user}-s1",
                 speaker="user" if n % 2 == 0 else "lumina", text=t, ts=1000.0 + 60 * n) for n, t in enumerate(texts)]


def test_recently_active_users_are_warmed_in_the_background_and_their_first_recall_builds_nothing(memory):
    services = memory.services
    archive = services.stores.archive
    archive.put_turns(_turns("alice", ["I adopted a cat named Mocha.", "What a lovely name!"]))
    time.sleep(0.01)  # archived later: bob is the more recently active user
    archive.put_turns(_turns("bob", ["ボブは京都で抹茶を買った。", "いいですね！"]))
    assert archive.recent_users(5) == ["bob", "alice"] and archive.recent_users(1) == ["bob"]

    warm = warm_at_start(services, 1)
    assert warm is not None and warm.users == ["bob"]
    warm.thread.join(60)
    assert warm.summary()["warmed"] == 1 and warm.summary()["state"].startswith("done")
    assert "bob" in services.turn_index._users and "alice" not in services.turn_index._users
    builds = services.turn_index.rebuilds
    items = recall(services, "bob", "抹茶はどこで買った？", purpose="question", budget=200)
    assert services.turn_index.rebuilds == builds  # ready: nothing built inside the recall
    assert any("抹茶" in item["text"] for item in items)
    recall(services, "alice", "What is the cat called?", purpose="question", budget=200)
    assert services.turn_index.rebuilds == builds + 1  # not warmed: its first recall built it

    assert warm_at_start(services, 0) is None  # off


def test_the_process_wide_services_start_the_warm_up_and_stats_report_it(memory_factory, monkeypatch):
    import lumina_memory.nodes.services as services_module
    from lumina_memory.graphs.inspect import tier_stats

    seeded = memory_factory()
    seeded.services.stores.archive.put_turns(_turns("carol", ["Carol plays the cello on Sundays."]))
    settings = seeded.settings
    seeded.close()  # the data directory is one process's at a time
    monkeypatch.setattr(services_module, "default_settings", lambda: settings.model_copy(update={"recall_warm_users": 4}))
    services_module.set_default_services(None)
    try:
        services = services_module.default_services()
        warm = services.startup_warm
        assert warm is not None and warm.users == ["carol"]
        warm.thread.join(60)
        assert "carol" in services.turn_index._users
        assert tier_stats(services)["startup_warm"] == {"users": 1, "warmed": 1, "state": warm.summary()["state"]}
    finally:
        current = services_module._default
        services_module.set_default_services(None)
        if current is not None:
            current.close()


def test_a_user_erased_while_being_warmed_leaves_nothing_in_the_process(memory, monkeypatch):
    """Erasure walks the warm-up's list too (graphs.registry "cache.startup_warm"): a user erased before their
    turn is not warmed, and one erased in the middle of their warm-up has what it built after the erasure dropped."""
    import threading

    from lumina_memory.graphs.erase import erase_plan, erase_user
    from lumina_memory.graphs.registry import open_registry
    from lumina_memory.nodes.retrieval import warm as warm_module

    services = memory.services
    archive = services.stores.archive
    archive.put_turns(_turns("dora", ["Dora keeps bees on the roof.", "How many hives?"]))
    time.sleep(0.01)
    archive.put_turns(_turns("erin", ["Erin bakes sourdough every Saturday.", "Nice!"]))
    entered, release = threading.Event(), threading.Event()
    real = warm_module.prepare_excerpts

    def slow_excerpts(index, *args):
        if index.turns and index.turns[0].user_id == "erin":
            entered.set()
            assert release.wait(30)
        return real(index, *args)

    monkeypatch.setattr(warm_module, "prepare_excerpts", slow_excerpts)
    services.startup_warm = warm = warm_at_start(services, 2)
    assert warm.users == ["erin", "dora"]
    assert entered.wait(30)  # erin's indexes are built; the warm-up is in its last step
    for user in ("erin", "dora"):  # dora: erased before her turn
        erase_user(services, user, erase_plan(services, user)["token"])
    release.set()
    warm.thread.join(60)
    assert warm.done == 0 and warm.users == []
    with open_registry(services) as places:
        left = {(p.name, u): p.count(u) for p in places for u in ("erin", "dora") if p.name.startswith("cache.")
                and p.name not in ("cache.embedder", "cache.text_derivations")}
    assert ("cache.startup_warm", "erin") in left and ("cache.recall_reads", "erin") in left
    assert not any(left.values()), left
    assert "erin" not in services.turn_index._users and "dora" not in services.turn_index._users
