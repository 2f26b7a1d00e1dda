"""The undo log's table (stores.memory_undo) on both engines, an embedded DuckDB file and a real PostgreSQL: a batch
day records its rows' prior state in its own transaction (a day refused records nothing), entries are selected by
memory, step and day, a restore puts a deleted memory back with its relations and drops its forgotten mark, one
user's entries are never another's, bad input is refused by name, and expired entries are purged."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.archive_postgres import PostgresArchive
from lumina_memory.stores.errors import DayAlreadyApplied, InvalidInput
from lumina_memory.stores.records import WRITTEN_BY_BATCH
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from tests.test_lifecycle_tables_engines import ALICE, BOB, _fill


@pytest.fixture(params=["duckdb", "postgres"])
def archive(request, tmp_path) -> Iterator:
    store = DuckDBArchive(tmp_path) if request.param == "duckdb" else PostgresArchive(request.getfixturevalue("pg_uri"))
    try:
        yield store
    finally:
        store.close()


def _day(table, user: str, day: int, levels: list[int], delete: list[int], undo: dict[int, str], now: float,
         relations: list | None = None) -> None:
    arrays, _ids, seq = table.load([user])
    values = {k: np.array(arrays[k]) for k in WRITTEN_BY_BATCH}
    values["level"][:] = levels
    table.write_day([user], day, seq, values, {}, relations, [], [int(seq[i]) for i in delete], now,
                    undo={int(seq[i]): step for i, step in undo.items()})


def test_a_day_records_prior_rows_and_undo_restores_a_deleted_memory(archive):
    table = archive.memories
    ids = _fill(archive, ALICE, 3)
    bob = _fill(archive, BOB, 1)
    table.add_relations(ALICE, [(ids[0], ids[2], "continues", 0.7)], day=1)
    _day(table, ALICE, 10, [2, 4, 1], [], {0: "compress", 1: "archive"}, now=100.0)
    with pytest.raises(DayAlreadyApplied):  # refused whole: no entry of it either
        _day(table, ALICE, 10, [3, 4, 1], [], {0: "compress"}, now=101.0)
    _day(table, ALICE, 12, [2, 4, 4], [2], {2: "delete"}, now=200.0, relations=[])  # its relation goes with it
    entries = table.undo.entries(ALICE)
    assert [(e["target_id"], e["step"], e["day"]) for e in entries] == [
        (ids[0], "compress", 10), (ids[1], "archive", 10), (ids[2], "delete", 12)]
    assert entries[0]["prior"]["level"] == 1 and entries[0]["prior"]["tags"] == ["映画", "it's"]
    assert entries[2]["prior"]["relations"] == [[ids[0], ids[2], "continues", 0.7, 1]]
    assert [e["target_id"] for e in table.undo.entries(ALICE, since_day=11)] == [ids[2]]
    assert [e["target_id"] for e in table.undo.entries(ALICE, step="archive")] == [ids[1]]
    assert table.undo.entries(BOB) == [] and table.undo.entries(ALICE, bob[0]) == []
    assert table.forgotten(ALICE, ids) == {ids[2]} and table.relations(ALICE) == []

    restored = table.undo.restore_memories(ALICE, [entries[2]["prior"]], [entries[2]["undo_id"]], {"archived_on": 13})
    assert restored == [ids[2]] and table.forgotten(ALICE, ids) == set()
    row = table.rows(ALICE, [ids[2]])[0]
    assert row["level"] == 1 and row["archived_on"] == 13 and row["tags"] == ["映画", "it's"]
    assert [(r["src"], r["dst"], r["kind"]) for r in table.relations(ALICE)] == [(ids[0], ids[2], "continues")]
    assert [e["target_id"] for e in table.undo.entries(ALICE)] == [ids[0], ids[1]]
    with pytest.raises(InvalidInput, match="another user"):
        table.undo.restore_memories(BOB, [entries[0]["prior"]], [], {})
    assert table.rows(BOB, [ids[0]]) == []


def test_bad_input_is_refused_and_expired_entries_are_purged(archive):
    table = archive.memories
    _fill(archive, ALICE, 2)
    _day(table, ALICE, 10, [2, 2], [], {0: "compress"}, now=100.0)
    _day(table, ALICE, 11, [2, 3], [], {1: "compress"}, now=200.0)
    with pytest.raises(InvalidInput, match="step"):
        table.undo.entries(ALICE, step="erase")
    for hostile in ("../etc/passwd", "'; DROP TABLE memory_undo; --", ""):
        with pytest.raises(InvalidInput):
            table.undo.entries(hostile)
    assert table.undo.purge(150.0) == 1
    assert [e["day"] for e in table.undo.entries(ALICE)] == [11] and table.undo.count() == 1
