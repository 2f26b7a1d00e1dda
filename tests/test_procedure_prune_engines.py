"""The procedures table's version pruning and [IMPORTANT] protection behave the same on DuckDB and PostgreSQL."""

from __future__ import annotations

import pytest

from lumina_memory.stores.procedures_duckdb import NAMES

from .archive_engines import ENGINES, open_archive
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

pytestmark = pytest.mark.slow  # the PostgreSQL side starts a private server


@pytest.fixture(params=ENGINES)
def table(request, tmp_path):
    archive = open_archive(request, tmp_path)
    yield archive.procedures
    archive.close()


def _version(user: str, lineage: str, version: int, last: int, description: str = "チーズケーキのレシピ") -> dict:
    pid = f"{lineage}-v{version}"
    row = {name: None for name in NAMES}
    row.update(procedure_id=pid, user_id=user, lineage_id=lineage, version=version, title="チーズケーキ",
               task_key="チーズケーキ", description=description, steps=["混ぜる", "焼く"], keywords=["チーズケーキ"],
               language="ja", embedding=[0.0, 1.0], success_count=0, failure_count=3, confidence=0.0,
               status="current" if version == last else "superseded",
               superseded_by=None if version == last else f"{lineage}-v{version + 1}",
               supersedes=f"{lineage}-v{version - 1}" if version > 1 else None, episode_ids=[f"seg-{version}"],
               source_turn_ids=[f"t-{version}"], source_ids=[f"s:{version}"], outcome_ids=[], said_at=1.0 * version,
               last_outcome_at=None, method="offline", note="", created_at=1.0, updated_at=1.0)
    return row


def test_prune_keeps_the_newest_versions_and_tagged_ones(table):
    rows = [_version("alice", "cake", v, 7, "[IMPORTANT] チーズケーキ" if v == 1 else "チーズケーキのレシピ")
            for v in range(1, 8)]
    rows += [_version("bob", "cake-b", v, 7) for v in range(1, 8)]
    table.upsert(rows)
    gone = table.prune_versions("alice", ["cake"], 5)
    assert gone == ["cake-v2"]  # v1 is tagged, v3..v7 are the newest five
    kept = {r["procedure_id"]: r for r in table.procedures("alice", history=True)}
    assert sorted(kept) == ["cake-v1", "cake-v3", "cake-v4", "cake-v5", "cake-v6", "cake-v7"]
    assert kept["cake-v3"]["supersedes"] is None
    assert len(table.procedures("bob", history=True)) == 7  # another user's lineage untouched


def test_a_tagged_procedure_is_not_forgotten_for_failing(table):
    table.upsert([_version("alice", "cake", 1, 1, "[IMPORTANT] チーズケーキ"), _version("alice", "pie", 1, 1)])
    assert table.forget_unreliable("alice", 0.2, 3) == ["pie"]
    assert [r["lineage_id"] for r in table.procedures("alice")] == ["cake"]


def test_strategies_round_trip_per_user(table):
    from lumina_memory.stores.errors import InvalidInput
    from lumina_memory.stores.strategies_sql import StrategyTable

    strategies = StrategyTable(table.db)
    row = dict(strategy_id="st-1", user_id="agent-1", kind="decomposition", task="調査してまとめる", category="research",
               subtasks=["集める", "まとめる"], strategy="sequential", pattern="", indicators=[], mitigation="",
               severity=0, success_count=1, failure_count=0, embedding=[0.5, 0.5], created_at=1.0, updated_at=1.0)
    strategies.put(row)
    strategies.put({**row, "success_count": 2})
    assert [(r["task"], r["subtasks"], r["success_count"]) for r in strategies.of_user("agent-1")] == \
        [("調査してまとめる", ["集める", "まとめる"], 2)]
    assert strategies.of_user("agent-2") == [] and strategies.get("agent-2", "st-1") is None
    with pytest.raises(InvalidInput, match="another user"):
        strategies.put({**row, "user_id": "agent-2"})
