"""How the CLI prints what users and stores supplied: as text, never as rich markup or emoji codes."""

from __future__ import annotations

from rich.text import Text


def cells(*values: object) -> list[Text]:
    """Table cells holding data (ids, names, texts): ``[bold]`` and ``:smile:`` in them print as written;
    None is an empty cell. A long value wraps in its column (the tables fold), it is never cut."""
    return [Text("" if v is None else str(v)) for v in values]
