"""Index work at write time, not inside a recall (issue 19): the last flush stage brings the user's
in-process indexes (segment BM25, turn BM25 and turn vectors, passages) and the per-user reads recall keeps
(memories' levels, facts, procedures) up to what it wrote, so the next recall finds them current. Before this, the first recall after new segments tokenised them (segment_keyword's
p99 was 116 ms on the long-reply set, ten times its p95)."""

from __future__ import annotations

import logging

from stores.errors import StoreUnavailable

log = logging.getLogger("lumina.recall")


def warm_indexes(services, user_id: str) -> None:
    """Top up ``user_id``'s recall indexes; a store that is down leaves it to the next recall."""
    stores = services.stores
    try:
        services.keyword_index.refresh(stores.archive, user_id)
        services.turn_index.get(stores.archive, user_id, stores.turns)
        # What recall reads of the user's tables on every query (stores.stamped_cache), read once here.
        for table, read in (("memories", "recall_view"), ("knowledge", "recall_items"), ("procedures", "current")):
            store = getattr(stores.archive, table, None)
            if store is not None:
                getattr(store, read)(user_id)
    except StoreUnavailable as exc:
        log.warning("recall indexes of %s wait for the next recall: %s", user_id, exc)
