"""The memory's secret: signs erase confirmation tokens, keys the audit log's chain and its sealed head
(stores.audit_chain: without it nobody can rebuild the chain after editing the log), and keys the hashes that
stand for user ids in the audit log and the erasure ledger (so neither ever holds an erased user's id in clear).

Embedded, it is ``lumina.secret`` in the data dir, made on first use. In server mode (``database_url`` set) no
replica's data dir is shared, and the secret must not sit in the database it seals (whoever can edit the audit
rows could then re-seal them): every process takes it from the setting ``secret_key`` (LUMINA_SECRET_KEY), and
server mode refuses to run without it (``MissingSecret``)."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from .errors import InvalidInput

SECRET_FILE = "lumina.secret"
SECRET_MIN_CHARS = 32


class MissingSecret(InvalidInput):
    """Server mode without a usable LUMINA_SECRET_KEY."""

    def __init__(self, problem: str):
        super().__init__("secret_key", f"LUMINA_SECRET_KEY {problem}")


def memory_secret(settings) -> bytes:
    """The secret of the memory ``settings`` open: LUMINA_SECRET_KEY in server mode (required there), the data
    dir's ``lumina.secret`` otherwise (made on first use)."""
    if not getattr(settings, "database_url", None):
        return data_dir_secret(settings.resolved_data_dir())
    return _setting_secret(settings)


def existing_memory_secret(settings) -> bytes | None:
    """``memory_secret`` without creating one (read-only checks); None where the data dir has none."""
    if not getattr(settings, "database_url", None):
        return existing_secret(settings.resolved_data_dir())
    return _setting_secret(settings)


def _setting_secret(settings) -> bytes:
    secret = getattr(settings, "secret_key", None)
    if secret is None:
        raise MissingSecret(
            "is not set: server mode (DATABASE_URI) needs the memory's secret in every process, the same value "
            f"everywhere (64 hex digits, e.g. a data dir's {SECRET_FILE}, or {SECRET_MIN_CHARS}+ characters); it "
            "signs erase tokens and seals the audit chain, so it is never kept in the database")
    text = secret.get_secret_value().strip()
    if len(text) == 64 and all(c in "0123456789abcdefABCDEF" for c in text):
        return bytes.fromhex(text)  # a data dir's lumina.secret: its tokens and audit chain stay valid
    if len(text) < SECRET_MIN_CHARS:
        raise MissingSecret(f"is too short: {SECRET_MIN_CHARS} characters at least (or 64 hex digits)")
    try:
        return hashlib.sha256(b"lumina-secret|" + text.encode("utf-8")).digest()
    except UnicodeEncodeError:
        raise MissingSecret("is not valid Unicode text") from None


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
