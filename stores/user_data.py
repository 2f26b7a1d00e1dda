"""The one registry of every place that holds user data (L10, L11).

Erasure, backups, restore and the residue test walk this registry and nothing else: a capability
that adds a new kind of user data (a log, a table, a collection, lifecycle state, knowledge,
profiles) adds a ``UserDataPlace`` here, and is then erased, backed up, restored and scanned for
residue with the rest, without any of those knowing it exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol, runtime_checkable


@runtime_checkable
class UserDataPlace(Protocol):
    """A place that holds user data: a table, a key space, a collection, a graph, a folder of files."""

    name: str
    """Stable name, used in erase reports, backup manifests and restore (e.g. 'archive.turns')."""

    def count(self, user_id: str) -> int:
        """How many records of this user the place holds (erase reports, round-trip checks)."""
        ...

    def erase(self, user_id: str) -> int:
        """Delete every record of the user; returns how many went. Another user's records are untouched.
        A place may also offer ``erase_many(user_ids) -> int``, the same for several users in one pass (the
        agents' place: a run's agents); stores.erasure.erase_places uses it when erasing several."""
        ...

    def scrub(self) -> None:
        """Rewrite whatever keeps freed bytes (WAL, free pages, snapshots) so erased data is gone from
        the raw files, not only from queries."""
        ...

    def raw_paths(self) -> list[Path]:
        """Files or folders whose raw bytes hold this place's data (the residue test scans them)."""
        ...

    def export(self, dest: Path) -> int:
        """Write every record into files under ``dest`` (a folder of its own); returns the record count."""
        ...

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        """Load records written by ``export`` from ``src``, leaving out every user for whom
        ``is_erased(user_id)`` is true (erased after the snapshot: the erasure ledger keeps only keyed
        hashes of their ids); returns the records loaded."""
        ...

    def forget_in_export(self, src: Path, user_id: str) -> int:
        """Rewrite files written by ``export`` in ``src`` without the user's records (erasure reaches
        existing backups this way, with no store open); returns the records removed."""
        ...


def missing_methods(place: object) -> list[str]:
    """The protocol's members ``place`` lacks (the registry test asserts none for every place)."""
    wanted = ["name", "count", "erase", "scrub", "raw_paths", "export", "restore", "forget_in_export"]
    return [m for m in wanted if not hasattr(place, m) or (m != "name" and not callable(getattr(place, m)))]


class NothingToBackUp:
    """For places whose data no snapshot carries (in-process caches, a server's own database): export,
    restore and rewriting an export have nothing to do."""

    def export(self, dest: Path) -> int:
        return 0

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        return 0

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return 0
