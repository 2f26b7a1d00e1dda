"""Every setting is read by the code: a documented setting nothing applies misleads whoever sets it.

Walks the settings tree (top level and each nested group) and looks for each field's name where the product
code reads it (``graphs/``, ``nodes/``, ``stores/``, not the modules that define or document the settings): as an
attribute (``settings.recall_mmr``, ``params.level1_ratio``) or a name string (``getattr(settings, "s3_region")``).
Recall's switches are read through ``RecallConfig``: each one must be looked up by recall's stages
(``on["graph"]``, ``on.get("passages", …)``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from lumina_memory.stores.settings import LuminaSettings
from lumina_memory.stores.settings_recall import SWITCHES

ROOT = Path(__file__).resolve().parents[1]
DEFINING = {ROOT / "graphs" / "settings_doc.py", ROOT / "nodes" / "lifecycle" / "params.py",
            ROOT / "nodes" / "knowledge" / "params.py"}


def _code() -> str:
    files = [p for folder in ("graphs", "nodes", "stores") for p in sorted((ROOT / folder).rglob("*.py"))
             if p not in DEFINING and not p.name.startswith("settings")]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


CODE = _code()
SWITCH_SETTINGS = {f"recall_{name}" for name in SWITCHES}
READ_BY_THE_MODEL = {
    # group.field -> the model method the code calls that reads it (checked below, not taken on trust)
    "lifecycle.decay_casual": "category_ranges", "lifecycle.decay_work": "category_ranges",
    "lifecycle.decay_decision": "category_ranges", "lifecycle.decay_emotional": "category_ranges",
}
BOUNDS_OTHERS = {"lifecycle.delete_ratio"}
"""Settings whose effect is to bound others at load time (test_delete_ratio_bounds_the_level_ratios)."""


def _read(name: str) -> bool:
    return re.search(rf"\.{name}\b|[\"']{name}[\"']", CODE) is not None


def _switch_read(switch: str) -> bool:
    return re.search(rf"\bon(?:\[|\.get\()[\"']{switch}[\"']", CODE) is not None


def _tree() -> list[tuple[str, str]]:
    """(group, field) for every setting; group '' is the top level."""
    out = []
    for name, field in LuminaSettings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            out += [(name, sub) for sub in group.model_fields]
        out.append(("", name))
    return out


def test_every_setting_is_read_by_the_code():
    paths = [f"{group}.{name}" if group else name for group, name in _tree()]
    unread = [path for path in paths if path.rpartition(".")[2] not in SWITCH_SETTINGS
              and not _read(path.rpartition(".")[2]) and path not in READ_BY_THE_MODEL and path not in BOUNDS_OTHERS]
    assert unread == [], f"settings nothing reads (apply or remove them): {unread}"


def test_every_recall_switch_is_read_by_a_stage_and_recall_takes_them_from_the_settings():
    assert "RecallConfig.from_settings(settings)" in (ROOT / "nodes" / "retrieval" / "recall_stages.py").read_text()
    assert SWITCH_SETTINGS <= set(LuminaSettings.model_fields), "a switch without a setting"
    unread = [switch for switch in SWITCHES if not _switch_read(switch)]
    assert unread == [], f"recall switches no stage reads: {unread}"


def test_the_walk_finds_nested_settings_and_would_flag_an_unread_one():
    tree = _tree()
    assert ("lifecycle", "level1_ratio") in tree and ("knowledge", "policy") in tree and ("", "recall_mmr") in tree
    assert not _read("a_setting_nothing_reads") and _read("level1_ratio")


def test_settings_read_through_a_model_method_are_read_there_and_the_method_is_called():
    params = LuminaSettings().lifecycle
    for path, method in READ_BY_THE_MODEL.items():
        field = path.rpartition(".")[2]
        assert getattr(params, field) in getattr(params, method)(), path
        assert re.search(rf"\.{method}\(", CODE), f"nothing calls {method}()"


def test_delete_ratio_bounds_the_level_ratios():
    from lumina_memory.stores.settings_lifecycle import LifecycleParams

    LifecycleParams(level1_ratio=0.2, level2_ratio=0.3, level3_ratio=0.3, delete_ratio=0.2)
    with pytest.raises(ValueError, match="delete_ratio"):
        LifecycleParams(level1_ratio=0.2, level2_ratio=0.3, level3_ratio=0.3, delete_ratio=0.3)
