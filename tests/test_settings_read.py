"""Every setting is read by the code: one that nothing reads promises a behaviour that never happens (a
retention nobody enforced, a context window nobody packed). A static check over the package's sources."""

from __future__ import annotations

import re
from pathlib import Path

from lumina_memory.nodes.retrieval.recall import SWITCHES
from lumina_memory.stores.settings import LuminaSettings

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("graphs", "nodes", "stores", "bench")


def _code() -> str:
    settings_file = ROOT / "stores" / "settings.py"
    return "\n".join(p.read_text(encoding="utf-8") for folder in SOURCES for p in sorted((ROOT / folder).rglob("*.py"))
                     if p != settings_file)


def test_every_setting_is_read_somewhere():
    code = _code()
    # Recall's switches are read by name (recall._enabled: getattr(settings, f"recall_{name}")).
    switches = {f"recall_{name}" for name in SWITCHES}
    unread = [name for name in LuminaSettings.model_fields
              if name not in switches and not re.search(rf"\b{name}\b", code)]
    assert unread == []

