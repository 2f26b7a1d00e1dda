"""L9 storage policy B: raw turns past their retention, moved out of the archive into Parquet files that
deliberate recall still reads through DuckDB's ``read_parquet``.

Layout: ``<location>/<user hash>/turns-<stamp>.parquet`` (one folder per user, named by
``lumina_memory.stores.ids.user_file_stem``, so erasure removes a folder and nothing else). The location is a local
folder (files 0600, folders 0700) or ``s3://bucket/prefix`` (stores.cold_files: written locally, uploaded
with boto3, downloaded to a private temporary folder to be read). A file appears whole or not at all.
A retention run that crashed after writing a file and before deleting the archive rows writes those
turns again next time: reads keep one row per turn id.

A UserDataPlace: count, erase, export and restore per user, like every other place.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

import duckdb

from .cold_files import SUFFIX, cold_files
from .ids import user_file_stem
from .models import Turn

_COLS = ("turn_id", "source_id", "user_id", "segment_id", "speaker", "text", "ts")
_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE")


def _literal(path: Path) -> str:
    return str(path).replace("'", "''")


def _files_sql(files: Sequence[Path]) -> str:
    return f"read_parquet([{', '.join(repr(_literal(f)) for f in files)}])"


class ColdTurns:
    name = "cold_turns"

    def __init__(self, location: str | Path, settings=None):
        """``settings``: for an ``s3://`` location, the endpoint, region and multipart size (stores.s3)."""
        self.files = cold_files(location, settings)

    @classmethod
    def for_settings(cls, settings) -> "ColdTurns":
        return cls(settings.storage_policy_b_location or settings.resolved_data_dir() / "logs", settings)

    def write(self, user_id: str, turns: Sequence[Turn]) -> str | None:
        """One Parquet file with ``turns`` (all of ``user_id``); returns its name, None when there are none."""
        if not turns:
            return None
        if any(t.user_id != user_id for t in turns):
            raise ValueError("every turn must belong to user_id")
        name = f"turns-{time.time_ns()}{SUFFIX}"
        columns = [[getattr(t, c) for t in turns] for c in _COLS]
        staging = Path(tempfile.mkdtemp(prefix="lumina-cold-"))  # 0700; removed once the file is placed
        try:
            con = duckdb.connect()
            try:
                select = ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in zip(_COLS, _TYPES))
                con.sql(f"SELECT {select}", params=columns).write_parquet(str(staging / name))
            finally:
                con.close()
            self.files.put(user_file_stem(user_id), name, staging / name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return name

    def read(self, user_id: str, contains: str | None = None, limit: int = 100) -> list[Turn]:
        """The user's cold turns in conversation order (optionally only those whose text contains
        ``contains``, case-insensitive), at most ``limit``: deliberate recall of what retention moved out."""
        where, params = "user_id = ?", [user_id]
        if contains:
            where += " AND contains(lower(text), lower(?))"
            params.append(contains)
        with self.files.fetched(user_file_stem(user_id)) as files:
            if not files:
                return []
            sql = (f"SELECT {', '.join(_COLS)} FROM {_files_sql(files)} WHERE {where} "
                   "QUALIFY row_number() OVER (PARTITION BY turn_id) = 1 ORDER BY ts, turn_id LIMIT ?")
            rows = self._query(sql, [*params, int(limit)])
        return [Turn(**dict(zip(_COLS, r))) for r in rows]

    def search(self, user_id: str, terms: Sequence[str], limit: int) -> list[tuple[Turn, int]]:
        """The user's cold turns containing the most of ``terms`` (case-insensitive), with how many each
        contains, best first (then in conversation order); only turns containing at least one."""
        wanted = [t for t in dict.fromkeys(terms) if t]
        if not wanted or limit <= 0:
            return []
        matched = " + ".join("CAST(contains(lower(text), lower(?)) AS INTEGER)" for _ in wanted)
        with self.files.fetched(user_file_stem(user_id)) as files:
            if not files:
                return []
            sql = (f"SELECT {', '.join(_COLS)}, {matched} AS matched FROM {_files_sql(files)} WHERE user_id = ? "
                   "QUALIFY row_number() OVER (PARTITION BY turn_id) = 1 AND matched > 0 "
                   "ORDER BY matched DESC, ts, turn_id LIMIT ?")
            rows = self._query(sql, [*wanted, user_id, int(limit)])
        return [(Turn(**dict(zip(_COLS, r[:-1]))), int(r[-1])) for r in rows]

    @staticmethod
    def _query(sql: str, params: list | None = None) -> list[tuple]:
        con = duckdb.connect()
        try:
            return con.execute(sql, params or []).fetchall()
        finally:
            con.close()

    # --- UserDataPlace ----------------------------------------------------------------------------
    def count(self, user_id: str) -> int:
        with self.files.fetched(user_file_stem(user_id)) as files:
            if not files:
                return 0
            return int(self._query(f"SELECT count(DISTINCT turn_id) FROM {_files_sql(files)} WHERE user_id = ?",
                                   [user_id])[0][0])

    def erase(self, user_id: str) -> int:
        """The user's folder (or every object under its key prefix) goes whole: it holds only their turns."""
        n = self.count(user_id)
        self.files.remove(user_file_stem(user_id))
        return n

    def scrub(self) -> None:
        """Nothing to rewrite: a user's files are deleted whole."""

    def raw_paths(self) -> list[Path]:
        return self.files.raw_paths()

    def export(self, dest: Path) -> int:
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True, mode=0o700)
        total = 0
        for stem in self.files.stems():
            with self.files.fetched(stem) as files:
                (dest / stem).mkdir(exist_ok=True, mode=0o700)
                for f in files:
                    shutil.copyfile(f, dest / stem / f.name)
                    total += self._rows(f)
        return total

    @classmethod
    def _rows(cls, path: Path) -> int:
        return int(cls._query(f"SELECT count(*) FROM read_parquet('{_literal(path)}')")[0][0])

    @classmethod
    def _users_in(cls, folder: Path) -> set[str]:
        return {r[0] for r in cls._query(f"SELECT DISTINCT user_id FROM read_parquet('{_literal(folder)}/*.parquet')")}

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        """Files keep their names, so restoring the same snapshot twice adds nothing."""
        loaded = 0
        src = Path(src)
        for folder in sorted(p for p in src.iterdir() if p.is_dir()) if src.exists() else []:
            files = sorted(folder.glob("*" + SUFFIX))
            if not files or any(is_erased(u) for u in self._users_in(folder)):
                continue
            for f in files:
                self.files.put(folder.name, f.name, f)
                loaded += self._rows(f)
        return loaded

    def forget_in_export(self, src: Path, user_id: str) -> int:
        folder = Path(src) / user_file_stem(user_id)
        if not folder.exists():
            return 0
        n = sum(self._rows(f) for f in folder.glob("*" + SUFFIX))
        shutil.rmtree(folder)
        return n


def user_data_places(settings) -> list[ColdTurns]:
    """For stores.places (the registry): policy B's Parquet folder or S3 prefix (files written under
    policy B stay user data after the policy changes, so it is listed whatever the policy)."""
    return [ColdTurns.for_settings(settings)]
