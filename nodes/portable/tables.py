"""The archive's user tables as the places that read and write them (stores.places.archive), by table name."""

from __future__ import annotations

from lumina_memory.stores.places.archive import DuckDBTablePlace


def archive_tables(archive) -> dict[str, DuckDBTablePlace]:
    """table -> its place, for every user table the archive's catalogue holds now (S5's strategies table is
    made on first use: it is opened first, so an import into a fresh memory finds it)."""
    opener = getattr(archive, "strategies", None)
    if callable(opener):
        opener()
    return {p.table: p for p in archive.user_data_places() if isinstance(p, DuckDBTablePlace)}
