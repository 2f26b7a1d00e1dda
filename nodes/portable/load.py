"""``load_export``: a checked export (nodes.portable.read) written into a user's memory, then every derived tier
rebuilt from it (nodes.portable.derive: vectors with the configured embedder, graph, mid-term).

Refused, before anything is written: a user the erasure ledger names (as restore keeps erased users out), a user
who already has memory (an import never mixes two histories), a record whose fields the table lacks (it would be
lost). The rows go in one transaction: all of them or none.

Under another user id every generated id is made again for that user (turns and segments as ingest makes them,
uuid5 of user and source; the others uuid5 of the new user and the old id), and every reference follows, so the
two users' rows never share an id.
"""

from __future__ import annotations

import datetime
import uuid
from collections import defaultdict
from typing import Any

from lumina_memory.stores import ids
from lumina_memory.stores.archive_schema import serialized
from lumina_memory.stores.errors import InvalidInput, LuminaError
from lumina_memory.stores.ids import TURNS_TABLE, validate_id
from lumina_memory.stores.ledger import memory_ledger
from lumina_memory.stores.places.parquet_rows import ident, insert_rows, table_columns
from lumina_memory.stores.shared_state import shared_state_of

from .audit import IMPORTED, record
from .derive import rebuild_tiers
from .kinds import ARRIVAL_COLUMN, FIELD_COLUMNS, KEY_OF_KIND, LONG_TERM, PROFILE, TABLE_OF_KIND
from .read import ExportFile
from .tables import archive_tables
from .vectors import reembedded, same_embedder


class ImportRefused(LuminaError, PermissionError):
    """The target user may not take the import (erased, or already holding memory)."""


def refuse_erased(services, user_id: str) -> None:
    if user_id in memory_ledger(shared_state_of(services)):
        raise ImportRefused(f"user {user_id!r} was erased here (the erasure ledger names the id): an import does not "
                            f"bring an erased user back; import under another id with --user")


def refuse_existing(places, user_id: str) -> None:
    held = {name: n for name, n in ((p.table, p.count(user_id)) for p in places.values()) if n}
    if held:
        raise ImportRefused(f"user {user_id!r} already has memory ({', '.join(f'{t} {n}' for t, n in sorted(held.items()))}): "
                            f"an import goes into a user with none; erase the user first or import under another id with --user")


def id_map(export: ExportFile, user_id: str) -> dict[str, str]:
    """old id -> new id for every keyed record of the file; empty when the user keeps the file's id."""
    if user_id == export.user_id:
        return {}
    out: dict[str, str] = {}
    records = [r for _, r in export.records]
    for r in records:
        if r["kind"] == "turn":
            out[r["turn_id"]] = ids.turn_id(user_id, r["source_id"])
    for r in records:
        if r["kind"] == "segment" and r["turn_ids"] and r["turn_ids"][0] in out:
            out[r["segment_id"]] = ids.segment_id(user_id, out[r["turn_ids"][0]])
    for r in records:
        key = KEY_OF_KIND.get(r["kind"])
        if key and r[key] not in out:
            out[r[key]] = str(uuid.uuid5(ids.NAMESPACE, f"import|{user_id}|{r[key]}"))
    return out


def _renamed(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [mapping.get(v, v) if isinstance(v, str) else v for v in value]
    return value


def _typed(value: Any, kind: str) -> Any:
    if kind == "DATE" and isinstance(value, str):
        return datetime.date.fromisoformat(value)
    return value


def _required_columns(con, table: str) -> set[str]:
    """Columns of ``table`` a row must give: NOT NULL without a default."""
    rows = con.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                       "AND table_name = ? AND is_nullable = 'NO' AND column_default IS NULL", [table]).fetchall()
    return {r[0] for r in rows}


def _driver_errors() -> tuple[type[BaseException], ...]:
    """The engines' own errors: DuckDB's, and psycopg's once a PostgreSQL connection loaded it."""
    import sys

    import duckdb

    psycopg = sys.modules.get("psycopg")
    return (duckdb.Error,) + ((psycopg.Error,) if psycopg is not None else ())


def _check_unique(export: ExportFile) -> None:
    seen: dict[tuple[str, str], int] = {}
    for line, r in export.records:
        key = KEY_OF_KIND.get(r["kind"])
        if key:
            first = seen.setdefault((r["kind"], r[key]), line)
            if first != line:
                raise InvalidInput(f"line {line}", f"{r['kind']} {r[key]!r} is already on line {first}")


def load_export(services, export: ExportFile, user_id: str | None = None, actor: str = "api") -> dict[str, int]:
    """Write ``export`` as ``user_id``'s memory (default: the file's user); returns records written per kind. The
    audit log records the import (``actor``: who asked)."""
    user_id = validate_id(user_id or export.user_id, "user_id")
    _check_unique(export)
    places = archive_tables(services.stores.archive)
    refuse_erased(services, user_id)
    refuse_existing(places, user_id)
    mapping = id_map(export, user_id)
    records = [(line, dict(r)) for line, r in export.records]
    if not same_embedder(export.header, services):
        reembedded(services, [r for _, r in records])  # another model's vectors mean nothing here
    by_table: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for line, r in records:
        if r["kind"] != PROFILE:
            by_table[TABLE_OF_KIND[r["kind"]]].append((line, r))
    db = next(iter(places.values())).db
    written: dict[str, int] = {}
    with db.tx(touches=(user_id,)) as con:
        for kind, table in TABLE_OF_KIND.items():
            rows = by_table.get(table)
            if not rows:
                continue
            if table not in places:
                raise InvalidInput(f"line {rows[0][0]}", f"this memory has no {table} table for {kind} records")
            columns = dict(table_columns(con, table))
            rows = [(line, {FIELD_COLUMNS.get(f, f): v for f, v in r.items() if f not in ("kind", LONG_TERM)})
                    for line, r in rows]
            arrival = ARRIVAL_COLUMN.get(table)
            required = _required_columns(con, table) - {"user_id", arrival}
            for line, r in rows:
                unknown = sorted(set(r) - set(columns))
                if unknown:
                    raise InvalidInput(f"line {line}", f"{kind} fields {unknown} are not in this memory's {table} "
                                                       f"table (an export of a newer version?): they would be lost")
                missing = sorted(c for c in required if r.get(c) is None)
                if missing:
                    raise InvalidInput(f"line {line}", f"{kind} fields {missing} are missing")
            if arrival:  # renumbered after the target's largest, in the file's order (its numbers, else its lines)
                if table == TURNS_TABLE:
                    serialized(con, db, TURNS_TABLE)  # numbered from the largest committed: one numberer at a time
                (base,) = con.execute(f"SELECT coalesce(max({ident(arrival)}), 0) FROM {ident(table)}").fetchone()
                ordered = sorted(rows, key=lambda lr: (lr[1].get(arrival) is None, lr[1].get(arrival) or 0, lr[0]))
                for rank, (_line, r) in enumerate(ordered, 1):
                    r[arrival] = int(base) + rank
            names = sorted({f for _, r in rows for f in r} | {"user_id"})
            values = [[user_id if n == "user_id" else _typed(_renamed(r.get(n), mapping), columns[n]) for n in names]
                      for _, r in rows]
            try:
                written[kind] = insert_rows(con, table, names, values)
            except _driver_errors() as exc:  # a value of the wrong type: the engine's words, the records named
                raise InvalidInput(f"lines {rows[0][0]}-{rows[-1][0]}", f"{kind} records refused by the "
                                   f"{db.dialect} archive: {str(exc).splitlines()[0][:300]}") from None
    for place in places.values():
        if place.on_restore is not None:
            place.on_restore()
            break  # one archive: its callback forgets what it found missing, for every table
    verdicts = {mapping.get(r["segment_id"], r["segment_id"]): r.get(LONG_TERM) for _, r in records
                if r["kind"] == "segment"}
    rebuild_tiers(services, user_id, verdicts)
    record(services, IMPORTED, actor, user_id, {"from": "export", "counts": written,
                                                "same_user": user_id == export.user_id})
    return written
