"""docs/configuration.md, generated from the settings model: every setting, its environment variable, type,
default and description, plus recall's presets.

``python -m lumina_memory.graphs.settings_doc > docs/configuration.md`` writes it; a test fails when the file
differs from what this prints.
"""

from __future__ import annotations

import sys
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any, Iterable

import annotated_types
from pydantic import AliasChoices, BaseModel, SecretStr
from pydantic.fields import FieldInfo

from lumina_memory.stores.settings import LuminaSettings
from lumina_memory.stores.settings_recall import PRESETS, SWITCHES, RecallSettings

PREFIX = "LUMINA_"
_LONG = 100  # a default whose text is longer is summarised by its size
_BOUNDS = ((annotated_types.Ge, "≥", "ge"), (annotated_types.Gt, ">", "gt"), (annotated_types.Le, "≤", "le"),
           (annotated_types.Lt, "<", "lt"))

INTRO = """# Configuration

Every setting of Lumina Memory, generated from `lumina_memory.stores.settings.LuminaSettings` by
`python -m lumina_memory.graphs.settings_doc > docs/configuration.md` (a test fails when this file is stale).

Settings come from the environment or a `.env` file in the working directory: `LUMINA_<NAME>` for each setting
below, `LUMINA_<GROUP>__<NAME>` for the nested groups (lifecycle, knowledge, procedures); the production
backends also read their conventional names (`REDIS_URL`, `QDRANT_URL`, `NEO4J_URI`, `OPENAI_API_KEY`, …). Lists,
tuples and mappings are given as JSON (`LUMINA_PII_KINDS='["email","phone"]'`,
`LUMINA_KNOWLEDGE__POLICY='{"drink": "accumulate"}'`). A `LUMINA_*` variable that names no setting, or a keyword
argument `LuminaSettings` does not know, is an error naming it, never silently ignored. Besides these,
`LUMINA_LOG_FORMAT` (`text` or `json`) and `LUMINA_LOG_LEVEL` set up logging.
"""


def env_of(name: str, field: FieldInfo, group: str | None = None) -> str:
    """The environment variable(s) that set a field."""
    if group is not None:
        return f"`{PREFIX}{group.upper()}__{name.upper()}`"
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return ", ".join(f"`{choice}`" for choice in alias.choices)
    return f"`{PREFIX}{name.upper()}`"


def type_of(annotation: Any) -> str:
    """A reader's name for a field's type."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        kept = [type_of(a) for a in args if a is not type(None)]
        return " or ".join(kept) + (" or unset" if type(None) in args else "")
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {type_of(args[0])}"
        return f"({', '.join(type_of(a) for a in args)})"
    if origin is dict:
        return f"mapping {type_of(args[0])} → {type_of(args[1])}"
    if annotation is SecretStr:
        return "secret"
    if isinstance(annotation, type):
        return {"Path": "path", "str": "text", "bool": "true/false"}.get(annotation.__name__, annotation.__name__)
    return str(annotation)


def bounds_of(field: FieldInfo) -> str:
    parts = [f"{sign} {getattr(m, attr)}" for m in field.metadata for kind, sign, attr in _BOUNDS
             if isinstance(m, kind)]
    return f" ({', '.join(parts)})" if parts else ""


def default_of(field: FieldInfo) -> str:
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, BaseModel):
        return "(group below)"
    if isinstance(value, bool):
        return str(value).lower()
    text = repr(tuple(value) if isinstance(value, list) else value)
    if isinstance(value, Path):
        text = str(value)
    if len(text) > _LONG and isinstance(value, (dict, tuple, list)):
        text = f"{len(value)} {'entries' if isinstance(value, dict) else 'items'}"
    return f"`{text}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rows(fields: Iterable[tuple[str, FieldInfo]], group: str | None = None) -> list[str]:
    out = ["| setting | environment | type | default | description |", "|---|---|---|---|---|"]
    for name, field in fields:
        notes = (field.json_schema_extra or {}).get("notes", "") if isinstance(field.json_schema_extra, dict) else ""
        said = field.description or ""
        if notes and not notes.startswith("("):
            said += f" (notes: `{notes}`)"
        out.append(f"| `{name}` | {env_of(name, field, group)} | {_cell(type_of(field.annotation))}{bounds_of(field)} "
                   f"| {_cell(default_of(field))} | {_cell(said)} |")
    return out


def groups() -> list[tuple[str, type[BaseModel]]]:
    """The nested groups of settings: (field name, model)."""
    return [(name, field.annotation) for name, field in LuminaSettings.model_fields.items()
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)]


def presets_table() -> list[str]:
    out = ["| preset | switches off |", "|---|---|"]
    for name, config in PRESETS.items():
        off = [s for s, on in config.switches().items() if not on]
        shown = "none" if not off else f"all but {', '.join(s for s in SWITCHES if s not in off)}" \
            if len(off) > len(SWITCHES) // 2 else ", ".join(off)
        out.append(f"| `{name}` | {shown} |")
    return out


def markdown() -> str:
    nested = {name for name, _ in groups()}
    recall = set(RecallSettings.model_fields)
    general = [(n, f) for n, f in LuminaSettings.model_fields.items() if n not in recall and n not in nested]
    parts = [INTRO, "## General", "", *rows(general), "",
             "## Recall", "",
             "Every channel and stage of recall (`lumina_memory.stores.settings_recall.RecallConfig`) has a "
             "`recall_<switch>` setting; `recall(..., disabled=[...])` turns switches off for one call and "
             "`recall(..., config=RecallConfig.preset(name))` runs a preset.", "",
             *rows((n, RecallSettings.model_fields[n]) for n in RecallSettings.model_fields), "",
             "### Recall presets", "", *presets_table(), ""]
    for name, model in groups():
        title = (LuminaSettings.model_fields[name].description or "").split(";")[0]
        parts += [f"## {name.capitalize()} (`{PREFIX}{name.upper()}__<NAME>`)", "", _cell(title), "",
                  *rows(model.model_fields.items(), group=name), ""]
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
