"""The per-user locks of the recall indexes: a lock dropped (its user evicted or erased) while a thread was about to
take it never lets two threads hold one user at once."""

from __future__ import annotations

import threading

from lumina_memory.nodes.retrieval.user_locks import UserLocks


def test_a_lock_dropped_between_look_up_and_acquire_is_taken_anew():
    made: list = []
    locks: UserLocks

    class DroppedOnFirstAcquire:
        """The first lock made: dropped (its user evicted) just before the thread that looked it up takes it."""

        def __init__(self) -> None:
            self.inner = threading.Lock()
            self.first = not made
            made.append(self)

        def acquire(self) -> bool:
            if self.first:
                self.first = False
                locks.drop("u")
            return self.inner.acquire()

        def release(self) -> None:
            self.inner.release()

        def locked(self) -> bool:
            return self.inner.locked()

    locks = UserLocks(make_lock=DroppedOnFirstAcquire)
    with locks.hold("u"):
        assert len(made) == 2  # the dropped one was let go, the user's new one taken
        assert locks._locks["u"] is made[1] and made[1].locked() and not made[0].locked()
    assert not made[1].locked()


def test_one_holder_per_user_while_others_evict_and_erase():
    locks = UserLocks()
    inside = {"now": 0, "most": 0}
    count = threading.Lock()
    stop = threading.Event()

    def worker() -> None:
        for _ in range(2_000):
            with locks.hold("u"):
                with count:
                    inside["now"] += 1
                    inside["most"] = max(inside["most"], inside["now"])
                with count:
                    inside["now"] -= 1

    def evictor() -> None:
        while not stop.is_set():
            locks.drop("u")

    def eraser() -> None:
        for _ in range(300):
            with locks.hold("u"):
                locks.drop("u", held=True)

    threads = [threading.Thread(target=worker) for _ in range(3)] + [threading.Thread(target=eraser)]
    ev = threading.Thread(target=evictor)
    ev.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    stop.set()
    ev.join(10)
    assert inside["most"] == 1
    locks.drop("u")
    assert "u" not in locks
