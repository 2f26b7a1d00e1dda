"""The data directory's secret: signs erase confirmation tokens and keys the hashes that stand for user
ids in the audit log and the erasure ledger (so neither ever holds an erased user's id in clear)."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SECRET_FILE = "lumina.secret"


def data_dir_secret(data_dir: Path) -> bytes:
    """The secret of ``data_dir``, created (0600, 32 random bytes) on first use."""
    path = Path(data_dir) / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(value + "\n")
        out.flush()
        os.fsync(out.fileno())
    return bytes.fromhex(value)


def keyed_hash(key: bytes, user_id: str) -> str:
    """Stands for a user id where the id itself must not be kept (audit rows, the erasure ledger)."""
    return "u:" + hmac.new(key, f"user|{user_id}".encode("utf-8"), hashlib.sha256).hexdigest()[:32]
