"""A user's segment keyword index kept in a file beside their turn index's (nodes.retrieval.index_snapshot), so a
process that starts loads it instead of summing and reading 1,000 segments inside the user's first recall
(~0.3 s at 10,000 memories with long replies, once the turn index itself came from its snapshot).

The file holds the documents in the index's order with their lengths, postings and the hash of the text and
keywords each was read from (keyword_index.doc_hash). It is used only while every segment it holds is still in the
archive with the same text and keywords; the segments archived since are then added as a catch-up adds them.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np

from lumina_memory.stores.lexical_open import open_lexical
from lumina_memory.stores.protocols import LexicalIndex

from .index_snapshot import postings_arrays, postings_from, strings_arrays, strings_of

VERSION = 1


class SegmentSnapshot(NamedTuple):
    """What a segment index snapshot holds: the documents' postings, their segment ids and doc hashes in the
    index's order, and the newest archived_at the index had seen."""

    lexical: LexicalIndex
    ids: list[str]
    hashes: list[bytes]
    archived_since: float


def arrays_of(snapshot: SegmentSnapshot, user_id: str, reader: str) -> dict[str, np.ndarray] | None:
    """The snapshot as named arrays (its postings hold every document); None when a document's hash is unknown."""
    lexical, ids, hashes = snapshot.lexical, snapshot.ids, snapshot.hashes
    if any(not h for h in hashes) or len(hashes) != len(ids) or lexical.size != len(ids):
        return None
    meta = {"version": VERSION, "user_id": user_id, "reader": reader, "segments": len(ids),
            "archived_since": snapshot.archived_since}
    return {
        "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        **strings_arrays("ids", ids),
        "lengths": lexical.lengths.astype(np.int64),
        "hashes": np.frombuffer(b"".join(hashes), dtype=np.uint8).reshape(-1, 16),
        **postings_arrays("s_", lexical.postings),
    }


def load(path, user_id: str, reader: str, current: dict[str, bytes]) -> SegmentSnapshot | None:
    """What the snapshot at ``path`` holds; None when it is not for this user and reader, or a segment it holds
    is gone or reads otherwise now (``current``: segment_id -> doc_hash of its text and keywords today)."""
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
        lexical = open_lexical(postings_from("s_", data), lengths.astype(np.float64))
        return SegmentSnapshot(lexical, ids, hashes, float(meta.get("archived_since", 0.0)))
