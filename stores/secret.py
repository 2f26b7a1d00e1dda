"""The data directory's secret: signs erase confirmation tokens, keys the audit log's chain and its sealed
head (stores.audit_chain: without it nobody can rebuild the chain after editing the log), and keys the
hashes that stand for user ids in the audit log and the erasure ledger (so neither ever holds an erased
user's id in clear)."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SECRET_FILE = "lumina.secret"


def existing_secret(data_dir: Path) -> bytes | None:
    """The secret of ``data_dir`` if it has one; None otherwise (creates nothing: for read-only checks)."""
    try:
        return bytes.fromhex((Path(data_dir) / SECRET_FILE).read_text(encoding="ascii").strip())
    except FileNotFoundError:
        return None


def data_dir_secret(data_dir: Path) -> bytes:
    """The secret of ``data_dir``, created (0600, 32 random bytes) on first use."""
    found = existing_secret(data_dir)
    if found is not None:
        return found
    path = Path(data_dir) / SECRET_FILE
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
