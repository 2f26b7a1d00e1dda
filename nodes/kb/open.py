"""The knowledge bases' stores of a Services (opened on first use, closed with its stores)."""

from __future__ import annotations

from lumina_memory.stores.kb_open import kb_stores
from lumina_memory.stores.protocols_collections import KBStore


def kb_of(services) -> KBStore:
    return kb_stores(services.stores, services.settings, services.embedder.name, services.embedder.dim)
