"""The process-wide caches whose keys are what users said: turn texts and their sentences, terms, passages,
domains, and the ids derived from a user id and a message id.

They are pure-function memos (functools.lru_cache), kept per process for speed, and not filed by user, so
erasure (graphs.registry's ``cache.text_derivations`` place) empties them whole: other users only lose cache
warmth, while an erased user's words do not stay in memory until the entries age out.
"""

from __future__ import annotations

from typing import Any, Protocol

from lumina_memory.nodes.domain import detect_domain
from lumina_memory.nodes.retrieval import packing
from lumina_memory.nodes.text import passages, tokenize, transliterate
from lumina_memory.stores import ids


class Memo(Protocol):
    """An lru_cache'd function, or an object that counts and clears its entries the same way."""

    def cache_info(self) -> Any: ...
    def cache_clear(self) -> None: ...


def text_caches() -> tuple[Memo, ...]:
    return (
        passages.passage_spans, passages.passage_units,
        *tokenize.CACHES,
        *packing.CACHES,
        *transliterate.CACHES,
        detect_domain,
        ids.turn_id, ids.segment_id, ids.concept_id, ids.point_id,
    )


def cached_entries() -> int:
    return sum(cache.cache_info().currsize for cache in text_caches())


def clear_text_caches() -> int:
    """Empties every cache; returns how many entries went."""
    n = cached_entries()
    for cache in text_caches():
        cache.cache_clear()
    return n
