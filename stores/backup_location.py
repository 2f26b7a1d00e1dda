"""Where backups live: a local folder (this module) or S3 (stores.s3), behind one small interface.

A snapshot is a folder ``<snapshot id>/`` of files with ``manifest.json`` written last; a snapshot without
its manifest (an interrupted backup) is never listed, restored or pruned into. The erasure ledger
(``erasure-ledger.json``) sits beside the snapshots.

A backup is staged in ``.partial-<id>/`` with a ``.writer`` file naming its process (host and pid): a
partial whose writer is gone (a killed backup) is stale, and the next backup, ``backups --list`` and
every erasure remove it (stores.backup.clean_partials).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from .backup_staging import (  # noqa: F401 - the staging names, read by the backup code and tests from here
    MANIFEST, PARTIAL, WRITER, write_private as _write_private, write_writer, writer_alive,
)
from .errors import InvalidInput


def open_location(where: str, settings=None):
    """A folder path or ``s3://bucket/prefix``."""
    if not isinstance(where, str) or not where.strip():
        raise InvalidInput("backup_location", "must be a folder or s3://bucket/prefix")
    if where.startswith("s3://"):
        from .s3 import S3Location

        return S3Location.from_url(where, settings)
    return LocalLocation(Path(where))


class LocalLocation:
    remote = False

    def __init__(self, root: Path):
        self.root = Path(root).expanduser().resolve()
        self.url = str(self.root)

    def _ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)

    def snapshots(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if p.is_dir() and not p.name.startswith(".") and (p / MANIFEST).exists())

    def stage(self, snapshot_id: str) -> Path:
        """A folder to write the snapshot into before ``commit``."""
        self._ensure()
        staged = self.root / f"{PARTIAL}{snapshot_id}"
        if staged.exists():
            shutil.rmtree(staged)
        staged.mkdir(mode=0o700)
        write_writer(staged)
        return staged

    def commit(self, snapshot_id: str, staged: Path, manifest_text: str) -> None:
        (staged / WRITER).unlink(missing_ok=True)
        _write_private(staged / MANIFEST, manifest_text)  # last: until now the snapshot did not exist
        os.replace(staged, self.root / snapshot_id)

    def abandon(self, staged: Path) -> None:
        shutil.rmtree(staged, ignore_errors=True)

    @contextlib.contextmanager
    def fetch(self, snapshot_id: str) -> Iterator[Path]:
        folder = self.root / snapshot_id
        if not (folder / MANIFEST).exists():
            raise InvalidInput("snapshot", f"{snapshot_id!r} is not a complete backup in {self.url}")
        yield folder

    def manifest_text(self, snapshot_id: str) -> str:
        return (self.root / snapshot_id / MANIFEST).read_text(encoding="utf-8")

    def rewrite(self, snapshot_id: str, folder: Path, changed: list[str], manifest_text: str) -> None:
        """Files of ``folder`` (the fetched snapshot) were rewritten in place; write the manifest."""
        tmp = folder / (MANIFEST + ".tmp")
        _write_private(tmp, manifest_text)
        os.replace(tmp, folder / MANIFEST)

    def delete(self, snapshot_id: str) -> None:
        shutil.rmtree(self.root / snapshot_id, ignore_errors=True)

    def partials(self) -> list[str]:
        """Ids of staged snapshots that have no manifest (being written, or left by a killed backup)."""
        return sorted(p.name[len(PARTIAL):] for p in self.root.glob(PARTIAL + "*")) if self.root.is_dir() else []

    def partial_live(self, snapshot_id: str) -> bool:
        return writer_alive(self.root / f"{PARTIAL}{snapshot_id}")

    def partial_folder(self, snapshot_id: str) -> Path | None:
        """The staged files of a partial, for an erasure to scrub in place while its writer lives."""
        return self.root / f"{PARTIAL}{snapshot_id}"

    def remove_partial(self, snapshot_id: str) -> None:
        shutil.rmtree(self.root / f"{PARTIAL}{snapshot_id}", ignore_errors=True)

    def read_text(self, name: str) -> str | None:
        try:
            return (self.root / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def write_text(self, name: str, text: str) -> None:
        self._ensure()
        tmp = self.root / (name + ".tmp")
        _write_private(tmp, text)
        os.replace(tmp, self.root / name)

    def raw_paths(self) -> list[Path]:
        return [self.root]
