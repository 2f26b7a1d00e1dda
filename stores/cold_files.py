"""Where policy B's Parquet files live (stores.cold_turns): a local folder or an S3 prefix.

Both hold ``<root>/<user stem>/<name>.parquet``, one folder (or key prefix) per user, and offer the same
five operations: ``stems`` (the user folders present), ``fetched(stem)`` (the user's files as local paths
DuckDB can read), ``put(stem, name, src)``, ``remove(stem)`` and ``raw_paths``.

S3 goes through stores.s3 (boto3, path-style addressing): the embedded DuckDB has no httpfs extension,
so files are written locally and uploaded, and read back by downloading the user's objects into a private
temporary folder (0700) that is removed as soon as the query is done: no local copy outlives a call.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

SUFFIX = ".parquet"


class LocalColdFiles:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder).expanduser()
        self.url = str(self.folder)

    def stems(self) -> list[str]:
        return sorted(p.name for p in self.folder.iterdir() if p.is_dir()) if self.folder.exists() else []

    @contextlib.contextmanager
    def fetched(self, stem: str) -> Iterator[list[Path]]:
        folder = self.folder / stem
        yield sorted(folder.glob("*" + SUFFIX)) if folder.exists() else []

    def put(self, stem: str, name: str, src: Path) -> None:
        """Copied under a temporary name and renamed: a crash never leaves half a file that reads."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder = self.folder / stem
        folder.mkdir(exist_ok=True, mode=0o700)
        target = folder / name
        tmp = target.with_suffix(".tmp")
        shutil.copyfile(src, tmp)
        tmp.chmod(0o600)
        tmp.replace(target)

    def remove(self, stem: str) -> None:
        shutil.rmtree(self.folder / stem, ignore_errors=True)

    def raw_paths(self) -> list[Path]:
        return [self.folder]


class S3ColdFiles:
    """``s3://bucket/prefix``; the endpoint, region and credentials as for backups (stores.s3)."""

    def __init__(self, url: str, settings=None):
        from .s3 import S3Location

        self.s3 = S3Location.from_url(url, settings, field="storage_policy_b_location")
        self.url = self.s3.url

    def _user_prefix(self, stem: str) -> str:
        return self.s3.key_of(stem) + "/"

    def _user_keys(self, stem: str) -> list[str]:
        return sorted(k for k in self.s3.keys_under(self._user_prefix(stem)) if k.endswith(SUFFIX))

    def stems(self) -> list[str]:
        root = self.s3.key_of() + "/" if self.s3.prefix else ""
        return sorted({k[len(root):].partition("/")[0] for k in self.s3.keys_under(root)
                       if "/" in k[len(root):] and k.endswith(SUFFIX)})

    @contextlib.contextmanager
    def fetched(self, stem: str) -> Iterator[list[Path]]:
        keys = self._user_keys(stem)
        if not keys:
            yield []
            return
        folder = Path(tempfile.mkdtemp(prefix="lumina-cold-"))  # 0700: only this process reads it
        try:
            paths = []
            for key in keys:
                target = folder / key.rsplit("/", 1)[1]
                self.s3.client.download_file(self.s3.bucket, key, str(target), Config=self.s3.transfer)
                paths.append(target)
            yield paths
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def put(self, stem: str, name: str, src: Path) -> None:
        """One PUT (or a multipart upload completed at once): a reader never sees half an object."""
        self.s3.ensure_bucket()
        self.s3.client.upload_file(str(src), self.s3.bucket, self.s3.key_of(stem, name), Config=self.s3.transfer)

    def remove(self, stem: str) -> None:
        for key in self.s3.keys_under(self._user_prefix(stem)):
            self.s3.client.delete_object(Bucket=self.s3.bucket, Key=key)
        self._remove_old_versions(self._user_prefix(stem))

    def _remove_old_versions(self, prefix: str) -> None:
        """On a bucket with versioning on, a deleted object's earlier versions would stay readable:
        they are deleted too (erasure must reach them)."""
        client, bucket = self.s3.client, self.s3.bucket
        try:
            status = client.get_bucket_versioning(Bucket=bucket).get("Status")
        except client.exceptions.NoSuchBucket:
            return
        if status not in ("Enabled", "Suspended"):
            return
        for page in client.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
            for entry in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]:
                client.delete_object(Bucket=bucket, Key=entry["Key"], VersionId=entry["VersionId"])

    def raw_paths(self) -> list[Path]:
        return []  # remote: the residue test reads the objects through ``export``


def cold_files(location: str | Path, settings=None) -> LocalColdFiles | S3ColdFiles:
    if str(location).startswith("s3://"):
        return S3ColdFiles(str(location), settings)
    return LocalColdFiles(location)
