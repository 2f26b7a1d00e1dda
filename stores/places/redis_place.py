"""The mid-term tier (Redis keys) as a UserDataPlace."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .. import ids
from . import jsonl

FILE = "keys.jsonl"


def key_user(key: str) -> str | None:
    """The user a key of ours belongs to: ``lumina:{<user>}:...`` (ids never contain braces)."""
    head = f"{ids.REDIS_PREFIX}:{{"
    if not key.startswith(head):
        return None
    end = key.find("}:", len(head))
    return key[len(head):end] if end > 0 else None


class RedisPlace:
    name = "midterm.redis"

    def __init__(self, midterm, snapshot_file: Path | None):
        """``snapshot_file``: the embedded server's RDB file (None for a production server)."""
        self.midterm, self.snapshot_file = midterm, snapshot_file

    def count(self, user_id: str) -> int:
        return self.midterm.count(user_id)

    def erase(self, user_id: str) -> int:
        # delete_user matches the user's hash tag exactly ({alice} cannot match {alice2}; braces are
        # literal in Redis globs and validate_id refuses glob characters).
        return self.midterm.delete_user(user_id)

    def scrub(self) -> None:
        self.midterm.save_snapshot()

    def raw_paths(self) -> list[Path]:
        return [self.snapshot_file] if self.snapshot_file is not None else []

    def export(self, dest: Path) -> int:
        records = self.midterm.dump_keys()
        return jsonl.write_rows(dest / FILE, ((key_user(r["key"]), r) for r in records))

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        records = list(jsonl.kept_rows(src / FILE, is_erased))
        return self.midterm.load_keys(records)

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return jsonl.forget(src / FILE, user_id)
