"""SIGTERM as a clean exit for a bench's run: its ``finally`` blocks still stop the servers it started."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

SIGTERM_EXIT = 128 + signal.SIGTERM
REPEAT_SECONDS = 1.0


@contextlib.contextmanager
def exit_on_sigterm() -> Iterator[None]:
    """SIGTERM raises SystemExit in the main thread while inside (so ``finally`` blocks run); elsewhere a no-op:
    signal handlers can only be set from the main thread.

    An extension running when the signal comes may turn that SystemExit into an error of its own (DuckDB raises
    ``RuntimeError: Query interrupted``) or drop it and carry on. So whatever leaves the block after a SIGTERM
    leaves as SystemExit, and the signal is sent again every second until something does leave: a repeat raises
    only where no exception is on its way out, so it never cuts into the ``finally`` blocks of the first."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received, left = threading.Event(), threading.Event()

    def repeat() -> None:
        while not left.wait(REPEAT_SECONDS):
            os.kill(os.getpid(), signal.SIGTERM)

    def on_sigterm(*_) -> None:
        if received.is_set() and sys.exc_info()[1] is not None:
            return  # the first one's exception is unwinding
        if not received.is_set():
            received.set()
            threading.Thread(target=repeat, name="sigterm-repeat", daemon=True).start()
        sys.exit(SIGTERM_EXIT)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    except BaseException as error:
        if received.is_set() and not (isinstance(error, SystemExit) and error.code == SIGTERM_EXIT):
            raise SystemExit(SIGTERM_EXIT) from error
        raise
    finally:
        left.set()
        signal.signal(signal.SIGTERM, previous)
