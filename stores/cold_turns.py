"""L9 storage policy B: raw turns past their retention, moved out of the archive into Parquet files that
deliberate recall still reads through DuckDB's ``read_parquet``.

Layout: ``<location>/<user hash>/turns-<stamp>.parquet`` (one folder per user, named by
``stores.ids.user_file_stem``, so erasure removes a folder and nothing else; files 0600, folders 0700).
A file is written under a temporary name and renamed, so a crash never leaves half a file that reads.
A retention run that crashed after writing a file and before deleting the archive rows writes those
turns again next time: reads keep one row per turn id.

Only local folders for now: an ``s3://`` location is refused with a clear error (DuckDB would need its
httpfs extension, which the embedded default does not ship).

A UserDataPlace: count, erase, export and restore per user, like every other place.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Callable, Sequence

import duckdb

from .errors import InvalidInput
from .ids import user_file_stem
from .models import Turn

_COLS = ("turn_id", "source_id", "user_id", "segment_id", "speaker", "text", "ts")
_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE")


def _literal(path: Path) -> str:
    return str(path).replace("'", "''")


class ColdTurns:
    name = "cold_turns"

    def __init__(self, location: str | Path):
        if str(location).startswith("s3://"):
            raise InvalidInput("storage_policy_b_location", "s3:// is not supported yet; use a local folder")
        self.folder = Path(location).expanduser()

    @classmethod
    def for_settings(cls, settings) -> "ColdTurns":
        return cls(settings.storage_policy_b_location or settings.resolved_data_dir() / "logs")

    def _user_folder(self, user_id: str) -> Path:
        return self.folder / user_file_stem(user_id)

    def _files(self, user_id: str) -> list[Path]:
        folder = self._user_folder(user_id)
        return sorted(folder.glob("*.parquet")) if folder.exists() else []

    def write(self, user_id: str, turns: Sequence[Turn]) -> Path | None:
        """One Parquet file with ``turns`` (all of ``user_id``); None when there are none."""
        if not turns:
            return None
        if any(t.user_id != user_id for t in turns):
            raise ValueError("every turn must belong to user_id")
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder = self._user_folder(user_id)
        folder.mkdir(exist_ok=True, mode=0o700)
        target = folder / f"turns-{time.time_ns()}.parquet"
        tmp = target.with_suffix(".tmp")
        columns = [[getattr(t, c) for t in turns] for c in _COLS]
        con = duckdb.connect()
        try:
            select = ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in zip(_COLS, _TYPES))
            con.sql(f"SELECT {select}", params=columns).write_parquet(str(tmp))
        finally:
            con.close()
        tmp.chmod(0o600)
        tmp.replace(target)
        return target

    def read(self, user_id: str, contains: str | None = None, limit: int = 100) -> list[Turn]:
        """The user's cold turns in conversation order (optionally only those whose text contains
        ``contains``, case-insensitive), at most ``limit``: deliberate recall of what retention moved out."""
        files = self._files(user_id)
        if not files:
            return []
        where, params = "user_id = ?", [user_id]
        if contains:
            where += " AND contains(lower(text), lower(?))"
            params.append(contains)
        sql = (f"SELECT {', '.join(_COLS)} FROM read_parquet([{', '.join(repr(_literal(f)) for f in files)}]) "
               f"WHERE {where} QUALIFY row_number() OVER (PARTITION BY turn_id) = 1 ORDER BY ts, turn_id LIMIT ?")
        con = duckdb.connect()
        try:
            rows = con.execute(sql, [*params, int(limit)]).fetchall()
        finally:
            con.close()
        return [Turn(**dict(zip(_COLS, r))) for r in rows]

    # --- UserDataPlace ----------------------------------------------------------------------------
    def count(self, user_id: str) -> int:
        files = self._files(user_id)
        if not files:
            return 0
        con = duckdb.connect()
        try:
            (n,) = con.execute(f"SELECT count(DISTINCT turn_id) FROM read_parquet([{', '.join(repr(_literal(f)) for f in files)}])"
                               " WHERE user_id = ?", [user_id]).fetchone()
        finally:
            con.close()
        return int(n)

    def erase(self, user_id: str) -> int:
        n = self.count(user_id)
        shutil.rmtree(self._user_folder(user_id), ignore_errors=True)
        return n

    def scrub(self) -> None:
        """Nothing to rewrite: a user's files are deleted whole."""

    def raw_paths(self) -> list[Path]:
        return [self.folder]

    def export(self, dest: Path) -> int:
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True, mode=0o700)
        total = 0
        for folder in sorted(p for p in self.folder.iterdir() if p.is_dir()) if self.folder.exists() else []:
            shutil.copytree(folder, dest / folder.name, dirs_exist_ok=True)
            total += sum(self._rows(f) for f in folder.glob("*.parquet"))
        return total

    @staticmethod
    def _rows(path: Path) -> int:
        con = duckdb.connect()
        try:
            return int(con.execute(f"SELECT count(*) FROM read_parquet('{_literal(path)}')").fetchone()[0])
        finally:
            con.close()

    def _users_in(self, folder: Path) -> set[str]:
        con = duckdb.connect()
        try:
            return {r[0] for r in con.execute(f"SELECT DISTINCT user_id FROM read_parquet('{_literal(folder)}/*.parquet')").fetchall()}
        finally:
            con.close()

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        loaded = 0
        src = Path(src)
        for folder in sorted(p for p in src.iterdir() if p.is_dir()) if src.exists() else []:
            if not list(folder.glob("*.parquet")) or any(is_erased(u) for u in self._users_in(folder)):
                continue
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copytree(folder, self.folder / folder.name, dirs_exist_ok=True)
            loaded += sum(self._rows(f) for f in folder.glob("*.parquet"))
        return loaded

    def forget_in_export(self, src: Path, user_id: str) -> int:
        folder = Path(src) / user_file_stem(user_id)
        if not folder.exists():
            return 0
        n = sum(self._rows(f) for f in folder.glob("*.parquet"))
        shutil.rmtree(folder)
        return n


def user_data_places(settings) -> list[ColdTurns]:
    """For stores.places (the registry): policy B's Parquet folder (files written under policy B stay
    user data after the policy changes, so it is listed whatever the policy)."""
    try:
        return [ColdTurns.for_settings(settings)]
    except InvalidInput:  # an s3:// location: nothing can have been written there by this version
        return []
