"""The erasure ledger: which users were erased, as salted hashes only, so a restore never brings them back.

One ledger in the data directory and one beside every backup location's snapshots. Each holds its own
random salt, so it is readable wherever it travels (a restore into a new data directory reads the
location's ledger) without holding any erased id in clear.

Each ledger carries the time of its latest erasure (``latest_at``): a restore reports it for every ledger
it applied, and compares it with the snapshots' times.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

from .secret import keyed_hash

LEDGER_FILE = "erasure-ledger.json"


class Ledger:
    def __init__(self, text: str | None):
        data = json.loads(text) if text else {}
        self.salt = bytes.fromhex(data.get("salt") or secrets.token_hex(16))
        self.erased: set[str] = set(data.get("erased", []))
        self.latest_at: float | None = data.get("latest_at")

    def _hash(self, user_id: str) -> str:
        return keyed_hash(self.salt, user_id)

    def add(self, user_id: str, at: float | None = None) -> None:
        self.erased.add(self._hash(user_id))
        at = time.time() if at is None else at
        self.latest_at = max(self.latest_at or 0.0, at)

    def __contains__(self, user_id: object) -> bool:
        return isinstance(user_id, str) and self._hash(user_id) in self.erased

    def text(self) -> str:
        return json.dumps({"format": 1, "salt": self.salt.hex(), "erased": sorted(self.erased),
                           "latest_at": self.latest_at}, indent=1) + "\n"

    def summary(self, where: str) -> dict:
        return {"where": where, "erasures": len(self.erased), "latest_erasure_at": self.latest_at}


def read_file_ledger(data_dir: Path) -> Ledger:
    path = Path(data_dir) / LEDGER_FILE
    return Ledger(path.read_text(encoding="utf-8") if path.exists() else None)


def write_file_ledger(data_dir: Path, ledger: Ledger) -> None:
    from .backup_location import LocalLocation

    LocalLocation(Path(data_dir)).write_text(LEDGER_FILE, ledger.text())


def location_ledger(location) -> Ledger:
    return Ledger(location.read_text(LEDGER_FILE))
