"""The LangGraph store's async API (stores.langgraph_store): concurrent calls on one event loop share a batch.

DuckDB and the vector engine block, so the store's work runs on a worker thread, never on the loop (the
LangGraph server forbids blocking it). One batch runs at a time per loop: the calls made while it runs
wait and then go together, in the order they were made — so a hundred concurrent ``aput`` embed their
texts in one call and write in one transaction, as LangGraph's own async stores batch. The results are
those of running the calls one after the other. Each call's ops are checked before it joins (a bad call
fails alone); a failure while the shared batch runs (an engine down) fails every call in it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from langgraph.store.base import Op, Result


@dataclass
class _Waiting:
    calls: list[tuple[list[Op], asyncio.Future]] = field(default_factory=list)
    running: bool = False


class LoopBatcher:
    """Runs ``execute`` (a list of checked ops → their results, blocking) for the calls of each loop."""

    def __init__(self, execute: Callable[[list[Op]], list[Result]]) -> None:
        self._execute = execute
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Waiting] = weakref.WeakKeyDictionary()

    async def run(self, ops: list[Op]) -> list[Result]:
        loop = asyncio.get_running_loop()
        waiting = self._loops.setdefault(loop, _Waiting())
        future: asyncio.Future[list[Result]] = loop.create_future()
        waiting.calls.append((ops, future))
        if not waiting.running:
            waiting.running = True
            loop.call_soon(self._next, loop, waiting)  # after this tick: the calls made in it join
        return await future

    def _next(self, loop: asyncio.AbstractEventLoop, waiting: _Waiting) -> None:
        calls = [(ops, f) for ops, f in waiting.calls if not f.cancelled()]
        waiting.calls = []
        if not calls:
            waiting.running = False
            return
        job = loop.run_in_executor(None, self._execute, [op for ops, _ in calls for op in ops])
        job.add_done_callback(lambda done: self._answer(done, calls, loop, waiting))

    def _answer(self, done: asyncio.Future, calls: list[tuple[list[Op], asyncio.Future]],
                loop: asyncio.AbstractEventLoop, waiting: _Waiting) -> None:
        error = None if done.cancelled() else done.exception()
        start = 0
        for ops, future in calls:
            if future.done():
                pass
            elif done.cancelled():  # the loop is shutting down
                future.cancel()
            elif error is not None:
                future.set_exception(error)
            else:
                future.set_result(done.result()[start : start + len(ops)])
            start += len(ops)
        self._next(loop, waiting)
