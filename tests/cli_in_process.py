"""``lumina-memory ARGS`` run by calling ``lumina_memory.graphs.cli.main`` in this process, with what a subprocess
would get: its own environment and working directory, stdin, stdout and stderr captured, the exit code of a
``SystemExit`` (argparse's refusals) or 1 and the traceback for an uncaught exception, and warnings of every
logger on stderr as the CLI's ``logging.basicConfig`` prints them. The embedder is loaded once per test process
instead of once per command, which is most of a CLI start.

For tests whose subject is what a command does, not the process boundary (a second process holding the data dir,
a kill, the installed console script): those keep running the CLI in a subprocess.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from lumina_memory.graphs.logging_setup import LOGGER

# The width a subprocess run gets from COLUMNS: rich reads it when a console is made, and the CLI's module
# consoles were made on import, so they are given it for the call.
WIDTH = 200


def _cli_consoles() -> list:
    from rich.console import Console

    return [value for name, module in list(sys.modules.items()) if name.startswith("lumina_memory.graphs.")
            for value in vars(module).values() if isinstance(value, Console)]


def run_cli_in_process(args: list[str], env: dict[str, str], cwd: Path,
                       stdin: str | None = None) -> subprocess.CompletedProcess:
    """``env`` replaces the whole environment for the call (as ``subprocess.run(env=...)`` does)."""
    from lumina_memory.graphs.cli import main

    out, err = io.StringIO(), io.StringIO()
    lumina = logging.getLogger(LOGGER)
    saved_logger = (list(lumina.handlers), lumina.level, lumina.propagate)
    warnings = logging.StreamHandler(err)
    warnings.setLevel(logging.WARNING)
    warnings.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    consoles = _cli_consoles()
    widths = [console._width for console in consoles]
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        patch.chdir(cwd)
        patch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        logging.getLogger().addHandler(warnings)
        for console in consoles:
            console.width = WIDTH
        try:
            with redirect_stdout(out), redirect_stderr(err):
                try:
                    code = main(list(args))
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
                    if isinstance(exc.code, str):
                        err.write(exc.code + "\n")
                except Exception:  # noqa: BLE001 - a subprocess would print it and exit 1
                    traceback.print_exc(file=err)
                    code = 1
        finally:
            logging.getLogger().removeHandler(warnings)
            lumina.handlers[:], lumina.level, lumina.propagate = saved_logger
            for console, width in zip(consoles, widths):
                console._width = width
    return subprocess.CompletedProcess(["lumina-memory", *args], code, out.getvalue(), err.getvalue())
