"""Every code block of README.md runs as written (issue 44).

Blocks are read from the README itself: ```python blocks run in a fresh interpreter, ```bash blocks in
bash (`set -euo pipefail`), each in one working directory and one data directory shared by the module
(embedded engines, offline). A ``print(…)  # → text`` line states what it prints, and the run must print
it. ```text blocks are illustrations (a diagram, an output), not code. A block that cannot run here is
marked right above it, ``<!-- not run: reason -->``; the ``langgraph dev`` block, which starts a server that
runs until stopped, is marked ``<!-- parsed, not run: reason -->`` and its command line is parsed by
langgraph's own CLI (flags and config file checked; tests/test_langgraph_server.py runs the server). No other
block is skipped.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.faults import REPO, cli_env

README = REPO / "README.md"
RUN, NOT_RUN, PARSED = "run", "not run", "parsed, not run"
LANGUAGES = {"python", "bash", "text"}
_FENCE = re.compile(r"^```(\S*)\s*$")
_MARK = re.compile(r"^<!--\s*(not run|parsed, not run):\s*(\S.*?)\s*-->$")
_PRINTS = re.compile(r"^\s*print\(.*\)\s+# → (.+?)\s*$")


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    mark: str  # RUN, NOT_RUN or PARSED (text blocks: "text")
    reason: str = ""


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start, language = i, fence.group(1)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        above = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        mark = _MARK.match(above.strip())
        kind, reason = (mark.group(1), mark.group(2)) if mark else (RUN, "")
        blocks.append(Block(start + 1, language, "\n".join(lines[start + 1:end]) + "\n",
                            "text" if language == "text" else kind, reason))
        i = end + 1
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
RUNNABLE = [b for b in BLOCKS if b.mark == RUN]


def _name(block: Block) -> str:
    return f"L{block.line}-{block.language}-{block.code.splitlines()[0][:40]}"


def test_only_explicitly_marked_blocks_are_not_run():
    assert BLOCKS and all(b.language in LANGUAGES for b in BLOCKS), [(b.line, b.language) for b in BLOCKS]
    for b in BLOCKS:
        if b.mark in (NOT_RUN, PARSED):
            assert b.language in ("python", "bash") and len(b.reason) > 10, b  # a reason a reader can check
    assert all("langgraph dev" in b.code for b in BLOCKS if b.mark == PARSED)  # only the server is parsed alone
    assert [b.line for b in BLOCKS if b.mark == RUN] == [b.line for b in RUNNABLE]  # run below, every one
    print("not run:", {b.line: b.reason for b in BLOCKS if b.mark in (NOT_RUN, PARSED)})


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    work = tmp_path_factory.mktemp("readme")
    data_dir = work / "data"
    env = cli_env(data_dir, LUMINA_LOG_LEVEL="WARNING", COLUMNS="200")
    yield work, env
    for data in (data_dir, *(p.parent for p in work.glob("*/redis") if p.parent != data_dir)):
        subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "services", "stop"], cwd=work,
                       env={**env, "LUMINA_DATA_DIR": str(data)}, capture_output=True, timeout=120)


@pytest.mark.parametrize("block", RUNNABLE, ids=_name)
def test_the_block_runs_as_written(block, place):
    work, env = place
    if block.language == "python":
        command = [sys.executable, "-c", block.code]
    else:
        command = ["bash", "-c", "set -euo pipefail\n" + block.code]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"README line {block.line}:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    for line in block.code.splitlines():
        expected = _PRINTS.match(line)
        if expected:
            assert expected.group(1) in done.stdout, (line, done.stdout)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mark == PARSED], ids=_name)
def test_the_server_block_parses(block, monkeypatch):
    """The command line (continuations joined, leading VAR=value assignments set) parsed by langgraph's CLI
    in the repository, as `langgraph dev` would parse it there, without starting the server."""
    from langgraph_cli.cli import cli as langgraph

    words = shlex.split(block.code.replace("\\\n", " "))
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        monkeypatch.setenv(name, value)
    assert words[:2] == ["langgraph", "dev"], words
    monkeypatch.chdir(REPO)
    context = langgraph.get_command(langgraph.make_context("langgraph", ["dev"]), "dev").make_context("dev", words[2:])
    assert context.params["host"] == "127.0.0.1" and context.params["port"] == 8123
    assert context.params["no_browser"] is True and context.params["no_reload"] is True
    assert Path(context.params["config"]).resolve() == REPO / "langgraph.json"
