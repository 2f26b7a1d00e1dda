"""Which checkpoints a memory has: the data dir's SQLite file (stores.places.checkpoints_place) embedded, the
server mode's PostgreSQL (stores.places.checkpoints_pg) with DATABASE_URI set."""

from __future__ import annotations

from pathlib import Path

from .checkpoints_place import FILE, CheckpointsPlace, SqliteCheckpoints


def open_checkpoints(settings, *, create: bool = True):
    """The CLI's checkpointer (``.saver``, ``.threads()``, ``.close()``): PostgreSQL in server mode, else the data
    dir's SQLite file. None when ``create`` is False and the file does not exist (nothing was ever checkpointed)."""
    if settings.database_url:
        from .checkpoints_pg import PgCheckpoints  # psycopg: the postgres extra, only in server mode

        return PgCheckpoints(settings.database_url, getattr(settings, "database_timeout_seconds", 10.0))
    path = settings.resolved_data_dir() / FILE
    if not create and not path.exists():
        return None
    return SqliteCheckpoints(path)


def checkpoints_place(settings, path: Path | None = None):
    """The checkpoints' UserDataPlace: ``path`` (a SQLite file) when given; else the server mode's PostgreSQL,
    or the data dir's file."""
    if path is None and settings.database_url:
        from .checkpoints_pg import CheckpointsPgPlace  # psycopg: the postgres extra, only in server mode

        return CheckpointsPgPlace(settings.database_url, getattr(settings, "database_timeout_seconds", 10.0))
    return CheckpointsPlace(path or settings.resolved_data_dir() / FILE)
