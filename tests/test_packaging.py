"""One import root: a wheel installs lumina_memory and nothing else at the top level of site-packages.

The design card's folders (graphs/, nodes/, stores/) stay where they are in the repo; setuptools maps them to
lumina_memory.graphs, .nodes and .stores, so a LangGraph project with its own `nodes` or `graphs` module does not
collide with ours. bench/ is a development tool and is not installed.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("graphs", "nodes", "stores")


def package_folders() -> set[str]:
    """Every package under the mapped folders, by the dotted name it installs as."""
    found = set()
    for folder in FOLDERS:
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO)
            found.add("lumina_memory." + ".".join(rel.parts))
    return found


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert set(config["packages"]) == package_folders()
    assert config["package-dir"] == {f"lumina_memory.{f}": f for f in FOLDERS}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(REPO)], check=True, cwd=out)
    (built,) = out.glob("lumina_memory-*.whl")
    return built


def test_the_wheel_holds_one_top_level_package_and_no_bench(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"lumina_memory"}
    assert "lumina_memory/graphs/demo_data/demo_conversation.jsonl" in names
    assert not any(n.startswith(("bench/", "lumina_memory/bench/", "tests/")) for n in names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "lumina-memory = lumina_memory.graphs.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_a_fresh_venv_gets_lumina_memory_and_no_other_top_level_name(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    before = {p.name for p in site.iterdir()}
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    added = {p.name for p in site.iterdir()} - before
    assert {a for a in added if not a.endswith(".dist-info")} == {"lumina_memory"}
    # The root imports without the dependencies; the generic names of our folders do not exist there.
    probe = ("import importlib.util, lumina_memory; "
             "print(all(importlib.util.find_spec(n) is None for n in ('graphs', 'nodes', 'stores', 'bench')))")
    out = subprocess.run([str(python), "-I", "-c", probe], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "True"
