"""A table of the archive to and from a backup's Parquet file, whichever engine holds the table.

Backups are one format for both engines: a DuckDB file's table is copied by DuckDB's own ``COPY``; a
PostgreSQL table's rows are fetched and written by an in-memory DuckDB with the column types the DuckDB
archive has, so a snapshot of either restores into either. Files are uncompressed Parquet, private (0600),
so a backup's text is readable to the residue scan.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import duckdb

PARQUET = "(FORMAT parquet, COMPRESSION uncompressed)"

# information_schema's data_type (or udt_name for arrays) -> the DuckDB type the embedded archive declares.
_SCALARS = {"character varying": "VARCHAR", "text": "VARCHAR", "bigint": "BIGINT", "integer": "INTEGER",
            "smallint": "SMALLINT", "double precision": "DOUBLE", "real": "FLOAT", "boolean": "BOOLEAN",
            "date": "DATE", "timestamp without time zone": "TIMESTAMP", "timestamp with time zone": "TIMESTAMPTZ",
            "uuid": "UUID"}
_ARRAYS = {"_varchar": "VARCHAR[]", "_text": "VARCHAR[]", "_float4": "FLOAT[]", "_float8": "DOUBLE[]",
           "_int8": "BIGINT[]", "_int4": "INTEGER[]", "_bool": "BOOLEAN[]"}


def ident(name: str) -> str:
    """A catalogue name as one quoted identifier (quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def literal(path: Path) -> str:
    # COPY ... TO takes a literal, not a parameter; our own paths only, quotes doubled anyway.
    return str(path).replace("'", "''")


def table_columns(con, table: str) -> list[tuple[str, str]]:
    """(column, DuckDB type) of ``table`` in the connection's schema, in table order."""
    rows = con.execute(
        "SELECT column_name, data_type, udt_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position", [table]).fetchall()
    out = []
    for name, data_type, udt in rows:
        kind = _ARRAYS.get(udt) if data_type == "ARRAY" else _SCALARS.get(data_type)
        if kind is None and udt is None:  # DuckDB's catalogue names its own types (VARCHAR, DOUBLE, VARCHAR[])
            kind = data_type
        if kind is None:
            raise TypeError(f"{table}.{name} is {data_type} ({udt}): no Parquet column type for it in backups")
        out.append((name, kind))
    return out


def key_columns(con, table: str) -> list[str]:
    """The columns of ``table``'s primary key (else its first unique key), in key order; [] for a table without
    one: what ``ON CONFLICT (..)`` names."""
    rows = con.execute(
        "SELECT c.constraint_name, k.column_name FROM information_schema.table_constraints c JOIN information_schema.key_column_usage k "
        "ON c.constraint_name = k.constraint_name AND c.table_schema = k.table_schema AND c.table_name = k.table_name "
        "WHERE c.table_schema = current_schema() AND c.table_name = ? AND c.constraint_type IN ('PRIMARY KEY', 'UNIQUE') "
        "ORDER BY c.constraint_type, c.constraint_name, k.ordinal_position", [table]).fetchall()
    return [column for name, column in rows if name == rows[0][0]]


def write_rows(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence], out: Path) -> None:
    """``rows`` (values in ``columns`` order) as a Parquet file at ``out``, typed as ``columns`` say."""
    local = duckdb.connect()
    try:
        local.execute(f"CREATE TABLE t ({', '.join(f'{ident(c)} {t}' for c, t in columns)})")
        if rows:
            # Column lists unnested side by side: one statement, where executemany costs ~2 ms a row in DuckDB.
            local.execute(f"INSERT INTO t SELECT {', '.join(f'unnest(?::{t}[])' for _, t in columns)}",
                          [list(col) for col in zip(*rows)])
        local.execute(f"COPY t TO '{literal(out)}' {PARQUET}")
    finally:
        local.close()
    os.chmod(out, 0o600)


def export_table(db, table: str, out: Path, order_by: str = "") -> int:
    """Every row of ``table`` into the Parquet file ``out``; returns the row count."""
    order = f" ORDER BY {order_by}" if order_by else ""
    with db.read() as con:
        if db.dialect == "duckdb":
            con.execute(f"COPY (SELECT * FROM {ident(table)}{order}) TO '{literal(out)}' {PARQUET}")
            (n,) = con.execute(f"SELECT count(*) FROM {ident(table)}").fetchone()
            os.chmod(out, 0o600)
            return int(n)
        columns = table_columns(con, table)
        rows = con.execute(f"SELECT {', '.join(ident(c) for c, _ in columns)} FROM {ident(table)}{order}").fetchall()
    write_rows(columns, rows, out)
    return len(rows)


def parquet_rows(path: Path, where: str = "", params: Sequence = (), columns: str = "*") -> tuple[list[str], list[tuple]]:
    """(column names, rows) of a Parquet file: ``columns`` of the rows ``where`` keeps (``?`` parameters)."""
    local = duckdb.connect()
    try:
        cur = local.execute(f"SELECT {columns} FROM read_parquet(?) {where}", [str(path), *params])
        names = [d[0] for d in cur.description]
        return names, cur.fetchall()
    finally:
        local.close()


def insert_rows(con, table: str, names: Sequence[str], rows: Sequence[Sequence]) -> int:
    """Insert ``rows`` (``names`` order) into ``table`` by name, inside the caller's transaction: columns the table
    lacks are left out, columns the rows lack take their default; a row whose key is taken replaces that row's
    values. Returns the rows written."""
    present = {c for c, _ in table_columns(con, table)}
    use = [i for i, n in enumerate(names) if n in present]
    if not rows or not use:
        return 0
    cols = [names[i] for i in use]
    sql = (f"INSERT INTO {ident(table)} ({', '.join(ident(c) for c in cols)}) "
           f"VALUES ({', '.join('?' for _ in cols)})")
    keys = [k for k in key_columns(con, table) if k in cols]
    if keys:
        others = [c for c in cols if c not in keys]
        sql += f" ON CONFLICT ({', '.join(ident(k) for k in keys)}) DO " + (
            "UPDATE SET " + ", ".join(f"{ident(c)} = excluded.{ident(c)}" for c in others) if others else "NOTHING")
    con.executemany(sql, [[row[i] for i in use] for row in rows])
    return len(rows)
