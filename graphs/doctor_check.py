"""One row of `lumina-memory doctor`'s table, and the state every group of checks reads and fills."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from lumina_memory.stores.settings import LuminaSettings

OK, WARN, SKIP, FAIL = "OK", "WARN", "SKIP", "FAIL"
TIMEOUT = 5.0


@dataclass(frozen=True)
class Check:
    component: str
    """settings, data dir, mid-term, archive, long-term, graph, backups, embedder, llm, tracing."""
    check: str
    status: str
    detail: str = ""


def package_version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


class DoctorState:
    """The settings, the data directory and who holds its lock, the active embedder, and what each tier was
    seen to hold (the derivation checks compare them)."""

    def __init__(self, settings: LuminaSettings):
        self.settings = settings
        self.data_dir: Path = settings.resolved_data_dir()
        self.locked_by: str | None = None  # holder text when another process owns the data dir
        self.embedder_name: str | None = None
        self.embedder_dim: int | None = None
        # What the checks saw, compared by derivation_checks: the archive is the base every other
        # tier is derived from, so a tier holding less than the archive says is an incomplete derivation.
        self.seen: dict[str, object] = {}

    def _skip_locked(self, component: str, check: str) -> Check:
        return Check(component, check, SKIP, f"data dir in use by {self.locked_by}")
