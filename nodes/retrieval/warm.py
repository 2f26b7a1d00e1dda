"""Index work at write time, not inside a recall (issue 19): the last flush stage brings the user's
in-process indexes (segment BM25, turn BM25 and turn vectors, passages) and the per-user reads recall keeps
(memories' levels, facts, procedures) up to what it wrote, so the next recall finds them current. Before this, the first recall after new segments tokenised them (segment_keyword's
p99 was 116 ms on the long-reply set, ten times its p95)."""

from __future__ import annotations

import logging

import numpy as np

from stores.errors import StoreUnavailable

log = logging.getLogger("lumina.recall")


def warm_indexes(services, user_id: str) -> None:
    """Top up ``user_id``'s recall indexes; a store that is down leaves it to the next recall."""
    stores = services.stores
    try:
        services.keyword_index.refresh(stores.archive, user_id)
        index = services.turn_index.get(stores.archive, user_id, stores.turns)
        prepare_excerpts(index)
        # What recall reads of the user's tables on every query (stores.stamped_cache), read once here.
        for table, read in (("memories", "recall_view"), ("knowledge", "recall_items"), ("procedures", "current")):
            store = getattr(stores.archive, table, None)
            if store is not None:
                getattr(store, read)(user_id)
    except StoreUnavailable as exc:
        log.warning("recall indexes of %s wait for the next recall: %s", user_id, exc)


def prepare_excerpts(index) -> None:
    """Split the user's long turns into sentences with their terms now (nodes.retrieval.packing caches them per
    text), so the first recall that quotes one does not tokenise it: on the long-reply set a cold pack stage
    took 150–190 ms against ~7 warm. Turns seen before are cache hits."""
    from .packing import _sentence_terms

    least = index.passage_cut[1] if index.passage_cut[0] else None
    if least is None:
        return
    texts = index.turns.column("text")
    for i in np.flatnonzero(index.token_counts > least):
        _sentence_terms(texts[i])
