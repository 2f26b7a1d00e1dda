"""Each extra of pyproject.toml holds what its README command needs, so the command works from a fresh install.

``[notebooks]`` serves ``jupyter lab notebooks/`` and every module the notebooks import; ``[server]`` serves
``langgraph dev``; ``[test]`` serves the test suite (the tests and the notebooks it runs with --nbmake, the server
tests). A module is provided by an extra when its installed distribution is in the dependency closure of the
base dependencies plus that extra, walked through the installed packages' own metadata (a requirement that is not
installed here ends its branch: it is named, so pip installs it). The README's install line for a command must
name an extra that holds the command's distribution.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.test_readme_blocks import BLOCKS

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
NAME = canonicalize_name(PROJECT["name"])
LOCAL = {"lumina_memory", "tests", "bench"}  # the project's own import roots (bench/ runs from a checkout)
# A README command and the distribution that installs it (its console script).
COMMANDS = {"jupyter lab": ("jupyterlab", "notebooks"), "langgraph dev": ("langgraph-cli", "server")}


def _requirements(extra: str) -> list[Requirement]:
    return [Requirement(r) for r in PROJECT["optional-dependencies"][extra]]


def _closure(extras: set[str]) -> set[str]:
    """Canonical names of the distributions `pip install lumina-memory[extras]` installs (as far as installed
    metadata tells): the project's extras, self-references included, then each requirement's own."""
    todo = [Requirement(r) for r in PROJECT["dependencies"]]
    seen_extras: set[str] = set()
    pending = set(extras)
    while pending:
        extra = pending.pop()
        seen_extras.add(extra)
        for req in _requirements(extra):
            if canonicalize_name(req.name) == NAME:
                pending |= set(req.extras) - seen_extras
            else:
                todo.append(req)
    found: set[str] = set()
    walked: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        found.add(name)
        key = (name, frozenset(req.extras))
        if key in walked:
            continue
        walked.add(key)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            sub = Requirement(text)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in {"", *req.extras}):
                todo.append(sub)
    return found


@cache
def _distribution_of(module: str) -> str | None:
    """Canonical name of the installed distribution whose files hold `module` (None: not installed)."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return None
    if spec is None:
        return None
    where = [Path(spec.origin)] if spec.origin and spec.has_location else [
        Path(p) for p in (spec.submodule_search_locations or [])]
    candidates = metadata.packages_distributions().get(module.split(".")[0], [])
    for name in dict.fromkeys(candidates):
        dist = metadata.distribution(name)
        files = {Path(dist.locate_file(f)).resolve() for f in dist.files or []}
        if any(w.resolve() in files or any(f.is_relative_to(w.resolve()) for f in files) for w in where):
            return canonicalize_name(name)
    return canonicalize_name(candidates[0]) if len(set(candidates)) == 1 else None


def _imports(source: str) -> set[str]:
    """Absolute modules a source imports (`from a.b import c` → a.b; `import a.b` → a.b)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def _notebook_imports() -> set[str]:
    found: set[str] = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                code = "".join(cell["source"])
                found |= _imports("\n".join(l for l in code.splitlines() if not l.lstrip().startswith(("%", "!"))))
    return found


def _test_imports() -> set[str]:
    found: set[str] = set()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        found |= _imports(path.read_text(encoding="utf-8"))
    return found


def _missing(modules: set[str], extras: set[str]) -> dict[str, str | None]:
    """Third-party modules whose distribution the extras (with the base dependencies) do not install."""
    closure = _closure(extras)
    missing: dict[str, str | None] = {}
    for module in sorted(modules):
        top = module.split(".")[0]
        if top in sys.stdlib_module_names or top in LOCAL:
            continue
        dist = _distribution_of(module)
        if dist not in closure:
            missing[module] = dist
    return missing


def test_every_notebook_import_comes_from_base_or_notebooks_extra():
    modules = _notebook_imports()
    assert {"matplotlib.pyplot", "networkx", "IPython.display"} <= modules  # the notebooks were read
    assert _missing(modules, {"notebooks"}) == {}


def test_every_test_import_comes_from_base_or_test_extra():
    modules = _test_imports()
    assert {"pytest", "langgraph_sdk", "hypothesis"} <= modules  # the tests were read
    assert _missing(modules, {"test"}) == {}


def test_an_extra_missing_a_package_is_caught():
    """The check above can fail: without the notebooks extra, the notebooks' plotting imports are missing."""
    missing = _missing(_notebook_imports(), set())
    assert {"matplotlib.pyplot", "IPython.display"} <= set(missing), missing


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_readme_command_has_an_extra(command):
    distribution, extra = COMMANDS[command]
    assert distribution in {canonicalize_name(r.name) for r in _requirements(extra)}
    if distribution == "langgraph-cli":
        assert "inmem" in next(r for r in _requirements(extra) if r.name == distribution).extras  # `dev` needs it
    assert {distribution} <= _closure({"test"})  # the test install keeps everything


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_readme_install_line_of_each_command_names_its_extra(command):
    """The README block running the command (or the marker above it) installs an extra holding it."""
    distribution, _ = COMMANDS[command]
    blocks = [b for b in BLOCKS if re.search(rf"(^|\s|&&\s*){re.escape(command)}\b", b.code, re.M)]
    assert blocks, f"no README block runs {command!r}"
    for block in blocks:
        named = re.findall(r"pip install -e '\.\[([a-z,]+)\]'", block.code + block.reason)
        assert named, (block.line, f"no install line names an extra for {command!r}")
        assert any(distribution in _closure(set(extras.split(","))) for extras in named), (block.line, named)


def test_the_server_command_is_the_server_extras_console_script():
    scripts = {ep.name: ep.dist.name for ep in metadata.entry_points(group="console_scripts")}
    assert canonicalize_name(scripts["langgraph"]) == "langgraph-cli"
