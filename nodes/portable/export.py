"""``export_user``: a user's memory as the portable JSONL lines (docs/portable.md), read from the archive's tables.

Only stored rows are read, never a cache: what the archive holds was redacted before it was stored (S7), so an
export holds nothing the store does not. An erased user (or one never seen) has nothing to export: NoMemory.
"""

from __future__ import annotations

import datetime
import json
import math
import time
from collections.abc import Iterator
from typing import Any

from lumina_memory.stores.errors import LuminaError
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.places.parquet_rows import ident

from .audit import EXPORTED, record
from .derive import promoted_segments
from .kinds import COLUMN_ALIASES, FORMAT, LONG_TERM, LEFT_OUT_COLUMNS, ORDER_BY, PROFILE, TABLE_OF_KIND, VERSION
from .tables import archive_tables
from .vectors import embedder_of


class NoMemory(LuminaError, LookupError):
    """The user has no memory to export: never seen, or erased."""

    def __init__(self, user_id: str):
        super().__init__(f"no memory for user {user_id!r}: nothing to export (never seen here, or erased)")


def _plain(value: Any) -> Any:
    """A column's value as JSON holds it: dates as ISO text, NaN (no value) as null."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _rows(place, user_id: str) -> list[dict[str, Any]]:
    left_out = LEFT_OUT_COLUMNS.get(place.table, frozenset()) | {"user_id"}
    with place.db.read() as con:
        cur = con.execute(f"SELECT * FROM {ident(place.table)} WHERE user_id = ?", [user_id])
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    order = ORDER_BY.get(place.table)
    records = [{n: _plain(v) for n, v in zip(names, row)} for row in rows]
    if order:
        records.sort(key=lambda r: r[order])
    else:
        records.sort(key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return [{COLUMN_ALIASES.get(k, k): v for k, v in r.items() if k not in left_out} for r in records]


def export_records(services, user_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, records) of the user's memory; NoMemory when there is none."""
    from lumina_memory.nodes.knowledge.profile import build_profile

    user_id = validate_id(user_id, "user_id")
    places = archive_tables(services.stores.archive)
    records: list[dict[str, Any]] = []
    for kind, table in TABLE_OF_KIND.items():
        place = places.get(table)
        if place is not None:
            records += [{"kind": kind, **row} for row in _rows(place, user_id)]
    segments = [r for r in records if r["kind"] == "segment"]
    promoted = promoted_segments(services, user_id, [r["segment_id"] for r in segments])
    for r in segments:
        r[LONG_TERM] = r["segment_id"] in promoted
    if not records:
        raise NoMemory(user_id)
    records.append({"kind": PROFILE, "profile": build_profile(services, user_id)})
    counts: dict[str, int] = {}
    for r in records:
        counts[r["kind"]] = counts.get(r["kind"], 0) + 1
    header = {"format": FORMAT, "version": VERSION, "user_id": user_id, "exported_at": time.time(), "counts": counts,
              "embedder": embedder_of(services)}
    return header, records


def export_lines(services, user_id: str, actor: str = "api") -> Iterator[str]:
    """The export file's lines (without line ends): the header, then one record per line; the audit log records
    the export (``actor``: who asked)."""
    header, records = export_records(services, user_id)
    record(services, EXPORTED, actor, user_id, {"counts": header["counts"]})
    for item in (header, *records):
        yield json.dumps(item, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


__all__ = ["NoMemory", "export_lines", "export_records"]
