"""The knowledge bases' stores of a Services (opened on first use, closed with its stores)."""

from __future__ import annotations

from lumina_memory.stores.kb_open import KBStores, kb_stores


def kb_of(services) -> KBStores:
    return kb_stores(services.stores, services.settings, services.embedder.name, services.embedder.dim)
