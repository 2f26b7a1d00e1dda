"""docs/configuration.md is generated from the settings model and kept current; descriptions say what and why.

Regenerate with ``python -m lumina_memory.graphs.settings_doc > docs/configuration.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from lumina_memory.graphs.settings_doc import env_of, markdown
from lumina_memory.stores.settings import LuminaSettings

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "configuration.md"
HISTORY = re.compile(r"\b(?:19|20)\d\d-\d\d(?:-\d\d)?\b|\buntil\s+\d|\b[Ii]ssue \d+|\bwas changed\b|\bused to\b")


def _fields():
    for name, field in LuminaSettings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            yield from ((name, sub, f) for sub, f in group.model_fields.items())
        else:
            yield (None, name, field)


def test_the_configuration_doc_is_current():
    assert DOC.read_text(encoding="utf-8") == markdown(), (
        "docs/configuration.md is stale: python -m lumina_memory.graphs.settings_doc > docs/configuration.md")


def test_every_setting_is_in_the_doc_with_its_environment_name_and_a_description():
    text = markdown()
    for group, name, field in _fields():
        assert field.description, f"{group or ''}.{name} has no description"
        assert f"| `{name}` | {env_of(name, field, group)} |" in text, (group, name)


def test_descriptions_say_what_and_why_never_when():
    dated = [f"{group or ''}.{name}" for group, name, field in _fields() if HISTORY.search(field.description or "")]
    assert dated == []
    assert HISTORY.search("0.1 with a cap of 1 until 2026-12-02") and HISTORY.search("Issue 19: a long turn")
