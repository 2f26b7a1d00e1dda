"""The audit log's keyed chain and its sealed head: what makes the log tamper-evident (stores.audit).

Each row's hash is HMAC(the data dir's secret, "audit-row|" + [previous hash, seq, at, event, actor,
user_ref, detail] as canonical JSON): without the secret nobody can rebuild the chain after editing,
inserting or removing a row. Removing the last rows leaves an intact chain, so the row count and the last
hash are also kept apart from the log, in the data dir's private ``audit-head.json``, sealed by an HMAC of
its own over (rows, last seq, hash) and rewritten on every append: a shorter log no longer ends at that head.

Logs of earlier versions have no head file: their rows were chained with plain sha256 (which anyone who
can write the file can rebuild) or not at all. ``legacy_status`` checks them as what they are; the first
append adopts them into the keyed chain and records, in the log itself, what they were found to be.
Nothing here writes the log: verification only reads.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
HEAD_FILE = "audit-head.json"
ADOPTED_EVENT = "audit_chain_adopted"
CHAINED = ("seq", "at", "event", "actor", "user_ref", "detail")


def _body(prev: str, row: dict[str, Any]) -> bytes:
    return json.dumps([prev, *[row[c] for c in CHAINED]], ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def row_hash(key: bytes, prev: str, row: dict[str, Any]) -> str:
    return hmac.new(key, b"audit-row|" + _body(prev, row), hashlib.sha256).hexdigest()


def unkeyed_row_hash(prev: str, row: dict[str, Any]) -> str:
    """The plain sha256 link of logs written by earlier versions (checked, never written)."""
    return hashlib.sha256(_body(prev, row)).hexdigest()


# --- the head file ------------------------------------------------------------------------------------------

def _head_seal(key: bytes, rows: int, last_seq: int, digest: str) -> str:
    return hmac.new(key, f"audit-head|{rows}|{last_seq}|{digest}".encode("ascii"), hashlib.sha256).hexdigest()


def head_text(key: bytes, rows: int, last_seq: int, digest: str) -> str:
    return json.dumps({"rows": rows, "last_seq": last_seq, "hash": digest,
                       "seal": _head_seal(key, rows, last_seq, digest)}, sort_keys=True)


def write_head(path: Path, key: bytes, rows: int, last_seq: int, digest: str) -> None:
    """Atomically, private (0600): a crash leaves the old head or the new one, never half of one."""
    from .backup_location import LocalLocation

    LocalLocation(path.parent).write_text(path.name, head_text(key, rows, last_seq, digest))


def read_head(path: Path) -> dict[str, Any] | None:
    """The head as written (None: no file); a file that is not a head reads as {} (its seal fails)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def head_is_sealed(key: bytes, head: dict[str, Any]) -> bool:
    try:
        rows, last_seq, digest, seal = int(head["rows"]), int(head["last_seq"]), str(head["hash"]), str(head["seal"])
    except (KeyError, TypeError, ValueError):
        return False
    return hmac.compare_digest(seal, _head_seal(key, rows, last_seq, digest))


# --- checking rows ------------------------------------------------------------------------------------------

def first_break(key: bytes, rows: list[dict[str, Any]]) -> tuple[int, str] | None:
    """(seq, problem) of the first row that does not belong to the keyed chain; None when every row does."""
    prev = GENESIS
    for row in rows:
        if not row["hash"]:
            return row["seq"], ("row has no hash: it was not written through the audit log (inserted by hand, "
                                "or by DuckDBArchive.append_audit)")
        if row["prev_hash"] != prev:
            return row["seq"], "link to the previous row changed (a row was removed, inserted or edited)"
        if not hmac.compare_digest(row_hash(key, prev, row), row["hash"]):
            return row["seq"], ("row content changed, or its hash was not made with this data dir's key "
                                "(the chain was rebuilt without it)")
        prev = row["hash"]
    return None


@dataclass(frozen=True)
class Legacy:
    """What the rows of a log without a head file are: 'keyed' (this key, the head went missing),
    'unkeyed' (an intact sha256 chain of earlier versions, rows without hash aside), 'foreign' (consistent
    links under a key that is not this data dir's: restored from another data dir's backup) or 'broken'."""

    kind: str
    text: str
    broken_at: int | None = None


def legacy_status(key: bytes, rows: list[dict[str, Any]]) -> Legacy:
    if first_break(key, rows) is None:
        return Legacy("keyed", f"{len(rows)} rows sealed under this data dir's key, intact, but {HEAD_FILE} was "
                      "missing or not sealed with this key (removed rows at their end could not be detected)")
    hashed = [r for r in rows if r["hash"]]
    unhashed = len(rows) - len(hashed)
    without = (f"; {unhashed} rows have no hash (written before any chain existed): they cannot be verified"
               if unhashed else "")
    linked = all(r["prev_hash"] == p for r, p in zip(hashed, [GENESIS, *[h["hash"] for h in hashed]]))
    if hashed and linked and not any(unkeyed_row_hash(r["prev_hash"], r) == r["hash"] for r in hashed):
        return Legacy("foreign", f"{len(hashed)} rows sealed under a key that is not this data dir's (restored "
                      "from another data dir's backup): their links are consistent, their hashes cannot be "
                      "checked here" + without)
    prev = GENESIS
    for row in hashed:
        if row["prev_hash"] != prev or unkeyed_row_hash(prev, row) != row["hash"]:
            return Legacy("broken", f"the unkeyed chain of earlier versions is broken at seq {row['seq']} (a row "
                          "was removed, inserted or edited)", row["seq"])
        prev = row["hash"]
    return Legacy("unkeyed", f"{len(hashed)} rows in the unkeyed sha256 chain of earlier versions, intact (anyone "
                  "who could write the file could have rebuilt it)" + without)


def _result(rows: int, broken_at: int | None = None, problem: str = "", notice: str = "") -> dict[str, Any]:
    return {"ok": not problem, "rows": rows, "broken_at": broken_at, "problem": problem, "notice": notice}


def verify_rows(key: bytes | None, rows: list[dict[str, Any]], head: dict[str, Any] | None) -> dict[str, Any]:
    """{'ok', 'rows', 'broken_at' (the seq where the log stops being what was sealed), 'problem',
    'notice' (what is true but worth knowing: rows adopted from an earlier format, a head behind the log)}."""
    n = len(rows)
    if not rows and head is None:
        return _result(0)
    if key is None:
        return _result(n, None, "the data dir's secret (lumina.secret) is missing: the keyed chain cannot be checked")
    if head is None:
        legacy = legacy_status(key, rows)
        if legacy.kind == "keyed":
            return _result(n, None, f"{HEAD_FILE} is missing beside a log sealed under this data dir's key: rows "
                           "removed from its end cannot be detected")
        if legacy.kind == "broken":
            return _result(n, legacy.broken_at, legacy.text)
        return _result(n, notice=legacy.text + "; the next append adopts them into this data dir's keyed chain")
    if not head_is_sealed(key, head):
        return _result(n, None, f"{HEAD_FILE} does not carry this data dir's seal (it was altered, or comes from "
                       "another data dir)")
    broken = first_break(key, rows)
    if broken is not None:
        return _result(n, *broken)
    sealed, last_seq = int(head["rows"]), int(head["last_seq"])
    if n < sealed:
        return _result(n, last_seq, f"the log holds {n} rows but {sealed} were sealed ({HEAD_FILE}): rows were "
                       "removed from its end")
    if sealed and (rows[sealed - 1]["seq"] != last_seq or rows[sealed - 1]["hash"] != head["hash"]):
        return _result(n, rows[sealed - 1]["seq"], f"row {sealed} is not the row sealed as the head ({HEAD_FILE}): "
                       "rows were removed or replaced")
    notices = []
    for row in rows:
        if row["event"] != ADOPTED_EVENT:
            continue
        adopted = json.loads(row["detail"])
        if adopted.get("broken_at") is not None:
            return _result(n, adopted["broken_at"], f"before the keyed chain adopted them at seq {row['seq']}, the "
                           f"old rows were not intact: {adopted['before']}")
        notices.append(f"the first {adopted['rows']} rows were adopted into the keyed chain at seq {row['seq']}; "
                       f"before that: {adopted['before']}")
    if n > sealed:
        extra = n - sealed
        notices.append(f"{extra} row{'s' if extra > 1 else ''} sealed after {HEAD_FILE} was last written (an append "
                       "stopped before updating it); the next append updates it")
    return _result(n, notice="; ".join(notices))
