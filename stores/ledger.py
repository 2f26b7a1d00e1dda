"""The erasure ledger: which users were erased, as salted hashes only, so a restore never brings them back.

One ledger for the memory itself and one beside every backup location's snapshots. The memory's ledger is a
document of its shared state (stores.shared_state): the data directory's ``erasure-ledger.json`` file when
embedded, a row of PostgreSQL in server mode, so every process of the memory reads and extends the same
ledger, and an erasure recorded by one is known to a restore run by another. Each ledger holds its own
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
    """The ledger of a data directory's file (another data dir's, named by a snapshot's manifest)."""
    path = Path(data_dir) / LEDGER_FILE
    return Ledger(path.read_text(encoding="utf-8") if path.exists() else None)


def memory_ledger(state) -> Ledger:
    """The memory's own ledger; ``state`` its SharedState (or a data dir's path)."""
    from .shared_state import as_shared_state

    data = as_shared_state(state).read(LEDGER_FILE)
    return Ledger(json.dumps(data) if data else None)


def record_erasure(state, user_id: str, at: float | None = None) -> Ledger:
    """Add the user to the memory's ledger, atomically: of two processes recording erasures at once neither
    loses the other's. The ledger as written."""
    from .shared_state import as_shared_state

    written: list[Ledger] = []

    def add(data):
        ledger = Ledger(json.dumps(data) if data else None)
        ledger.add(user_id, at)
        written.append(ledger)
        return json.loads(ledger.text())

    as_shared_state(state).update(LEDGER_FILE, add)
    return written[-1]


def location_ledger(location) -> Ledger:
    return Ledger(location.read_text(LEDGER_FILE))
