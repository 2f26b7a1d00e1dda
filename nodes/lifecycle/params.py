"""The table of the forgetting lifecycle's parameters (``LifecycleParams``, defined in the settings layer): every
parameter, its value, the notes' key and what it does.
"""

from __future__ import annotations

from lumina_memory.stores.settings_lifecycle import LifecycleParams

__all__ = ["LifecycleParams", "params_table_markdown"]


def params_table_markdown(params: LifecycleParams | None = None) -> str:
    """The README table: every parameter, its value, the notes' key and what it does."""
    params = params or LifecycleParams()
    rows = ["| parameter | value | notes' key | meaning |", "|---|---|---|---|"]
    for name, field in LifecycleParams.model_fields.items():
        value = getattr(params, name)
        shown = f"{value[0]}–{value[1]}" if isinstance(value, tuple) else str(value)
        key = (field.json_schema_extra or {}).get("notes", "")
        rows.append(f"| `{name}` | {shown} | {key} | {field.description} |")
    return "\n".join(rows)
