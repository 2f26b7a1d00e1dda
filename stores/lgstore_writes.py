"""LuminaStore's write path: a batch of puts becomes item rows and their text points, embedded before
anything is written, old points dropped before the new ones, the rows last (mixed into LuminaStore)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import Any

from langgraph.store.base import PutOp, get_text_at_path, tokenize_path

from . import ids
from .kv_duckdb import NewRow
from .lgstore_embed import StoreEmbedding
from .lgstore_search import HASH_FIELD, ITEM_FIELD, MAX_ID_FILTER, NS_FIELD
from .protocols_files import ItemTable
from .lgstore_values import _prefixes, _strings, _value_json
from .vector_filters import Match, PreparedPoint, VectorStoreBase, batched, check_vector


class ItemWrites:
    """``LuminaStore``'s ``_texts`` and ``_apply``; the attributes are LuminaStore's."""

    items: ItemTable
    vectors: VectorStoreBase
    embedding: StoreEmbedding
    fields: list[tuple[str, Any]] | None
    tokenize: Callable[[str], list[str]]

    def _texts(self, op: PutOp) -> list[tuple[str, str]]:
        """(path, text) pairs to index for a put; [] when not indexed."""
        if op.index is False or op.value is None:
            return []
        paths = self.fields if op.index is None else [(f, f if f == "$" else tokenize_path(f)) for f in op.index]
        if paths is None:
            strings: list[str] = []
            _strings(op.value, strings)
            joined = " ".join(s for s in strings if s.strip())
            return [("*", joined)] if joined else []
        out = []
        for path, tokens in paths:
            texts = [t for t in get_text_at_path(op.value, tokens) if t and t.strip()]
            out += [(path if len(texts) == 1 else f"{path}.{i}", t) for i, t in enumerate(texts)]
        return out

    def _apply(self, puts: dict[str, PutOp]) -> None:
        rows: list[NewRow] = []
        points: list[PreparedPoint] = []
        deletes: list[str] = []
        texts_of: list[tuple[str, tuple[str, ...], str, str, str]] = []  # item, ns, path, text, hash
        for iid, op in puts.items():
            if op.value is None:
                deletes.append(iid)
                continue
            value_json = _value_json(op.value)
            texts = self._texts(op)
            digest = hashlib.sha1("\x1f".join(f"{p}\x1e{t}" for p, t in texts).encode("utf-8", "surrogatepass")).hexdigest()
            terms = sorted({t for _, text in texts for t in self.tokenize(text)})
            rows.append(NewRow(iid, tuple(op.namespace), op.key, value_json, terms, digest if texts else "", op.ttl))
            texts_of += [(iid, tuple(op.namespace), path, text, digest) for path, text in texts]
        if texts_of:
            # Embed before any write: a failing embedder leaves the store as it was.
            vectors = self.embedding.embed_texts([t[3] for t in texts_of])
            for (iid, ns, path, _text, digest), vector in zip(texts_of, vectors, strict=True):
                points.append(
                    PreparedPoint(
                        str(uuid.uuid5(ids.NAMESPACE, f"lgstore-point|{iid}|{path}")),
                        check_vector(vector, self.vectors.dim, "embedding"),
                        {ITEM_FIELD: iid, NS_FIELD: _prefixes(ns), HASH_FIELD: digest, "path": path},
                    )
                )
        # Old points of every touched item go first (a shorter value may have fewer texts), then the new ones,
        # then the rows. A crash in between leaves points whose hash no row has: search ignores those. In server
        # mode the items are held against other processes' writes from the first step to the rows' commit: two
        # processes updating one item would otherwise interleave, one's points under the other's row, and the
        # item would drop out of search. Rows and deletes go in id order (writers of the same rows never deadlock).
        touched = sorted(puts)
        rows.sort(key=lambda row: row.item_id)
        with self.items.writing(touched):
            for chunk in batched(touched, MAX_ID_FILTER):
                self.vectors.delete_where([Match(ITEM_FIELD, tuple(chunk))])
            self.vectors.write_points(points)
            self.items.write(rows, sorted(deletes))
