"""Retention of knowledge items (S7, ``LUMINA_RETENTION_KNOWLEDGE_DAYS``): a fact last said longer ago than the
setting leaves the archive, its vector and its graph node; one said again since stays (its restatement is
when it was last said). Real stores; the conversation's clock passed in, as for turns and segments."""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.manage import list_knowledge
from lumina_memory.nodes.retention import enforce_retention
from lumina_memory.stores.errors import StoreUnavailable

# The same little story as the forgetting tests: coffee (day 0), the sister's tennis (day 3), tea (day 10).
from .test_knowledge_forgetting import DAY, T0, USER, _day, _in_tiers, _tell


def _rows(services) -> dict[str, dict]:
    return {r["item_id"]: r for r in services.stores.archive.knowledge.items(USER, history=True)}


def _find(rows: dict[str, dict], *words: str) -> dict:
    [row] = [r for r in rows.values()
             if all(w in f"{r['subject']}:{r['attribute']}:{r['value']}:{r['polarity']}" for w in words)]
    return row


def test_items_last_said_before_the_retention_leave_every_tier(memory_factory):
    mem = memory_factory(retention_knowledge_days=20)
    services = mem.services
    _tell(mem)
    rows = _rows(services)
    coffee, sister, tea = _find(rows, "コーヒー", "positive"), _find(rows, "テニス"), _find(rows, "紅茶")
    assert coffee["status"] == "superseded" and _in_tiers(services, sister["item_id"]) == (True, True)

    # Day 25: what was said on days 0 and 3 (coffee, the sister and her tennis) is older than 20 days; what was
    # said on day 10 (tea, no more coffee) is not.
    old = {i for i, r in rows.items() if r["said_at"] < T0 + 5 * DAY}
    assert {coffee["item_id"], sister["item_id"]} <= old and tea["item_id"] not in old
    report = enforce_retention(services, now=T0 + 25 * DAY)
    assert report["knowledge"] == {"days": 20, "items": len(old), "users": 1, "waiting": 0}
    left = _rows(services)
    assert not old & left.keys() and left.keys() == rows.keys() - old  # not a record either: gone
    for row in (coffee, sister):
        assert _in_tiers(services, row["item_id"]) == (False, False)
    assert tea["item_id"] in left and _in_tiers(services, tea["item_id"]) == (True, True)
    assert tea["item_id"] in {k["item_id"] for k in list_knowledge(services, USER)}
    assert not old & {k["item_id"] for k in list_knowledge(services, USER, history=True)}
    # Nothing more to do the next time.
    assert enforce_retention(services, now=T0 + 25 * DAY)["knowledge"]["items"] == 0


def test_a_fact_said_again_is_kept_by_its_last_saying(memory_factory):
    mem = memory_factory(retention_knowledge_days=20)
    services = mem.services
    _tell(mem)
    replay(mem.graph, USER, _day(18, "妹の美咲はテニスが好きなんだ", "d"))  # restated: merged into the first
    rows = _rows(services)
    sister = _find({k: r for k, r in rows.items() if r["status"] != "merged"}, "テニス")
    restated = {r["superseded_by"] for r in rows.values() if r["status"] == "merged"}
    assert sister["item_id"] in restated and sister["said_at"] < T0 + 5 * DAY
    coffee = _find(rows, "コーヒー", "positive")
    report = enforce_retention(services, now=T0 + 25 * DAY)
    left = _rows(services)
    assert report["knowledge"]["items"] == len(rows) - len(left) > 0
    assert coffee["item_id"] not in left
    assert sister["item_id"] in left and _in_tiers(services, sister["item_id"]) == (True, True)
    assert left.keys() == {i for i, r in rows.items() if r["said_at"] >= T0 + 5 * DAY} | restated


def test_the_default_keeps_knowledge(memory_factory):
    mem = memory_factory()
    _tell(mem)
    before = _rows(mem.services)
    assert enforce_retention(mem.services, now=T0 + 4000 * DAY)["knowledge"] == {"days": None, "items": 0}
    assert _rows(mem.services).keys() == before.keys()


def test_a_store_down_leaves_the_items_out_of_recall_and_the_next_run_finishes(memory_factory, monkeypatch):
    """The archive marks the expired items forgotten first (recall stops showing them), the tiers drop them,
    then the rows go: a graph that is down leaves them forgotten and owed, never half gone."""
    mem = memory_factory(retention_knowledge_days=20)
    services = mem.services
    _tell(mem)
    sister = _find(_rows(services), "テニス")

    def down(*_args, **_kwargs):
        raise StoreUnavailable("graph", "down for the test")

    with monkeypatch.context() as patch:
        patch.setattr(services.stores.graph, "delete_knowledge", down)
        report = enforce_retention(services, now=T0 + 25 * DAY)
    old = {i for i, r in _rows(services).items() if r["said_at"] < T0 + 5 * DAY}
    assert report["knowledge"]["items"] == 0 and report["knowledge"]["waiting"] == len(old) >= 2
    row = _rows(services)[sister["item_id"]]
    assert row["forgotten_at"] is not None  # out of recall and the profile already
    assert sister["item_id"] not in {k["item_id"] for k in list_knowledge(services, USER)}
    assert services.stores.archive.knowledge.unsynced_count(USER) >= len(old)  # the tiers' removal is owed

    report = enforce_retention(services, now=T0 + 26 * DAY)
    assert report["knowledge"]["items"] == len(old) and report["knowledge"]["waiting"] == 0
    assert sister["item_id"] not in _rows(services) and _in_tiers(services, sister["item_id"]) == (False, False)
