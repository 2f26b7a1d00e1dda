"""A LangGraph server's threads (``langgraph dev``, LangGraph Platform) as a UserDataPlace.

On a server, threads have uuid ids; the memory graph's guard records a thread's owner in its state (the
``owner`` channel), the rule stores.places.checkpoints_place applies to the CLI's database. The user's
threads here are those whose latest values' ``owner`` is the user; erasing deletes each through the
server's API (``threads.delete``: the thread, its runs and its checkpoints).

The client is langgraph_sdk's async client (inside the server, ``get_client()`` with no url talks to the
server in-process). The protocol's methods are synchronous and erasure runs them in a worker thread (the
graph's async node hands erase_user to ``asyncio.to_thread``), so each method submits its coroutine to the
server's event loop and waits for it there; called on that loop itself it refuses rather than deadlock.

Backups: none. The server's own database — LangGraph Platform's Postgres, ``langgraph dev``'s
``.langgraph_api/`` files — is backed up by its operator, not by `lumina-memory backup`: this place exports
nothing, restores nothing and has nothing to rewrite in a snapshot. A server database restored from a copy
taken before an erasure brings the user's threads back: run the ``erase`` graph again after such a restore.
Freed space is the database's own business too (Postgres reclaims dead rows at its VACUUM).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from langgraph_sdk.errors import NotFoundError

from ..errors import InvalidInput
from ..user_data import NothingToBackUp

PAGE = 500
OWNER_PATH = "values.owner"  # the guard's owner channel, as the server's thread search extracts it


class ServerThreadsPlace(NothingToBackUp):
    name = "server.threads"

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop, *, running_thread: str | None = None,
                 checkpointer: Any = None):
        """``client``: a langgraph_sdk LangGraphClient bound to ``loop`` (the server's event loop).
        ``running_thread``: the thread of the run doing the erasure; it cannot delete itself mid-run, so
        when it is one of the user's threads the plan and the erasure refuse.
        ``checkpointer``: the server's checkpointer when its thread delete leaves data behind
        (``langgraph dev``'s in-memory saver, see ``aerase``); None elsewhere."""
        self.client, self.loop = client, loop
        self.running_thread = running_thread
        self.checkpointer = checkpointer

    async def athreads_of(self, user_id: str) -> list[str]:
        # Every thread, paged, with only its id and owner extracted, rather than ``search(values=...)``:
        # langgraph dev's search (langgraph-runtime-inmem 0.36) fails with a 500 on a values filter while
        # any thread has no state yet — and the erasure's own run usually sits on such a thread.
        # Sorted by id, so threads updated while we page cannot shift past the offset.
        found: list[str] = []
        offset = 0
        while True:
            page = await self.client.threads.search(
                limit=PAGE, offset=offset, select=["thread_id"], extract={"owner": OWNER_PATH},
                sort_by="thread_id", sort_order="asc")
            found += [str(t["thread_id"]) for t in page if (t.get("extracted") or {}).get("owner") == user_id]
            if len(page) < PAGE:
                break
            offset += PAGE
        if self.running_thread is not None and self.running_thread in found:
            raise InvalidInput("thread", f"this run's thread {self.running_thread} is one of {user_id!r}'s threads "
                               "and cannot be deleted while the run is on it; run `erase` without a thread "
                               "(a stateless run) or on a thread of its own")
        return found

    async def aerase(self, user_id: str) -> int:
        threads = await self.athreads_of(user_id)  # all first: deleting while paging would shift the pages
        for thread_id in threads:
            if self.checkpointer is not None:
                # langgraph dev's thread delete (langgraph-runtime-inmem 0.36) drops the checkpoints but
                # keeps the thread's channel values (langgraph#8054) and swaps the pending writes for a
                # copy whose file is never written again: the text stays in .langgraph_api/. The saver's
                # own delete_thread clears all three in place, and the API's delete then finds nothing to
                # mishandle.
                await self.checkpointer.adelete_thread(thread_id)
            try:
                await self.client.threads.delete(thread_id)
            except NotFoundError:
                pass  # deleted meanwhile: gone either way
        return len(threads)

    def _wait(self, make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run_coroutine_threadsafe(make(), self.loop).result()
        raise RuntimeError("ServerThreadsPlace's synchronous methods wait for the server's event loop: call them "
                           "from a worker thread (asyncio.to_thread), or await athreads_of / aerase")

    def count(self, user_id: str) -> int:
        return len(self._wait(lambda: self.athreads_of(user_id)))

    def erase(self, user_id: str) -> int:
        return self._wait(lambda: self.aerase(user_id))

    def scrub(self) -> None:
        # The server's database reclaims freed space itself; langgraph dev rewrites its .langgraph_api/
        # files at its periodic flush and when it stops.
        return None

    def raw_paths(self) -> list[Path]:
        """langgraph dev's files (its checkpoints and its threads and runs); [] on a database server."""
        filename = getattr(getattr(self.checkpointer, "storage", None), "filename", None)
        return [Path(filename).resolve().parent] if filename else []
