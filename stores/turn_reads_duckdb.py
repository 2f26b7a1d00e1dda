"""What the recall index read of each archived turn (its terms and cross-script keys, per sentence for a
long reply), kept beside the turn so a process that starts does not tokenise a user's whole history again
inside their first recall (issue 19: 10,000 memories with long replies took 7.6 s, nine tenths of it Sudachi).

A row is derived from its turn's text and only ever used with that text: it carries the text's md5, which a
read compares with the turn's current text, and a write joins on it, so a turn rewritten (an upsert) or deleted
(retention, erasure) in between never gets a row that does not match it. Which reader wrote the row (tokeniser
and passage settings, ``reader``) is kept too; rows of another reader are read again and replaced.
The table has a ``user_id`` column: erasure, backups and the residue scan cover it with the archive's tables.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import duckdb

from .sql_connection import SqlConnection
from .errors import StoreUnavailable
from .ids import TURNS_TABLE, validate_id
from .memories_schema import rows_changed
from .records import text_md5  # noqa: F401 - its home is records

TURN_READS = "turn_reads"


def _driver_errors() -> tuple[type[BaseException], ...]:
    """The engines' own errors: DuckDB's, and psycopg's once a PostgreSQL connection loaded it (the embedded
    default never imports psycopg)."""
    psycopg = sys.modules.get("psycopg")
    return (duckdb.Error,) + ((psycopg.Error,) if psycopg is not None else ())

SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {TURN_READS} (
        turn_id VARCHAR PRIMARY KEY,
        user_id VARCHAR NOT NULL,
        reader VARCHAR NOT NULL,      -- tokeniser and passage settings that produced ``read``
        text_md5 VARCHAR NOT NULL,    -- md5 of the turn text it was read from
        read VARCHAR NOT NULL)""",
)


class TurnReadsTable:
    def __init__(self, db: SqlConnection):
        self.db = db
        db.migrate("turn_reads", [SCHEMA])  # step 1: the tables as first made; later changes are new steps

    def stored(self, user_id: str, reader: str, turn_ids: Sequence[str] | None = None) -> dict[str, str]:
        """turn_id -> read of the user's turns (those among ``turn_ids`` when given) whose row was written by
        ``reader`` from the turn's current text."""
        validate_id(user_id, "user_id")
        only = "" if turn_ids is None else " AND t.turn_id IN (SELECT unnest(?::VARCHAR[]))"
        params: list = [user_id, user_id, reader] + ([] if turn_ids is None else [list(turn_ids)])
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT t.turn_id, r.read FROM {TURNS_TABLE} t JOIN {TURN_READS} r ON r.turn_id = t.turn_id "
                f"WHERE t.user_id = ? AND r.user_id = ? AND r.reader = ? AND r.text_md5 = md5(t.text){only}",
                params,
            ).fetchall()
        return dict(rows)

    def put(self, user_id: str, reader: str, rows: Sequence[tuple[str, str, str]]) -> int:
        """Keep ``rows`` (turn_id, md5 of the text read, read) of the user's turns; a row whose turn is gone or
        whose text changed since it was read is dropped. Not a write of the user's data as far as the per-user
        write stamps go (no ``touches``): a derived value, which must not make recall's caches read again."""
        validate_id(user_id, "user_id")
        if not rows:
            return 0
        last = {turn_id: (md5, read) for turn_id, md5, read in rows}  # a turn twice: its last read (one row per turn)
        ids, md5s, reads = list(last), [v[0] for v in last.values()], [v[1] for v in last.values()]
        try:
            return self._put(user_id, reader, ids, md5s, reads)
        except _driver_errors() as exc:  # a derived value: the caller reads the texts again next time, says so and goes on
            raise StoreUnavailable("archive", f"reads not kept: {exc}") from exc

    def _put(self, user_id: str, reader: str, ids: list, md5s: list, reads: list) -> int:
        with self.db.tx() as con:
            return rows_changed(self.db.dialect, con.execute(
                f"INSERT INTO {TURN_READS} (turn_id, user_id, reader, text_md5, read) "
                f"SELECT b.turn_id, t.user_id, ?::VARCHAR, b.md5, b.read FROM (SELECT unnest(?::VARCHAR[]) AS turn_id, "
                f"unnest(?::VARCHAR[]) AS md5, unnest(?::VARCHAR[]) AS read) AS b "
                f"JOIN {TURNS_TABLE} t ON t.turn_id = b.turn_id AND t.user_id = ? AND md5(t.text) = b.md5 "
                "ON CONFLICT (turn_id) DO UPDATE SET user_id = excluded.user_id, reader = excluded.reader, "
                "text_md5 = excluded.text_md5, read = excluded.read",
                [reader, ids, md5s, reads, user_id],
            ))

    @staticmethod
    def drop(con, user_id: str | None, turn_ids: Sequence[str] | None = None) -> None:
        """Inside the caller's transaction: the rows of turns being deleted or rewritten (all the user's when
        ``turn_ids`` is None; any user's among ``turn_ids`` when ``user_id`` is None), so no read of a text outlives it."""
        if turn_ids is None:
            con.execute(f"DELETE FROM {TURN_READS} WHERE user_id = ?", [user_id])
        elif user_id is None:
            con.execute(f"DELETE FROM {TURN_READS} WHERE turn_id IN (SELECT unnest(?::VARCHAR[]))", [list(turn_ids)])
        else:
            con.execute(f"DELETE FROM {TURN_READS} WHERE user_id = ? AND turn_id IN (SELECT unnest(?::VARCHAR[]))",
                        [user_id, list(turn_ids)])

    def count(self, user_id: str) -> int:
        validate_id(user_id, "user_id")
        with self.db.read() as con:
            (n,) = con.execute(f"SELECT count(*) FROM {TURN_READS} WHERE user_id = ?", [user_id]).fetchone()
        return int(n)
