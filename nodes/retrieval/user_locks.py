"""One lock per user for the in-process recall indexes (nodes.retrieval.turn_index, keyword_index).

A cold build of one user takes seconds, and must not hold up the others, so each user has a lock of their own.
The locks go with their user (evicted from the index, or erased: an erased user's id stays nowhere). A thread that
looked a lock up just before it went would otherwise take a lock nobody else will see, and build alongside the
next thread to look the user up; so a lock, once taken, is checked to still be the user's, else taken anew.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class UserLocks:
    def __init__(self, make_lock: Callable[[], threading.Lock] = threading.Lock) -> None:
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._make_lock = make_lock

    @contextmanager
    def hold(self, user_id: str) -> Iterator[None]:
        while True:
            with self._guard:
                lock = self._locks.setdefault(user_id, self._make_lock())
            lock.acquire()
            with self._guard:
                if self._locks.get(user_id) is lock:
                    break
            lock.release()  # dropped between the look-up and the acquire: a new one stands for the user now
        try:
            yield
        finally:
            lock.release()

    def drop(self, user_id: str, held: bool = False) -> None:
        """Forget the user's lock: unless someone holds it, or (``held``) when the caller is the one holding it
        (an erasure, after the user's builds ended). A thread waiting on it then takes the user's new one."""
        with self._guard:
            lock = self._locks.get(user_id)
            if lock is not None and (held or not lock.locked()):
                del self._locks[user_id]

    def __contains__(self, user_id: str) -> bool:
        with self._guard:
            return user_id in self._locks
