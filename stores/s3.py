"""Backups on S3 (or MinIO, SeaweedFS, any S3 API) through boto3: endpoint URL, path-style addressing.

Same interface as stores.backup_location.LocalLocation. A snapshot is staged in a local temporary folder,
uploaded file by file (multipart above ``s3_multipart_mb``), and its ``manifest.json`` is put last: a
backup interrupted mid-upload has no manifest, is never listed, and its objects are removed when the
failure is seen (``abandon``). Credentials come from boto3's usual chain (AWS_ACCESS_KEY_ID...).

The local staging folder is ``staging_root/.partial-<id>`` when the caller gives a root (the data
directory's ``backup-staging``, so a killed backup's staged files are found and removed by the next one),
else a temporary folder. A partial is a staged folder or snapshot objects without a manifest.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from .backup_staging import MANIFEST, PARTIAL, WRITER, write_writer, writer_alive
from .errors import InvalidInput, StoreUnavailable

_MB = 1024 * 1024


class S3Location:
    remote = True

    def __init__(self, client, bucket: str, prefix: str, multipart_mb: int = 8):
        self.client, self.bucket, self.prefix = client, bucket, prefix.strip("/")
        self.url = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        from boto3.s3.transfer import TransferConfig

        self.transfer = TransferConfig(multipart_threshold=multipart_mb * _MB, multipart_chunksize=multipart_mb * _MB)
        self.progress: Callable[[int], None] | None = None
        """Called with the bytes sent as uploads progress (reporting; tests use it to fail mid-upload)."""
        self._staged: dict[str, str] = {}
        self.staging_root: Path | None = None

    @classmethod
    def from_url(cls, url: str, settings=None, field: str = "backup_location") -> "S3Location":
        """``field``: the setting ``url`` came from, named in the error when it is malformed."""
        import boto3
        from botocore.config import Config

        rest = url[len("s3://"):]
        bucket, _, prefix = rest.partition("/")
        if not bucket:
            raise InvalidInput(field, f"{url!r}: expected s3://bucket/prefix")
        endpoint = getattr(settings, "s3_endpoint_url", None)
        region = getattr(settings, "s3_region", "us-east-1")
        client = boto3.client("s3", endpoint_url=endpoint, region_name=region,
                              # Checksums only where the API requires them: botocore's default streams uploads
                              # with a trailing CRC (aws-chunked) that not every S3 server reads (SeaweedFS
                              # then waits out the 60 s read timeout per file).
                              config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3},
                                            request_checksum_calculation="when_required",
                                            response_checksum_validation="when_required"))
        return cls(client, bucket, prefix, getattr(settings, "s3_multipart_mb", 8))

    # --- keys -------------------------------------------------------------------------------------
    def key_of(self, *parts: str) -> str:
        """The object key of ``parts`` under this location's prefix."""
        return "/".join(p for p in (self.prefix, *parts) if p)

    def keys_under(self, under: str) -> list[str]:
        """Every object key starting with ``under`` ([] when the bucket does not exist yet)."""
        keys: list[str] = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=under):
                keys += [o["Key"] for o in page.get("Contents", [])]
        except self.client.exceptions.NoSuchBucket:
            return []
        except Exception as exc:  # botocore's connection errors share no useful base here
            if "Could not connect" in str(exc) or "Connect timeout" in str(exc):
                raise StoreUnavailable("backups", f"cannot reach {self.url}: {exc}") from exc
            raise
        return keys

    def _ids(self) -> dict[str, bool]:
        """snapshot id -> whether its manifest exists."""
        root = self.key_of() + "/" if self.prefix else ""
        found: dict[str, bool] = {}
        for key in self.keys_under(root):
            rel = key[len(root):]
            if "/" not in rel:
                continue  # the ledger and other top-level objects
            sid, _, name = rel.partition("/")
            found[sid] = found.get(sid, False) or name == MANIFEST
        return found

    def ensure_bucket(self) -> None:
        """Create the bucket unless it exists (before a first upload)."""
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except Exception:  # noqa: BLE001 - missing (404) or not ours; creating says which
            self.client.create_bucket(Bucket=self.bucket)

    # --- the location interface -------------------------------------------------------------------
    def snapshots(self) -> list[str]:
        return sorted(sid for sid, complete in self._ids().items() if complete)

    def _local_partials(self) -> list[str]:
        if self.staging_root is None or not self.staging_root.is_dir():
            return []
        return [p.name[len(PARTIAL):] for p in self.staging_root.glob(PARTIAL + "*")]

    def partials(self) -> list[str]:
        remote = [sid for sid, complete in self._ids().items() if not complete]
        return sorted(set(remote) | set(self._local_partials()))

    def partial_live(self, snapshot_id: str) -> bool:
        """Only a backup staged on this machine can be probed; remote parts without one are stale."""
        folder = self.partial_folder(snapshot_id)
        return folder is not None and writer_alive(folder)

    def partial_folder(self, snapshot_id: str) -> Path | None:
        if self.staging_root is None:
            return None
        folder = self.staging_root / f"{PARTIAL}{snapshot_id}"
        return folder if folder.is_dir() else None

    def remove_partial(self, snapshot_id: str) -> None:
        folder = self.partial_folder(snapshot_id)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        self.delete(snapshot_id)

    def stage(self, snapshot_id: str) -> Path:
        if self.staging_root is not None:
            self.staging_root.mkdir(parents=True, exist_ok=True, mode=0o700)
            staged = self.staging_root / f"{PARTIAL}{snapshot_id}"
            shutil.rmtree(staged, ignore_errors=True)
            staged.mkdir(mode=0o700)
        else:
            staged = Path(tempfile.mkdtemp(prefix="lumina-backup-"))
        write_writer(staged)
        self._staged[str(staged)] = snapshot_id
        return staged

    def _upload(self, path: Path, key: str) -> None:
        if path.stat().st_size == 0:
            # Empty files are not uploaded: after a PUT of no bytes SeaweedFS leaves the keep-alive
            # connection stuck and the next request waits out the 60 s read timeout. The manifest lists
            # them (0 bytes), and ``fetch`` recreates them.
            return
        self.client.upload_file(str(path), self.bucket, key, Config=self.transfer, Callback=self.progress)

    def commit(self, snapshot_id: str, staged: Path, manifest_text: str) -> None:
        self.ensure_bucket()
        for path in sorted(p for p in staged.rglob("*") if p.is_file() and p.name != WRITER):
            self._upload(path, self.key_of(snapshot_id, str(path.relative_to(staged))))
        self.client.put_object(Bucket=self.bucket, Key=self.key_of(snapshot_id, MANIFEST), Body=manifest_text.encode("utf-8"))
        self._staged.pop(str(staged), None)
        shutil.rmtree(staged, ignore_errors=True)

    def abandon(self, staged: Path) -> None:
        snapshot_id = self._staged.pop(str(staged), None)
        shutil.rmtree(staged, ignore_errors=True)
        if snapshot_id is not None:
            self.delete(snapshot_id)  # the parts that went up; no manifest, so it was never listed

    def manifest_text(self, snapshot_id: str) -> str:
        body = self.client.get_object(Bucket=self.bucket, Key=self.key_of(snapshot_id, MANIFEST))["Body"]
        return body.read().decode("utf-8")

    @contextlib.contextmanager
    def fetch(self, snapshot_id: str) -> Iterator[Path]:
        if snapshot_id not in self.snapshots():
            raise InvalidInput("snapshot", f"{snapshot_id!r} is not a complete backup in {self.url}")
        folder = Path(tempfile.mkdtemp(prefix="lumina-restore-"))
        try:
            root = self.key_of(snapshot_id) + "/"
            for key in self.keys_under(root):
                target = folder / key[len(root):]
                target.parent.mkdir(parents=True, exist_ok=True)
                self.client.download_file(self.bucket, key, str(target), Config=self.transfer)
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            for name, entry in manifest.get("places", {}).items():
                for rel, f in entry.get("files", {}).items():
                    target = folder / name / rel
                    if f.get("bytes") == 0 and not target.exists():
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.touch()
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def rewrite(self, snapshot_id: str, folder: Path, changed: list[str], manifest_text: str) -> None:
        """Upload the rewritten files, remove objects whose files went, then put the new manifest."""
        local = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.stat().st_size}
        for rel in changed:
            if rel in local:
                self._upload(folder / rel, self.key_of(snapshot_id, rel))
        root = self.key_of(snapshot_id) + "/"
        for key in self.keys_under(root):
            if key[len(root):] not in local and key[len(root):] != MANIFEST:
                self.client.delete_object(Bucket=self.bucket, Key=key)
        self.client.put_object(Bucket=self.bucket, Key=self.key_of(snapshot_id, MANIFEST), Body=manifest_text.encode("utf-8"))

    def delete(self, snapshot_id: str) -> None:
        for key in self.keys_under(self.key_of(snapshot_id) + "/"):
            self.client.delete_object(Bucket=self.bucket, Key=key)

    def read_text(self, name: str) -> str | None:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.key_of(name))["Body"].read().decode("utf-8")
        except self.client.exceptions.NoSuchKey:
            return None
        except self.client.exceptions.NoSuchBucket:
            return None

    def write_text(self, name: str, text: str) -> None:
        self.ensure_bucket()
        self.client.put_object(Bucket=self.bucket, Key=self.key_of(name), Body=text.encode("utf-8"))

    def raw_paths(self) -> list[Path]:
        return []  # remote: the residue test reads its objects through ``fetch`` and ``read_text``
