"""``kb list`` and ``kb remove``: what knowledge bases there are, and removing one whole."""

from __future__ import annotations

from lumina_memory.stores.records import UnknownKB, owner_of, validate_kb_name

from ..retrieval.temporal import date_label
from .open import kb_of


def _day(ts: float, zone: str) -> str:
    return date_label(ts, zone)


def list_kbs(services, user_id: str | None = None, *, everyone: bool = False) -> list[dict]:
    """Shared KBs and ``user_id``'s own (every user's with ``everyone``, for an operator), with their documents."""
    kb = kb_of(services)
    owner_of(user_id)
    out = []
    for base in kb.catalog.bases(user_id, everyone=everyone):
        docs = kb.catalog.documents(base.kb, base.owner)
        out.append({
            "kb": base.kb, "scope": "user" if base.per_user else "shared", "user_id": base.owner or None,
            "collection": base.collection, "created": _day(base.created_at, services.settings.timezone), "documents": len(docs),
            "chunks": sum(d["chunks"] for d in docs), "passages": sum(d["passages"] for d in docs),
            "tokens": sum(d["tokens"] for d in docs),
            "sources": [{"source": d["source"], "doc_id": d["doc_id"], "kind": d["kind"], "tokens": d["tokens"],
                         "chunks": d["chunks"], "added": _day(d["added_at"], services.settings.timezone)} for d in docs],
        })
    return out


def remove_kb(services, name: str, *, user_id: str | None = None) -> dict:
    """Remove a shared KB (no ``user_id``) or the user's own KB of that name: records first (search stops
    seeing it at once), then its points (the collection goes when no other user has a KB of that name)."""
    kb_name = validate_kb_name(name)
    owner = owner_of(user_id)
    kb = kb_of(services)
    if not any(b.kb == kb_name and b.owner == owner for b in kb.catalog.bases(user_id)):
        raise UnknownKB(kb_name, user_id)
    documents = kb.catalog.remove_base(kb_name, owner)
    per_user = bool(owner)
    points = 0
    store = kb.collections.get(kb_name, per_user, create=False)
    if store is not None:
        points = store.count_owner(owner or None)
        if not per_user or not kb.catalog.owners(kb_name) and store.count() == points:
            kb.collections.drop(kb_name, per_user)
        else:
            store.delete_user(owner)
            store.rewrite()  # deleted payloads linger in the engine's files until rewritten (L11)
    return {"kb": kb_name, "scope": "user" if per_user else "shared", "documents": documents, "points": points}
