"""The planner's statistics of rewritten tables on PostgreSQL: an erasure's VACUUM FULL does not reach them.

ANALYZE (autovacuum runs it on its own) copies sampled column values into the catalogue ``pg_statistic``: most
common values and histogram bounds, i.e. user ids, turn ids and words of texts. A VACUUM FULL of the table leaves
those rows as they were, and an ANALYZE of a table left empty keeps its old statistics. So, after a rewrite:
the table's column statistics are cleared (``pg_clear_attribute_stats``, PostgreSQL 18), sampled anew from the
rows left (ANALYZE), and ``pg_statistic`` itself is rewritten so the replaced rows' tuples leave its files. A role
without the MAINTAIN privilege on ``pg_statistic`` gets the server's warning and the old tuples stay until the
server's own VACUUM FULL; everything else still happens.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql

STATISTICS_TABLE = "pg_statistic"


def resample_statistics(con: psycopg.Connection, tables: Sequence[str]) -> None:
    """Clear and re-sample the statistics of ``tables`` (of the current schema), then rewrite ``pg_statistic``.
    ``con``: an autocommit connection (VACUUM runs outside a transaction)."""
    if not tables:
        return
    for table in tables:
        columns = con.execute(
            "SELECT schemaname, tablename, attname, inherited FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = %s", [table]).fetchall()
        for column in columns:
            con.execute("SELECT pg_clear_attribute_stats(%s, %s, %s, %s)", list(column))
        con.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
    con.execute(sql.SQL("VACUUM (FULL) {}").format(sql.Identifier(STATISTICS_TABLE)))
