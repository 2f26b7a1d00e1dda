"""Index work at write time, not inside a recall (issue 19): the last flush stage brings the user's
in-process indexes (segment BM25, turn BM25 and turn vectors, passages) and the per-user reads recall keeps
(memories' levels, facts, procedures) up to what it wrote, so the next recall finds them current. Before this, the first recall after new segments tokenised them (segment_keyword's
p99 was 116 ms on the long-reply set, ten times its p95)."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.protocols_tables import RecallCache

from ..text.passages import passage_spans
from ..text.tokenize import terms
from .packing import _sentence_terms, passage_holders, passage_term_counts

log = logging.getLogger("lumina.recall")


def warm_indexes(services, user_id: str) -> None:
    """Top up ``user_id``'s recall indexes; a store that is down leaves it to the next recall."""
    stores = services.stores
    try:
        index = services.turn_index.get(stores.archive, user_id, stores.turns)
        # After the turn index: a cold build sums the segments' documents from it (nodes.retrieval.segment_terms).
        services.keyword_index.refresh(stores.archive, user_id, index)
        prepare_excerpts(index, services.settings.recall_excerpt_tokens)
        # What recall reads of the user's tables on every query (stores.stamped_cache), read once here.
        for table, read in (("memories", "recall_view"), ("knowledge", "recall_items"), ("procedures", "current")):
            store = getattr(stores.archive, table, None)
            if store is not None:
                getattr(store, read)(user_id)
        # Last: a process that starts loads these instead of building the indexes (nodes.retrieval.index_snapshot,
        # segment_snapshot), for users with enough turns to be worth it.
        services.turn_index.keep_snapshot(user_id, index, stores.turns)
        if services.turn_index.worth_a_snapshot(index):
            services.keyword_index.keep_snapshot(stores.archive, user_id)
    except StoreUnavailable as exc:
        log.warning("recall indexes of %s wait for the next recall: %s", user_id, exc)


def recall_read_tables(archive) -> list[RecallCache]:
    """The archive and its tables that keep per-user reads for recall (stores.stamped_cache)."""
    return [t for t in (archive, *(getattr(archive, n, None) for n in ("memories", "knowledge", "procedures")))
            if t is not None and hasattr(t, "forget_cached")]


def _drop(services, user_id: str) -> None:
    """What ``warm_indexes`` keeps of a user in this process: the indexes and the per-user reads."""
    services.turn_index.forget(user_id)
    services.keyword_index.forget(user_id)
    for table in recall_read_tables(services.stores.archive):
        table.forget_cached(user_id)


def prepare_excerpts(index, excerpt_tokens: int = 0) -> None:
    """Split the user's turns that packing quotes by excerpt (over ``excerpt_tokens``) into sentences with their
    terms, and their long turns into passages, now (nodes.retrieval.packing and nodes.text.passages cache them
    per text), so the first recall that quotes one does not tokenise or cut it: on the long-reply set a cold
    pack stage took 150–190 ms against ~7 warm. Turns between the excerpt length and the passage length (a
    chat turn of 40–160 words) are split too: otherwise each query tokenises the sentences of those it has not
    met yet. An index built from kept reads (nodes.retrieval.turn_reads) cuts no passage, so the passage line
    spares a warmed user's first recall ~50 ms of cutting its candidates' (bench.cold_start). The whole-text
    terms line serves dedup, which compares near-duplicate replies by their words (rerank.dedup): without it a
    started process's first recall spends 100–320 ms tokenising them (the hard long-reply set). Turns seen
    before are cache hits; only the newest ``_WARM_EXCERPTS`` turns of a user are split ahead, so one user's
    history cannot cycle the bounded cache (and tokenise it all again on every flush)."""
    texts = index.turns.column("text")
    size, least = index.passage_cut
    if excerpt_tokens:  # the chat turns; the long ones follow with their passages
        counts = index.token_counts
        chat = (counts > excerpt_tokens) & (counts <= least) if size else counts > excerpt_tokens
        for i in np.flatnonzero(chat)[-_WARM_EXCERPTS:]:
            _sentence_terms(texts[i])
    if not size:
        return
    long_turns = np.flatnonzero(index.token_counts > least)
    for i in long_turns:
        _sentence_terms(texts[i])
        passage_spans(texts[i], size, least)
        terms(texts[i])
    # The newest long turns the index holds other passages for (reads kept under another cut): the picker reads
    # their passages itself (excerpts.passage_holders).
    indexed = np.bincount(index.passages.doc_turn, minlength=len(texts))
    stale = [i for i in long_turns if (n := len(passage_spans(texts[i], size, least))) and indexed[i] != n]
    for i in stale[-_WARM_STALE:]:
        passage_holders(texts[i], size, least)
    # What pseudo-relevance feedback weighs of a passage that answers (channels.feedback_channel), for the
    # newest long turns' passages that fit half of that cache.
    room = _WARM_PASSAGES
    for i in long_turns[::-1]:
        if room <= 0:
            break
        spans = passage_spans(texts[i], size, least)
        for a, b in spans:
            passage_term_counts(texts[i][a:b])
        room -= len(spans)


_WARM_PASSAGES = 1024
"""Passages of a user's newest long turns whose terms the warm-up counts ahead: an eighth of that cache, so a few
users flushing in turn do not cycle it (each flush would count again what the others pushed out)."""

_WARM_STALE = 1024
"""Long turns (the newest) whose passages the warm-up reads for the picker when the index holds other passages for
them: half of that cache (excerpts.passage_holders)."""

_WARM_EXCERPTS = 1024
"""Chat turns a user's warm-up splits into sentences ahead of recall, the newest: a sixteenth of packing's caches,
so a few users flushing in turn do not cycle them (a Sudachi pass per turn pushed out, ~0.2 s at worst)."""


@dataclass
class StartupWarm:
    """The background warm-up of a process that just started: which users, how far it got."""

    users: list[str]
    done: int = 0
    seconds: float | None = None  # None while running
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def summary(self) -> dict:
        return {"users": len(self.users), "warmed": self.done,
                "state": "running" if self.seconds is None else f"done in {self.seconds:.1f} s"}

    def holds(self, user_id: str) -> bool:
        with self._lock:
            return user_id in self.users

    def forget(self, user_id: str) -> int:
        """Erasure (graphs.registry): the user's id leaves the list, and is not warmed (again) after it."""
        with self._lock:
            if user_id not in self.users:
                return 0
            self.users.remove(user_id)
            return 1

    def close(self, timeout: float = 60.0) -> None:
        """Stop after the user in progress (a build cannot be cut short) and wait for it."""
        self.stop.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout)


def warm_at_start(services, users: int) -> StartupWarm | None:
    """Build the recall indexes of the ``users`` most recently active users in a background thread (issue 19:
    index work in the background, never inside a recall). A process that starts holds no index; without this,
    each user's first recall built theirs from the archive, seconds at 10,000 memories with long replies. A
    recall of a user being warmed waits for that user only (the turn index locks per user)."""
    users = min(users, services.settings.recall_index_users)
    archive = services.stores.archive
    if users <= 0 or not hasattr(archive, "recent_users"):
        return None
    try:
        who = archive.recent_users(users)
    except StoreUnavailable as exc:
        log.warning("no warm-up at start: %s", exc)
        return None
    if not who:
        return None
    warm = StartupWarm(list(who))

    def run() -> None:
        started = time.perf_counter()
        try:
            for user_id in who:
                if warm.stop.is_set():
                    break
                if not warm.holds(user_id):  # erased before its turn
                    continue
                warm_indexes(services, user_id)
                if warm.holds(user_id):
                    warm.done += 1
                else:  # erased while it was being warmed: what the warm-up built after the erasure goes too
                    _drop(services, user_id)
        except Exception:  # the stores closed under it (the process is stopping), or a store failed: recall builds
            if not warm.stop.is_set():
                log.exception("warm-up at start stopped after %d of %d users", warm.done, len(who))
        finally:
            warm.seconds = time.perf_counter() - started
            log.info("recall indexes of %d of %d recently active users warmed at start in %.1f s",
                     warm.done, len(who), warm.seconds)

    warm.thread = threading.Thread(target=run, name="lumina-warm-at-start", daemon=True)
    warm.thread.start()
    return warm
