"""A user's segment keyword index kept in a file beside their turn index's (nodes.retrieval.index_snapshot), so a
process that starts loads it instead of summing and reading 1,000 segments inside the user's first recall
(~0.3 s at 10,000 memories with long replies, once the turn index itself came from its snapshot).

The file holds the documents in the index's order with their lengths, postings and the hash of the text and
keywords each was read from (keyword_index.doc_hash). It is used only while every segment it holds is still in the
archive with the same text and keywords; the segments archived since are then added as a catch-up adds them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from .index_snapshot import postings_arrays, postings_from, strings_arrays, strings_of

if TYPE_CHECKING:
    from .keyword_index import _UserIndex

VERSION = 1


def arrays_of(index: "_UserIndex", user_id: str, reader: str) -> dict[str, np.ndarray] | None:
    """The snapshot of ``index`` (compiled: nothing pending); None when a document's hash is unknown."""
    if any(not h for h in index.hashes) or len(index.hashes) != len(index.ids):
        return None
    meta = {"version": VERSION, "user_id": user_id, "reader": reader, "segments": len(index.ids),
            "archived_since": index.archived_since}
    return {
        "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        **strings_arrays("ids", index.ids),
        "lengths": np.asarray(index.lengths, dtype=np.int64),
        "hashes": np.frombuffer(b"".join(index.hashes), dtype=np.uint8).reshape(-1, 16),
        **postings_arrays("s_", index._arrays),
    }


def load(path, user_id: str, reader: str, current: dict[str, bytes]) -> "_UserIndex | None":
    """The index the snapshot at ``path`` holds; None when it is not for this user and reader, or a segment it
    holds is gone or reads otherwise now (``current``: segment_id -> doc_hash of its text and keywords today)."""
    from .keyword_index import _UserIndex

    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(data["meta"].tobytes().decode("utf-8"))
        if meta.get("version") != VERSION or meta.get("user_id") != user_id or meta.get("reader") != reader:
            return None
        ids = strings_of(data, "ids")
        hashes = [bytes(row) for row in data["hashes"]]
        lengths = data["lengths"]
        if len(ids) != meta.get("segments") or len(hashes) != len(ids) or len(lengths) != len(ids):
            raise ValueError("segment snapshot arrays do not match")
        if any(current.get(i) != h for i, h in zip(ids, hashes)):
            return None
        index = _UserIndex()
        index.ids, index.known, index.lengths, index.hashes = ids, set(ids), lengths.tolist(), hashes
        index.archived_since = float(meta.get("archived_since", 0.0))
        index._arrays = postings_from("s_", data)
        index._length_array = lengths.astype(np.float64)
    return index
