"""A setting the code does not apply yet says so in its description, so no one sets it expecting an effect.

The forgetting lifecycle's parameters mirror the design notes' settings file, which names five that nothing
here acts on yet; ``LuminaSettings.archive_retention_days`` is a retention the archive does not enforce (the
lifecycle's ``archive_retention_days`` is the one auto-delete uses). The lists below are checked both ways: a
listed setting that the code starts reading fails here (drop its label), and so does a label on any other one.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.stores.settings import LuminaSettings

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("graphs", "nodes", "stores", "bench")
NOT_APPLIED = "Not applied yet"
UNAPPLIED_LIFECYCLE = {"interval_hours", "relation_traversal_depth", "top_k", "relevance_threshold",
                       "enable_archive_recall"}
UNAPPLIED_SETTINGS = {"archive_retention_days"}


def _code(*skip: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for folder in SOURCES for p in sorted((ROOT / folder).rglob("*.py"))
                     if p not in skip)


def _labelled(model: type[BaseModel]) -> set[str]:
    return {name for name, field in model.model_fields.items() if NOT_APPLIED in (field.description or "")}


def test_lifecycle_parameters_nothing_reads_say_not_applied():
    code = _code(ROOT / "nodes" / "lifecycle" / "params.py")
    read = {name for name in UNAPPLIED_LIFECYCLE if re.search(rf"\b{name}\b", code)}
    assert read == set(), "read by the code now: drop their 'not applied yet' label and their entry here"
    assert _labelled(LifecycleParams) == UNAPPLIED_LIFECYCLE
    for name in UNAPPLIED_LIFECYCLE:
        assert LifecycleParams.model_fields[name].description.startswith(NOT_APPLIED), name


def test_settings_nothing_reads_say_not_applied():
    code = _code(ROOT / "stores" / "settings.py")
    read = {name for name in UNAPPLIED_SETTINGS if re.search(rf"settings\.{name}\b|[\"']{name}[\"']", code)}
    assert read == set(), "read by the code now: drop their 'not applied yet' label and their entry here"
    assert _labelled(LuminaSettings) == UNAPPLIED_SETTINGS
    for name in UNAPPLIED_SETTINGS:
        assert LuminaSettings.model_fields[name].description.startswith(NOT_APPLIED), name
