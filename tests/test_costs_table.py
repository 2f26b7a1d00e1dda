"""Issue 49: the cost records' table (stores.costs_sql) behaves the same on the embedded DuckDB file and on
PostgreSQL, and server mode keeps a memory's records where every process reads them."""

from __future__ import annotations

import time

import pytest

from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.costs_sql import OP_COSTS, CostTable
from lumina_memory.stores.pg_connection import PostgresConnection

from .pg_server import pg_uri  # noqa: F401 - fixture
from .sql_engines import pg_server, sql_db  # noqa: F401 - fixtures

SECRET = "costs-test-secret-0123456789abcdef012345"


def record(op: str, ts: float, **over) -> dict:
    base = {"ts": ts, "op": op, "path": "offline", "ms": 3.5, "stages": {"b_second": 1.25, "a_first": 2.0},
            "error": "", "calls": 0, "input_tokens": 0, "output_tokens": 0, "models": {}, "stage_calls": {}}
    return {**base, **over}


def test_records_wait_for_their_batch_and_come_back_whole(sql_db):
    table = CostTable(sql_db)
    now = time.time()
    written = [table.add(record("recall", now + i), batch_rows=3, batch_seconds=3_600) for i in range(4)]
    assert written == [0, 0, 3, 0]  # the fourth waits for the next batch
    with sql_db.read() as con:
        assert con.execute(f"SELECT count(*) FROM {OP_COSTS}").fetchone()[0] == 3
    llm = record("reply", now + 10, path="llm", calls=2, input_tokens=30, output_tokens=9, error="respond: X",
                 models={"m": {"calls": 2, "input_tokens": 30, "output_tokens": 9}},
                 stage_calls={"respond": {"calls": 2, "input_tokens": 30, "output_tokens": 9}})
    table.add(llm)  # a batch of one: written at once
    found = table.since(0)  # reading writes what waits first
    assert [r["op"] for r in found] == ["recall"] * 4 + ["reply"]
    assert list(found[0]["stages"]) == ["b_second", "a_first"]  # the stages in the order they ran
    assert found[-1] == {**llm, "ts": pytest.approx(llm["ts"])}
    assert [r["op"] for r in table.since(now + 2)] == ["recall", "recall", "reply"]
    assert [r["ts"] for r in table.since(0, op="reply")] == [pytest.approx(now + 10)]


def test_a_quiet_batch_is_written_after_its_seconds(sql_db):
    table = CostTable(sql_db)
    assert table.add(record("write", time.time()), batch_rows=100, batch_seconds=0.0) == 1


def test_retention_removes_only_older_records(sql_db):
    table = CostTable(sql_db)
    now = time.time()
    for age_days in (20, 10, 1):
        table.add(record("write", now - age_days * 86_400))
    assert table.expire_before(now - 14 * 86_400) == 1
    assert len(table.since(0)) == 2
    table.add(record("recall", now), batch_rows=1, keep_days=5)  # a written batch removes what is past its days
    assert [r["op"] for r in table.since(0)] == ["write", "recall"]


@pytest.mark.slow  # a whole memory in server mode
def test_server_mode_keeps_the_records_where_another_process_reads_them(memory_factory, pg_uri):
    mem = memory_factory(database_url=pg_uri, secret_key=SECRET, costs_batch_rows=1_000, costs_batch_seconds=3_600)
    config = {"configurable": {"thread_id": "pg"}}
    for i, text in enumerate(["週末は鎌倉で海を見た", "しらす丼がおいしかった"]):
        mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": 1_790_000_000 + i}}, config,
                         context={"user_id": "ivy", "respond": False})
    mem.graph.invoke({"flush": True}, config, context={"user_id": "ivy", "respond": False})
    recall(mem.services, "ivy", "鎌倉で何を食べた？")
    other = PostgresConnection(pg_uri, "archive")  # another process of the same memory
    try:
        seen = CostTable(other)
        assert seen.since(0) == []  # still waiting in the writer's batch
        mem.services.stores.archive.op_costs().flush()
        assert [r["op"] for r in seen.since(0)] == ["write", "write", "write", "flush", "recall"]
    finally:
        other.close()


def test_a_table_made_before_stage_calls_gains_the_column(sql_db):
    from lumina_memory.stores.costs_sql import SCHEMA

    sql_db.migrate("op_costs", [SCHEMA])  # the first step alone: a table as the first version made it
    with sql_db.tx() as con:
        con.execute(f"INSERT INTO {OP_COSTS} (ts, op, path, ms, stages, error, calls, input_tokens, output_tokens, "
                    "models) VALUES (1.0, 'recall', 'offline', 2.0, '{}', '', 0, 0, 0, '{}')")
    table = CostTable(sql_db)
    table.add(record("write", 2.0))
    assert [(r["op"], r["stage_calls"]) for r in table.since(0)] == [("recall", {}), ("write", {})]
