"""A user's built turn index kept in a file (issue 19: index work never inside a recall), so a process that
starts loads it instead of building it inside the user's first recall: at 10,000 memories with long replies a
build from the kept reads (nodes.retrieval.turn_reads) still took 1.4–1.8 s, most of it decoding reads, counting
postings, cutting passages and hashing point ids. A snapshot holds exactly what those produced — the postings of
the turns and of the passages, the token counts, the point ids, the turns' vectors — as numpy arrays (no pickle:
a file is only ever read as arrays). What the turns' own fields give (order, segments, speakers, times) is worked
out again from the archive's turns, which a build reads anyway.

A snapshot is checked before it is used: written by this reader (code, tokeniser and passage settings), for this
user, over turns that are still the first turns of the user's history with the same ids and texts (a digest of
both). Anything else (turns deleted or rewritten since, another tokeniser, a torn file) and it is dropped and the
index is built as before. Turns archived after the snapshot was written are added to it as a top-up adds them.
"""

from __future__ import annotations

import hashlib
import json
import zipfile

import numpy as np

from .passage_index import PassageIndex
from .turn_table import TurnTable
from .user_turns import UserTurns, vector_buffer

VERSION = 1
# What reading a file that is not a whole snapshot raises (torn by a crash, cut short, another format).
UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


def digest(turns: TurnTable, n: int) -> str:
    """What a snapshot of the first ``n`` of ``turns`` was made from: their ids and texts, in order."""
    h = hashlib.blake2b(digest_size=20)
    for turn_id, text in zip(turns.column("turn_id")[:n], turns.column("text")[:n]):
        for value in (turn_id, text):
            raw = value.encode("utf-8", "surrogatepass")
            h.update(len(raw).to_bytes(8, "little"))
            h.update(raw)
    return h.hexdigest()


def strings_arrays(name: str, values: list[str]) -> dict[str, np.ndarray]:
    """``values`` as one UTF-8 array and their lengths in characters (any character may be in a term)."""
    return {name: np.frombuffer("".join(values).encode("utf-8", "surrogatepass"), dtype=np.uint8),
            f"{name}_len": np.fromiter(map(len, values), dtype=np.int64, count=len(values))}


def strings_of(data, name: str) -> list[str]:
    text = data[name].tobytes().decode("utf-8", "surrogatepass")
    ends = np.cumsum(data[f"{name}_len"]).tolist()
    if (ends[-1] if ends else 0) != len(text):
        raise ValueError(f"snapshot strings {name} do not add up")
    return [text[a:b] for a, b in zip([0, *ends[:-1]], ends)]


def postings_arrays(prefix: str, postings: dict) -> dict[str, np.ndarray]:
    terms = list(postings)
    docs = [postings[t][0] for t in terms]
    tfs = [postings[t][1] for t in terms]
    return {
        **strings_arrays(f"{prefix}terms", terms),
        f"{prefix}sizes": np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)),
        f"{prefix}docs": np.concatenate(docs) if docs else np.zeros(0, dtype=np.int64),
        f"{prefix}tfs": np.concatenate(tfs) if tfs else np.zeros(0, dtype=np.float32),
    }


def postings_from(prefix: str, data) -> dict:
    terms = strings_of(data, f"{prefix}terms")
    sizes = data[f"{prefix}sizes"]
    docs, tfs = data[f"{prefix}docs"], data[f"{prefix}tfs"]
    if len(terms) != len(sizes) or int(sizes.sum()) != len(docs) or len(docs) != len(tfs):
        raise ValueError("postings do not add up")
    ends = np.cumsum(sizes).tolist()
    starts = [0, *ends[:-1]]
    return {t: (docs[a:b], tfs[a:b]) for t, a, b in zip(terms, starts, ends)}


def arrays_of(index: UserTurns, user_id: str, reader: str, vectors_key: str) -> dict[str, np.ndarray]:
    """The snapshot of ``index`` as named arrays."""
    n = len(index.turns)
    ids_by_position = [""] * n
    for point, i in index.point_position.items():
        ids_by_position[i] = point
    passage_points = sorted(index.passage_of.items(), key=lambda kv: kv[1])
    with_vectors = index.vectors is not None and bool(vectors_key)
    meta = {"version": VERSION, "user_id": user_id, "reader": reader, "turns": n,
            "digest": digest(index.turns, n), "vectors": vectors_key if with_vectors else ""}
    arrays = {
        "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        "token_counts": index.token_counts,
        "lengths": index.lengths,
        **postings_arrays("t_", index.postings),
        **postings_arrays("p_", index.passages.postings),
        "p_doc_turn": index.passages.doc_turn,
        "p_doc_part": index.passages.doc_part,
        "p_lengths": index.passages.lengths,
        **strings_arrays("points", ids_by_position),
        **strings_arrays("passage_ids", [p for p, _ in passage_points]),
        "passage_at": np.asarray([v for _, v in passage_points], dtype=np.int64).reshape(-1, 2),
    }
    if with_vectors:
        arrays["vectors"] = index.vectors[:n]
        arrays["has_vector"] = index.has_vector[:n]
    return arrays


def write(handle, arrays: dict[str, np.ndarray]) -> None:
    np.savez(handle, **arrays)  # uncompressed: its words stay readable to the residue scan, like the archive's


def _meta(data) -> dict:
    return json.loads(data["meta"].tobytes().decode("utf-8"))


def meta_of(path) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return _meta(data)


def due(path, size: int, remembered: int | None, key: str) -> tuple[bool, int]:
    """(whether an index of ``size`` turns or segments is worth writing over the snapshot at ``path``, the size of
    the one kept). Due when none is kept (``path`` None: never written, or removed since — a restore empties the
    folder) or the index has a tenth more than it. ``remembered``: the kept size this process last wrote or read,
    else it is read from the file's ``key`` ("turns", "segments"); a file that does not read counts as none."""
    if path is None:
        return True, 0
    kept = remembered
    if kept is None:
        try:
            kept = int(meta_of(path)[key])
        except UNREADABLE:
            kept = 0
    return (not kept or size >= kept * 1.1), kept


def load(path, user_id: str, reader: str, turns: TurnTable, passage_cut: tuple[int, int],
         vectors_key: str) -> UserTurns | None:
    """The index of the first turns of ``turns`` that the snapshot at ``path`` holds; None when it is not for
    them (another user, reader or version, turns rewritten or deleted since). Raises one of ``UNREADABLE`` for a
    file that does not read (the caller drops it)."""
    with np.load(path, allow_pickle=False) as data:
        meta = _meta(data)
        n = int(meta.get("turns", -1))
        if (meta.get("version") != VERSION or meta.get("user_id") != user_id or meta.get("reader") != reader
                or not 0 < n <= len(turns) or meta.get("digest") != digest(turns, n)):
            return None
        head = turns.head(n)
        points = strings_of(data, "points")
        passage_ids = strings_of(data, "passage_ids")
        passage_at = data["passage_at"]
        token_counts, lengths = data["token_counts"], data["lengths"]
        if len(points) != n or len(token_counts) != n or len(lengths) != n or len(passage_ids) != len(passage_at):
            raise ValueError("snapshot arrays do not match its turns")
        passages = PassageIndex(data["p_doc_turn"], data["p_doc_part"], data["p_lengths"], postings_from("p_", data))
        index = UserTurns.assembled(
            head, passage_cut, postings=postings_from("t_", data), lengths=lengths, token_counts=token_counts,
            point_position=dict(zip(points, range(n))),
            passage_of={p: (int(t), int(k)) for p, (t, k) in zip(passage_ids, passage_at.tolist())},
            passages=passages,
        )
        if meta.get("vectors") and meta["vectors"] == vectors_key:
            vectors = data["vectors"]
            buffer = vector_buffer(n, vectors.shape[1])
            buffer[:n] = vectors
            index.vector_buffer, index.vectors = buffer, buffer[:n]
            index.has_vector = data["has_vector"].astype(bool)
    return index
