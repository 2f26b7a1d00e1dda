"""The notes' procedure rules beyond A8's counts, on real stores: only the last five versions of a procedure kept,
and a procedure tagged [IMPORTANT] never forgotten (for failing or for disuse) nor pruned."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.knowledge.procedures import list_procedures, record_outcome

from .test_procedures import CHEESECAKE, DAY, T0, _learn, _turns

pytestmark = pytest.mark.slow  # services opened and embedding per test


def _lesson(minutes: int, important: bool = False) -> list[tuple[str, str]]:
    ask = "クラリス、チーズケーキのレシピ、焼き方を見直したいな"
    return [("user", f"[IMPORTANT] {ask}" if important else ask),
            ("clarisse", f"では改良版です。クリームチーズ200g、砂糖60g、卵2個を順番に混ぜます。160度のオーブンで{minutes}分焼いてください。"
                         "一晩冷やすと割れにくいですよ")]


def test_only_the_last_five_versions_are_kept(memory):
    services = memory.services
    _learn(services, "alice", "seg-0", _turns("a0", CHEESECAKE, T0))
    for n in range(1, 7):  # six re-consolidations: versions 2..7
        _learn(services, "alice", f"seg-{n}", _turns(f"a{n}", _lesson(40 + 5 * n), T0 + n * DAY))
    history = list_procedures(services, "alice", history=True)
    assert sorted(p["version"] for p in history) == [3, 4, 5, 6, 7]
    oldest = min(history, key=lambda p: p["version"])
    assert oldest["supersedes"] is None and oldest["status"] == "superseded"
    assert [p["version"] for p in list_procedures(services, "alice")] == [7]
    assert list_procedures(services, "bob", history=True) == []


def test_an_important_procedure_is_never_forgotten_and_its_versions_kept(memory):
    from lumina_memory.graphs.maintenance_knowledge import knowledge_monthly

    services = memory.services
    _learn(services, "alice", "seg-1", _turns("a1", _lesson(50, important=True), T0))
    _learn(services, "bob", "seg-1b", _turns("b1", _lesson(50), T0))
    for user in ("alice", "bob"):
        (proc,) = list_procedures(services, user)
        for k in range(3):  # keeps failing: the monthly step forgets an unreliable procedure
            record_outcome(services, user, proc["procedure_id"], False, outcome_id=f"o{k}", now=T0 + k)
    assert list_procedures(services, "alice")[0]["description"].startswith("[IMPORTANT]")
    for user in ("alice", "bob"):
        knowledge_monthly({"now": T0 + 400 * DAY, "user_id": user}, services)
    assert len(list_procedures(services, "alice")) == 1  # tagged: kept though it failed and went unused
    assert list_procedures(services, "bob") == []
    # re-consolidated beyond five versions: every tagged version stays, the new ones carry the tag
    for n in range(2, 9):
        _learn(services, "alice", f"seg-{n}", _turns(f"a{n}", _lesson(50 + 5 * n), T0 + n * DAY))
    history = list_procedures(services, "alice", history=True)
    assert len(history) == 8 and all(p["description"].startswith("[IMPORTANT]") for p in history)
