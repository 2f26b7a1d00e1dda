"""The export format of most places: one JSON object per line, each tagged with the user it belongs to.

Text stays readable (``ensure_ascii=False``) on purpose: the residue test scans backups' raw bytes, and an
encoding that hid text (base64, compression) would let a leak pass unseen. The tag lets erasure rewrite a
backup without any store open (``forget``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

USER = "user_id"
RECORD = "record"


def private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 (backups hold the most personal data there is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)


def write_rows(path: Path, rows: Iterable[tuple[str | None, dict[str, Any]]]) -> int:
    """Write (user_id, record) pairs; returns how many."""
    private_file(path)
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for user_id, record in rows:
            out.write(json.dumps({USER: user_id, RECORD: record}, ensure_ascii=False) + "\n")
            n += 1
        out.flush()
        os.fsync(out.fileno())
    return n


def read_rows(path: Path) -> Iterator[tuple[str | None, dict[str, Any]]]:
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                yield row.get(USER), row[RECORD]


def kept_rows(path: Path, is_erased: Callable[[str], bool]) -> Iterator[dict[str, Any]]:
    """Records of ``path`` whose user is not erased (records of no user are kept)."""
    for user_id, record in read_rows(path):
        if user_id is None or not is_erased(user_id):
            yield record


def forget(path: Path, user_id: str) -> int:
    """Rewrite ``path`` without the user's rows (temp file + rename); returns the rows removed."""
    if not path.exists():
        return 0
    rows = list(read_rows(path))
    kept = [(u, r) for u, r in rows if u != user_id]
    if len(kept) == len(rows):
        return 0
    tmp = path.with_name(path.name + ".tmp")
    write_rows(tmp, kept)
    os.replace(tmp, path)
    return len(rows) - len(kept)


def forget_all(folder: Path, user_id: str) -> int:
    return sum(forget(p, user_id) for p in sorted(folder.glob("*.jsonl")))
