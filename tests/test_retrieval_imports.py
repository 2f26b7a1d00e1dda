"""No module of graphs/, nodes/ or stores/ is on an import cycle, function-level and typing-only imports
included, and none is over 400 lines (one job per module)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INDEX_MODULES = ("keyword_index", "turn_index", "user_turns", "turn_table", "turn_search", "passage_index",
                 "index_snapshot", "segment_snapshot", "segment_terms", "turn_reads", "warm")
LAYERS = {"graphs": "lumina_memory.graphs", "nodes": "lumina_memory.nodes", "stores": "lumina_memory.stores"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("").parts
    return ".".join([LAYERS[rel[0]], *[p for p in rel[1:] if p != "__init__"]])


def _imports() -> dict[str, set[str]]:
    """Each module of graphs/, nodes/ and stores/ -> the project modules it imports anywhere in its source."""
    out: dict[str, set[str]] = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            name = _module_name(path)
            package = name if path.name == "__init__.py" else name.rpartition(".")[0]
            found: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    relative = "." * node.level + (node.module or "")
                    base = importlib.util.resolve_name(relative, package) if node.level else relative
                    found.update([base, *(f"{base}.{alias.name}" for alias in node.names)])
            out[name] = {m for m in found if m.startswith("lumina_memory.")}
    return out


def _on_a_cycle(start: str, edges: dict[str, set[str]]) -> list[str] | None:
    """A path of imports from ``start`` back to itself, if there is one."""
    stack, seen = [(m, [start, m]) for m in edges[start]], set()
    while stack:
        m, path = stack.pop()
        if m == start:
            return path
        if m not in seen:
            seen.add(m)
            stack += [(n, [*path, n]) for n in edges.get(m, ())]
    return None


def test_no_module_of_graphs_nodes_or_stores_is_on_an_import_cycle():
    imports = _imports()
    assert {f"lumina_memory.nodes.retrieval.{m}" for m in INDEX_MODULES} <= set(imports)  # the walk sees them
    # A module's own packages are initialised before it: importing from them is no cycle.
    edges = {m: {t for t in ts if t in imports and t != m and not m.startswith(t + ".")} for m, ts in imports.items()}
    cycles = {m: path for m in sorted(edges) if (path := _on_a_cycle(m, edges))}
    assert not cycles, f"modules on an import cycle: {cycles}"


def test_no_module_of_graphs_nodes_or_stores_is_over_400_lines():
    lengths = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
               for layer in LAYERS for path in (ROOT / layer).rglob("*.py")}
    assert len(lengths) > 100
    assert not {name: n for name, n in lengths.items() if n > 400}


def test_the_cycle_check_sees_a_function_level_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _on_a_cycle("a", edges) == ["a", "b", "c", "a"] and _on_a_cycle("d", edges) is None
