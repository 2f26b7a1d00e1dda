"""Search knowledge bases for the passage that answers, and read a chunk back (the interface priming and the
memory tools call).

A hit is a passage window (~128 tokens, nodes.text.passages) of a 2,000-token chunk: small enough for a
prompt, with a pointer ``kb:<name>:<doc_id>:<chunk_no>`` that ``read_kb`` opens into the chunk joined with
its neighbours (their 200-token overlap once). Shared KBs are searched for everyone; a per-user KB only for
its user; another user's KB reads as unknown, never as forbidden.
"""

from __future__ import annotations

from collections.abc import Sequence

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.protocols_collections import KBCatalogStore
from lumina_memory.stores.records import Base, UnknownKB, owner_of, validate_kb_name

from ..retrieval.budget import count_tokens
from .chunk import join_spans
from .open import kb_of

POOL = 4  # passages fetched per result wanted: overlapping and same-chunk ones are dropped after


def targets(catalog: KBCatalogStore, user_id: str | None, names: Sequence[str] | None) -> list[Base]:
    """The KBs a search covers: shared ones and the user's own, all of them or those named."""
    visible = catalog.bases(user_id)
    if names is None:
        return visible
    if isinstance(names, str):
        raise InvalidInput("names", "must be a list of KB names, not a single string")
    out = []
    for name in dict.fromkeys(validate_kb_name(n) for n in names):
        found = [b for b in visible if b.kb == name]
        if not found:
            raise UnknownKB(name, user_id)
        out += found
    return out


def _overlaps(a: dict, b: dict) -> bool:
    """Passages of the same document sharing more than half of the shorter one (a chunk overlap region)."""
    if a["doc_id"] != b["doc_id"]:
        return False
    shared = min(a["end"], b["end"]) - max(a["start"], b["start"])
    return shared > 0.5 * min(a["end"] - a["start"], b["end"] - b["start"])


def search_kb(services, query: str, *, user_id: str | None = None, names: Sequence[str] | None = None,
              limit: int = 5, query_vector=None) -> list[dict]:
    """The passages nearest ``query`` in the KBs ``user_id`` may read (``names``: only these), best first.

    Each item: kind "kb", kb, id ``kb:<name>:<doc_id>:<chunk_no>``, source, position (chunk number), offset
    (the passage's first character in the document), text (the passage), score (cosine), tokens, date
    (ISO day added), scope ("shared" or "user"). Unknown names raise UnknownKB."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise InvalidInput("limit", f"must be a non-negative integer, got {limit!r}")
    kb = kb_of(services)
    owner = owner_of(user_id)
    bases = targets(kb.catalog, user_id, names)
    if not bases or limit == 0:
        return []
    if query_vector is None:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query", "must be a non-empty string")
        query_vector = services.embedder.embed([query])[0]
    hits: list[tuple[float, dict]] = []
    for base in bases:
        store = kb.collections.get(base.kb, base.per_user, create=False)
        if store is None:
            continue
        found = store.search_passages(owner if base.per_user else None, query_vector, limit * POOL)
        # Only passages of recorded documents: points of an interrupted add are never returned.
        committed = kb.catalog.committed(base.kb, base.owner, [p["doc_id"] for _, p in found])
        hits += [(score, p) for score, p in found if p.get("doc_id") in committed]
    hits.sort(key=lambda h: -h[0])
    kept: list[tuple[float, dict]] = []
    seen: set[str] = set()
    for score, p in hits:
        item_id = f"kb:{p['kb']}:{p['doc_id']}:{p['chunk']}"
        if item_id in seen or any(_overlaps(p, q) for _, q in kept):
            continue
        seen.add(item_id)
        kept.append((score, p))
        if len(kept) == limit:
            break
    return [_item(score, p) for score, p in kept]


def _item(score: float, p: dict) -> dict:
    return {"kind": "kb", "kb": p["kb"], "id": f"kb:{p['kb']}:{p['doc_id']}:{p['chunk']}", "source": p["source"],
            "position": int(p["chunk"]), "offset": int(p["start"]), "text": p["text"], "score": float(score),
            "tokens": count_tokens(p["text"]), "date": p["added"], "scope": p.get("scope", "shared")}


def parse_kb_id(item_id: str) -> tuple[str, str, int]:
    """(kb, doc_id, chunk) of ``kb:<name>:<doc_id>:<chunk_no>``."""
    parts = item_id.split(":") if isinstance(item_id, str) else []
    if len(parts) != 4 or parts[0] != "kb" or not parts[3].isdigit():
        raise InvalidInput("item_id", f"{str(item_id)[:80]!r} is not a KB pointer (kb:<name>:<doc_id>:<chunk_no>)")
    return validate_kb_name(parts[1]), parts[2], int(parts[3])


def read_kb(services, item_id: str, user_id: str | None = None, *, neighbours: int = 1) -> str | None:
    """The chunk of ``item_id`` joined with ``neighbours`` chunks each side (their overlap once); None when
    there is no such chunk this user may read (another user's per-user KB included)."""
    kb_name, doc_id, chunk = parse_kb_id(item_id)
    owners = ["", owner_of(user_id)] if user_id is not None else [""]
    kb = kb_of(services)
    if kb.catalog.document(kb_name, owners, doc_id) is None:
        return None
    rows = kb.catalog.chunks(doc_id, chunk - max(0, neighbours), chunk + max(0, neighbours))
    if not any(r[0] == chunk for r in rows):
        return None
    return join_spans([(start, end, text) for _n, start, end, text in rows])
