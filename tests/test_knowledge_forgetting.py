"""Knowledge fades when nothing uses it (nodes/knowledge/forgetting.py, the notes' synaptic homeostasis):
idle 90 days and recalled fewer than 3 times → low activity (daily); 60 more days untouched → forgotten
(monthly): recall no longer finds it and its tiers drop it, the archive row stays. Current facts about the
user, and facts from a protected memory, are never forgotten; saying it again brings it back."""

from __future__ import annotations

from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.manage import list_knowledge
from lumina_memory.nodes.retrieval.recall import recall

DAY = 86_400.0
USER = "mika"
T0 = 1_777_593_600.0  # 2026-05-01 09:00 Asia/Tokyo


def _day(day: int, text: str, tag: str) -> list[dict]:
    return [{"user_id": USER, "speaker": speaker, "text": line, "source_id": f"{tag}:{i}",
             "ts": T0 + day * DAY + i * 60}
            for i, (speaker, line) in enumerate((("user", text), ("lumina", "そうなんだ"), ("user", "うん、そうなの")))]


def _tell(mem) -> None:
    replay(mem.graph, USER, _day(0, "コーヒーが大好き！毎朝飲んでるよ", "a"))
    replay(mem.graph, USER, _day(3, "妹の美咲はテニスが好きなんだ", "b"))
    replay(mem.graph, USER, _day(10, "最近コーヒーやめて紅茶にしたの", "c"))


def _by_value(services) -> dict[str, dict]:
    return {f"{r['subject']}:{r['attribute']}:{r['value']}:{r['polarity']}": r
            for r in services.stores.archive.knowledge.items(USER, history=True)}


def _find(rows: dict[str, dict], *words: str) -> dict:
    [row] = [r for key, r in rows.items() if all(w in key for w in words)]
    return row


def _in_tiers(services, item_id: str) -> tuple[bool, bool]:
    point = item_id in services.stores.knowledge.items_of(USER, [item_id])
    node = any(k["item_id"] == item_id for k in services.stores.graph.knowledge(USER))
    return point, node


def test_idle_knowledge_is_forgotten_by_the_monthly_step_and_the_profile_stays(memory_factory):
    mem = memory_factory()
    services = mem.services
    _tell(mem)
    rows = _by_value(services)
    coffee = _find(rows, "user", "コーヒー", "positive")
    tea = _find(rows, "user", "紅茶")
    sister = _find(rows, "テニス")
    assert coffee["status"] == "superseded" and tea["status"] in ("current", "coexisting")
    assert sister["subject"] != "user"
    assert _in_tiers(services, coffee["item_id"]) == (True, True)

    # 100 days on: idle for 90 (never recalled): the superseded coffee and the sister's tennis go low; the
    # user's current tea is protected.
    report = run_maintenance(services, now=T0 + 100 * DAY)
    assert report["knowledge_daily"]["low_activity"] == 2
    assert report["knowledge_monthly"]["knowledge_forgotten"] == 0  # not low for 60 days yet
    # Another 70 days: a new month, still untouched → forgotten.
    report = run_maintenance(services, now=T0 + 170 * DAY)
    assert report["knowledge_monthly"]["knowledge_forgotten"] == 2
    after = _by_value(services)
    for row in (coffee, sister):
        assert after[next(k for k, r in after.items() if r["item_id"] == row["item_id"])]["forgotten_at"] is not None
        assert _in_tiers(services, row["item_id"]) == (False, False)  # its point and node went
    assert _find(after, "紅茶")["forgotten_at"] is None and _in_tiers(services, tea["item_id"]) == (True, True)

    # The record keeps them: `knowledge --all` lists them with forgotten_at; the current view and recall do not.
    listed = {k["item_id"]: k for k in list_knowledge(services, USER, history=True)}
    assert listed[sister["item_id"]]["forgotten_at"] is not None
    assert sister["item_id"] not in {k["item_id"] for k in list_knowledge(services, USER)}
    asked = recall(services, USER, "美咲は何が好き？", purpose="question", now_ts=T0 + 171 * DAY)
    assert sister["item_id"] not in {i.get("item_id") for i in asked if i["kind"] == "knowledge"}
    asked = recall(services, USER, "前は何が好きだった？", purpose="question", now_ts=T0 + 171 * DAY)
    assert coffee["item_id"] not in {i.get("item_id") for i in asked if i["kind"] == "knowledge"}

    # Said again: it is remembered again, in every tier.
    replay(mem.graph, USER, _day(172, "妹の美咲はテニスが好きなんだ", "d"))
    [again] = services.stores.archive.knowledge.items(USER, item_ids=[sister["item_id"]])
    assert again["forgotten_at"] is None and again["status"] == sister["status"]  # merged into: one fact, both times
    assert len(again["episode_ids"]) == 2 and _in_tiers(services, sister["item_id"]) == (True, True)


def test_recalled_knowledge_stays_active(memory_factory):
    mem = memory_factory()
    services = mem.services
    _tell(mem)
    sister = _find(_by_value(services), "テニス")
    for day in (20, 40, 60):  # recalled three times: never of low activity
        items = recall(services, USER, "美咲は何が好き？", purpose="question", now_ts=T0 + day * DAY)
        assert sister["item_id"] in {i.get("item_id") for i in items if i["kind"] == "knowledge"}
    table = services.stores.archive.knowledge
    assert run_maintenance(services, now=T0 + 200 * DAY)["knowledge_daily"]["low_activity"] == 1  # coffee only
    assert run_maintenance(services, now=T0 + 400 * DAY)["knowledge_monthly"]["knowledge_forgotten"] == 1
    assert table.items(USER, item_ids=[sister["item_id"]])[0]["forgotten_at"] is None
    # One recall after being marked low clears the mark: the monthly step spares it.
    mem2 = memory_factory()
    _tell(mem2)
    s2 = mem2.services
    assert run_maintenance(s2, now=T0 + 100 * DAY)["knowledge_daily"]["low_activity"] == 2
    recall(s2, USER, "美咲は何が好き？", purpose="question", now_ts=T0 + 101 * DAY)
    assert run_maintenance(s2, now=T0 + 170 * DAY)["knowledge_monthly"]["knowledge_forgotten"] == 1  # coffee


def test_a_fact_from_a_protected_memory_is_never_forgotten(memory_factory):
    from lumina_memory.nodes.lifecycle.manage import set_protected

    mem = memory_factory()
    services = mem.services
    _tell(mem)
    sister = _find(_by_value(services), "テニス")
    [episode] = sister["episode_ids"]
    set_protected(services, USER, episode, True)
    assert run_maintenance(services, now=T0 + 100 * DAY)["knowledge_daily"]["low_activity"] == 1  # coffee only
    assert run_maintenance(services, now=T0 + 170 * DAY)["knowledge_monthly"]["knowledge_forgotten"] == 1
    assert services.stores.archive.knowledge.items(USER, item_ids=[sister["item_id"]])[0]["forgotten_at"] is None


def test_forgetting_off_forgets_nothing(memory_factory):
    from lumina_memory.nodes.knowledge.params import KnowledgeParams

    mem = memory_factory(knowledge=KnowledgeParams(forget_enabled=False))
    _tell(mem)
    assert run_maintenance(mem.services, now=T0 + 100 * DAY)["knowledge_daily"]["low_activity"] == 0
    assert run_maintenance(mem.services, now=T0 + 170 * DAY)["knowledge_monthly"]["knowledge_forgotten"] == 0


def test_a_graph_down_during_forgetting_leaves_the_removal_owed_then_done_once(memory_factory, monkeypatch):
    """The monthly step commits the forgetting in the archive first; the tiers' removal is owed like any
    derived write, and the next sync (a flush, start-up recovery) does it."""
    from lumina_memory.nodes.knowledge.tiers import sync_knowledge_tiers
    from lumina_memory.stores.errors import StoreUnavailable

    mem = memory_factory()
    services = mem.services
    _tell(mem)
    sister = _find(_by_value(services), "テニス")
    run_maintenance(services, now=T0 + 100 * DAY)
    graph = services.stores.graph

    def down(*_args, **_kwargs):
        raise StoreUnavailable("graph", "down for the test")

    with monkeypatch.context() as patch:
        patch.setattr(graph, "delete_knowledge", down)
        report = run_maintenance(services, now=T0 + 170 * DAY)
    assert report["knowledge_monthly"]["knowledge_forgotten"] == 2
    table = services.stores.archive.knowledge
    assert table.items(USER, item_ids=[sister["item_id"]])[0]["forgotten_at"] is not None
    assert table.unsynced_count(USER) >= 1  # owed: the graph still has what it should drop
    assert sync_knowledge_tiers(services, USER)["synced"] >= 1
    assert table.unsynced_count(USER) == 0 and _in_tiers(services, sister["item_id"]) == (False, False)
    assert sync_knowledge_tiers(services, USER) == {"synced": 0, "waiting": 0}  # nothing twice
