"""Knowledge bases' records in the archive (L5, S3): which KBs exist, their documents, their chunks' text.

The archive is the truth; the KB collections (stores.kb_vectors) hold the passages search ranks. A document
is *committed* when its row is here: ``kb add`` writes every passage point first and the document with its
chunks last, in one transaction, so an interrupted add leaves only points no search returns (they are
filtered by committed document) and a re-add rewrites the same deterministic points.

Every table has a ``user_id`` column (the owner of a per-user KB; ``''`` for a shared one), so the archive's
places (stores.places.archive) erase, back up and restore these rows with the rest: erasing a user removes
their KBs' records and nobody else's; shared rows belong to no user (``''`` is never a valid user id).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import ids
from .records import SHARED, Base, UnknownKB, doc_id_for, owner_of  # noqa: F401 - their home is records
from .sql_connection import SqlConnection
from .texts import check_texts

BASES, DOCUMENTS, CHUNKS = "kb_bases", "kb_documents", "kb_chunks"

SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {BASES} (kb VARCHAR NOT NULL, user_id VARCHAR NOT NULL,
        collection VARCHAR NOT NULL, embedder VARCHAR NOT NULL, dim INTEGER NOT NULL, created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (kb, user_id))""",
    f"""CREATE TABLE IF NOT EXISTS {DOCUMENTS} (doc_id VARCHAR PRIMARY KEY, kb VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL, source VARCHAR NOT NULL, content_sha256 VARCHAR NOT NULL, kind VARCHAR NOT NULL,
        chars BIGINT NOT NULL, tokens BIGINT NOT NULL, chunks INTEGER NOT NULL, passages INTEGER NOT NULL,
        added_at DOUBLE PRECISION NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {CHUNKS} (doc_id VARCHAR NOT NULL, chunk INTEGER NOT NULL, kb VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL, start_char BIGINT NOT NULL, end_char BIGINT NOT NULL, text VARCHAR NOT NULL,
        PRIMARY KEY (doc_id, chunk))""",
    f"CREATE INDEX IF NOT EXISTS {DOCUMENTS}_kb_idx ON {DOCUMENTS} (kb, user_id)",
)


class KBCatalog:
    """The three tables, on the archive's connection (its lock serialises us with the archive)."""

    def __init__(self, db: SqlConnection):
        """``db``: the archive's one connection (``DuckDBArchive.kb_catalog`` opens the catalogue on it)."""
        self.db = db
        db.migrate("kb", [SCHEMA])
        # Whether any KB exists, at the connection's write generation (one process's file only): priming searches
        # the KBs before every reply, and most data dirs have none. A boolean only, so no user's data stays in memory.
        self._any_at: tuple[int, bool] | None = None
        self.rows_read = 0  # catalog reads of the bases table (tests look at it)

    def _any(self) -> bool:
        generation = self.db.generation  # read first: a write landing meanwhile makes the next call look again
        known = self._any_at
        if known is not None and known[0] == generation:
            return known[1]
        with self.db.read() as con:
            found = con.execute(f"SELECT EXISTS (SELECT 1 FROM {BASES})").fetchone()[0]
        self.rows_read += 1
        self._any_at = (generation, bool(found))
        return bool(found)

    # --- reads ------------------------------------------------------------------------------------------
    def bases(self, user_id: str | None = None, *, everyone: bool = False) -> list[Base]:
        """Shared KBs, plus ``user_id``'s own; every KB of every user with ``everyone`` (admin listing)."""
        owner = owner_of(user_id)  # a hostile id is refused even when there is nothing to search
        # On a shared server other processes add KBs and the write stamp is itself a query: the listing is asked.
        if not self.db.shared and not self._any():
            return []
        self.rows_read += 1
        with self.db.read() as con:
            if everyone:
                rows = con.execute(f"SELECT kb, user_id, collection, created_at FROM {BASES} ORDER BY kb, user_id").fetchall()
            else:
                rows = con.execute(f"SELECT kb, user_id, collection, created_at FROM {BASES} WHERE user_id IN (?, ?) "
                                   "ORDER BY kb, user_id", [SHARED, owner]).fetchall()
        return [Base(*r) for r in rows]

    def documents(self, kb: str, owner: str) -> list[dict[str, Any]]:
        with self.db.read() as con:
            cur = con.execute(f"SELECT doc_id, source, kind, chars, tokens, chunks, passages, added_at, content_sha256 "
                              f"FROM {DOCUMENTS} WHERE kb = ? AND user_id = ? ORDER BY added_at, source", [kb, owner])
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

    def committed(self, kb: str, owner: str, doc_ids: Sequence[str]) -> set[str]:
        if not doc_ids:
            return set()
        with self.db.read() as con:
            rows = con.execute(f"SELECT doc_id FROM {DOCUMENTS} WHERE kb = ? AND user_id = ? "
                               "AND doc_id IN (SELECT unnest(?::VARCHAR[]))", [kb, owner, list(set(doc_ids))]).fetchall()
        return {r[0] for r in rows}

    def document(self, kb: str, owners: Sequence[str], doc_id: str) -> dict[str, Any] | None:
        """The document if it belongs to one of ``owners`` ('' = shared) in this KB."""
        with self.db.read() as con:
            cur = con.execute(f"SELECT doc_id, user_id, source, chunks, added_at FROM {DOCUMENTS} WHERE doc_id = ? "
                              "AND kb = ? AND user_id = ANY(?::VARCHAR[])", [doc_id, kb, list(owners)])
            row = cur.fetchone()
            return None if row is None else dict(zip([d[0] for d in cur.description], row))

    def doc_ids_starting(self, kb: str, owners: Sequence[str], start: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` ids of this KB's documents of ``owners`` ('' = shared) starting with ``start`` (as text,
        no wildcards), sorted: what a short KB pointer may name (nodes.tools.pointers)."""
        with self.db.read() as con:
            rows = con.execute(f"SELECT doc_id FROM {DOCUMENTS} WHERE kb = ? AND user_id = ANY(?::VARCHAR[]) "
                               "AND starts_with(doc_id, ?) ORDER BY doc_id LIMIT ?",
                               [kb, list(owners), ids.validate_id(start, "id"), int(limit)]).fetchall()
        return [r[0] for r in rows]

    def chunks(self, doc_id: str, first: int, last: int) -> list[tuple[int, int, int, str]]:
        """(chunk, start_char, end_char, text) of chunks ``first..last`` of the document, in order."""
        with self.db.read() as con:
            return con.execute(f"SELECT chunk, start_char, end_char, text FROM {CHUNKS} WHERE doc_id = ? "
                               "AND chunk BETWEEN ? AND ? ORDER BY chunk", [doc_id, first, last]).fetchall()

    # --- writes -----------------------------------------------------------------------------------------
    def commit_document(self, base: Base, doc: dict[str, Any], chunks: Sequence[tuple[int, int, str]],
                        embedder: str, dim: int) -> list[str]:
        """Record the KB (first time), the document and its chunks in one transaction; an older document
        of the same source in this KB is replaced (its rows go). Returns the doc ids replaced, whose
        points the caller deletes after this commit (a crash in between leaves only unreturned points)."""
        owner = base.owner
        check_texts(doc, ("doc_id", "source", "content_sha256", "kind"))
        check_texts({"text": [text for _, _, text in chunks]}, ("text",))
        with self.db.tx(touches=(owner,) if owner else ()) as con:
            # The KB's row is written even when it exists (its own values again): on PostgreSQL that locks it until
            # the commit, so two processes adding to one KB replace documents one after the other.
            con.execute(f"INSERT INTO {BASES} (kb, user_id, collection, embedder, dim, created_at) "
                        f"VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kb, user_id) DO UPDATE SET collection = {BASES}.collection",
                        [base.kb, owner, base.collection, embedder, dim, base.created_at])
            replaced = [r[0] for r in con.execute(
                f"SELECT doc_id FROM {DOCUMENTS} WHERE kb = ? AND user_id = ? AND source = ? AND doc_id <> ?",
                [base.kb, owner, doc["source"], doc["doc_id"]]).fetchall()]
            self._delete_docs(con, replaced + [doc["doc_id"]])
            con.execute(f"INSERT INTO {DOCUMENTS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [doc["doc_id"], base.kb, owner, doc["source"], doc["content_sha256"], doc["kind"],
                         doc["chars"], doc["tokens"], doc["chunks"], doc["passages"], doc["added_at"]])
            con.execute(f"INSERT INTO {CHUNKS} (doc_id, chunk, kb, user_id, start_char, end_char, text) "
                        "SELECT ?::VARCHAR, unnest(?::INTEGER[]), ?::VARCHAR, ?::VARCHAR, unnest(?::BIGINT[]), "
                        "unnest(?::BIGINT[]), unnest(?::VARCHAR[])",
                        [doc["doc_id"], list(range(len(chunks))), base.kb, owner, [c[0] for c in chunks],
                         [c[1] for c in chunks], [c[2] for c in chunks]])
        return replaced

    @staticmethod
    def _delete_docs(con, doc_ids: Sequence[str]) -> None:
        if doc_ids:
            for table in (CHUNKS, DOCUMENTS):
                con.execute(f"DELETE FROM {table} WHERE doc_id IN (SELECT unnest(?::VARCHAR[]))", [list(doc_ids)])

    def remove_base(self, kb: str, owner: str) -> int:
        """Forget the KB's records; returns the documents it had."""
        with self.db.tx(touches=(owner,) if owner else ()) as con:
            (n,) = con.execute(f"SELECT count(*) FROM {DOCUMENTS} WHERE kb = ? AND user_id = ?", [kb, owner]).fetchone()
            for table in (CHUNKS, DOCUMENTS, BASES):
                con.execute(f"DELETE FROM {table} WHERE kb = ? AND user_id = ?", [kb, owner])
        return int(n)

    def owners(self, kb: str) -> list[str]:
        """Users who have a per-user KB of this name."""
        with self.db.read() as con:
            return [r[0] for r in con.execute(f"SELECT user_id FROM {BASES} WHERE kb = ? AND user_id <> ?",
                                              [kb, SHARED]).fetchall()]
