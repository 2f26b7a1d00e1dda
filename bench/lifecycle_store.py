"""The DuckDB side of ``bench.lifecycle``: the batch's round trip, and on-disk bytes per memory per level.

Not ``stores/memories_duckdb.py``: that store was being reworked when this benchmark was written, and its table
holds only part of the core's columns (no ``unbatched``, ``idle_days``, ``archive_reason``). So this module keeps
the core's columns in a table of its own and moves them the way that store does — reading with ``fetchnumpy``
and writing by scanning numpy arrays registered on the connection (``UPDATE … FROM`` a registered frame), a
day's changes and its completion mark in one transaction — which is the cost a store adapter adds to the core.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import duckdb
import numpy as np

from nodes.lifecycle import TAGS, VALENCES, MemoryColumns, Relations

from .perf import sentence

SQL_TYPES = {"float64": "DOUBLE", "int8": "TINYINT", "int64": "BIGINT", "bool": "BOOLEAN"}
FIELDS = [f.name for f in fields(MemoryColumns)]
# What a batch can change (never intensity, category, created, protected or the user).
WRITTEN = ("decay", "memory_days", "retention", "level", "recalled", "recall_count", "unbatched", "idle_days",
           "archived_on", "archive_reason", "revival_requested", "revival_requested_at")


def _column_sql(columns: MemoryColumns) -> str:
    # NaN (no revival request) arrives as NULL: a numpy scan reads NaN as NULL, as pandas does
    return ", ".join(f'"{name}" {SQL_TYPES[str(getattr(columns, name).dtype)]}'
                     + ("" if name == "revival_requested_at" else " NOT NULL") for name in FIELDS)


class LifecycleFile:
    """The lifecycle columns of every memory (keyed by a stable ``key``) and their relations, in one file."""

    def __init__(self, path: Path):
        self.path = path
        self.con = duckdb.connect(str(path))

    def create(self, columns: MemoryColumns, keys: np.ndarray, relations: Relations) -> None:
        self.con.execute(f"CREATE TABLE memories (memory_id VARCHAR PRIMARY KEY, user_id VARCHAR NOT NULL, "
                         f"key BIGINT NOT NULL, {_column_sql(columns)})")
        self.con.execute("CREATE TABLE memory_relations (src BIGINT NOT NULL, dst BIGINT NOT NULL, kind TINYINT NOT NULL)")
        self.con.execute("CREATE TABLE lifecycle_days (day BIGINT NOT NULL)")
        self.insert(columns, keys)
        self._replace_relations(relations, keys)

    def insert(self, columns: MemoryColumns, keys: np.ndarray) -> None:
        """New memories (encoding's write, before the batch)."""
        frame = {"key": np.ascontiguousarray(keys, np.int64), **{name: getattr(columns, name) for name in FIELDS}}
        names = ", ".join(f'"{n}"' for n in FIELDS)
        self.con.register("new_memories", frame)
        try:
            self.con.execute(f"INSERT INTO memories SELECT 'memory-' || key, 'user-' || \"group\", key, {names} "
                             "FROM new_memories")
        finally:
            self.con.unregister("new_memories")

    def load(self) -> tuple[MemoryColumns, Relations, np.ndarray]:
        """Every memory's columns in key order, the relations as row indices, and the keys."""
        names = ", ".join(f'"{n}"' for n in FIELDS)
        raw = self.con.execute(f"SELECT key, {names} FROM memories ORDER BY key").fetchnumpy()
        arrays = {name: _plain(values) for name, values in raw.items()}
        keys = arrays.pop("key")
        columns = MemoryColumns(**{name: arrays[name].astype(np.dtype(_dtype(name)), copy=False) for name in FIELDS})
        edges = {k: _plain(v) for k, v in self.con.execute("SELECT src, dst, kind FROM memory_relations").fetchnumpy().items()}
        row = np.searchsorted(keys, edges["src"]), np.searchsorted(keys, edges["dst"])
        return columns, Relations.of(row[0], row[1], edges["kind"]), keys

    def write_day(self, day: int, keys: np.ndarray, before: MemoryColumns, after: MemoryColumns,
                  relations: Relations, deleted: np.ndarray) -> int:
        """The rows the batch changed, the day's relation set and deletions, with the day's mark, in one
        transaction. Returns how many rows were updated."""
        changed = np.zeros(len(after), bool)
        for name in WRITTEN:
            old, new = getattr(before, name), getattr(after, name)
            same = (old == new) | (np.isnan(old) & np.isnan(new)) if old.dtype.kind == "f" else old == new
            changed |= ~same
        changed &= ~deleted
        relations = relations.take(~deleted[relations.src] & ~deleted[relations.dst])  # they go with the rows
        self.con.execute("BEGIN")
        try:
            self._update(keys[changed], {name: getattr(after, name)[changed] for name in WRITTEN})
            if deleted.any():
                self.con.register("day_deleted", {"key": np.ascontiguousarray(keys[deleted])})
                try:
                    self.con.execute("DELETE FROM memories WHERE key IN (SELECT key FROM day_deleted)")
                finally:
                    self.con.unregister("day_deleted")
            self._replace_relations(relations, keys)
            self.con.execute("INSERT INTO lifecycle_days VALUES (?)", [day])
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        return int(changed.sum())

    def set_flags(self, keys: np.ndarray, columns: MemoryColumns, rows: np.ndarray) -> None:
        """What recall writes between two batches: the recalled flag and revival requests of ``rows``."""
        self._update(keys[rows], {name: getattr(columns, name)[rows]
                                  for name in ("recalled", "revival_requested", "revival_requested_at")})

    def _update(self, keys: np.ndarray, values: dict[str, np.ndarray]) -> None:
        frame = {"key": np.ascontiguousarray(keys, np.int64)}
        frame.update({name: np.ascontiguousarray(v) for name, v in values.items()})
        sets = ", ".join(f'"{n}" = f."{n}"' for n in values)
        self.con.register("changed_rows", frame)
        try:
            self.con.execute(f"UPDATE memories SET {sets} FROM changed_rows f WHERE memories.key = f.key")
        finally:
            self.con.unregister("changed_rows")

    def _replace_relations(self, relations: Relations, keys: np.ndarray) -> None:
        self.con.execute("DELETE FROM memory_relations")
        frame = {"src": keys[relations.src], "dst": keys[relations.dst], "kind": relations.kind}
        self.con.register("day_relations", frame)
        try:
            self.con.execute("INSERT INTO memory_relations SELECT src, dst, kind FROM day_relations")
        finally:
            self.con.unregister("day_relations")

    def close(self) -> int:
        """Checkpoint, close, and return the file's size in bytes."""
        self.con.execute("CHECKPOINT")
        self.con.close()
        return self.path.stat().st_size


def _plain(values) -> np.ndarray:
    """fetchnumpy gives a masked array where a column may hold NULL; NULL is NaN for the float columns."""
    if isinstance(values, np.ma.MaskedArray):
        if values.dtype.kind == "f":
            return values.filled(np.nan)
        if np.ma.getmaskarray(values).any():
            raise ValueError("a lifecycle column came back with NULLs")
        return np.ma.getdata(values)
    return np.asarray(values)


def _dtype(name: str) -> str:
    from nodes.lifecycle.columns import _DTYPES

    return str(_DTYPES[name])


# --- on-disk bytes per memory per level ------------------------------------------------------------------
def level_texts(level: int, n: int, rng: np.random.Generator) -> list[str | None]:
    """The memory's text at its level: none at level 1 (its turns are its text), a ~200-character summary at
    level 2 (names, places, numbers kept), keywords and emotion tags at levels 3 and 4. Half Japanese (3 bytes
    a character in UTF-8, so those summaries weigh about twice the English ones)."""
    import random

    py = random.Random(int(rng.integers(2**31)))
    out: list[str | None] = []
    for i in range(n):
        japanese = i % 2 == 1
        if level == 1:
            out.append(None)
        elif level == 2:
            parts: list[str] = []
            while sum(len(p) for p in parts) < 170:  # stop past 170: ~200 characters on average
                parts.append(sentence(py, japanese).replace("。", f"（{py.randint(1, 999)}）。")
                             if japanese else sentence(py, japanese)[:-1] + f" ({py.randint(1, 999)}).")
            out.append(("" if japanese else " ").join(parts))
        else:
            words = sentence(py, japanese).rstrip("。.").replace("は", " ").replace("を", " ").replace("で", " ").split()
            tags = py.sample(TAGS, py.randint(0, 3))
            out.append(", ".join(py.sample(words, min(len(words), 4))) + (" | " + ", ".join(tags) if tags else ""))
    return out


def level_file_bytes(path: Path, columns: MemoryColumns, level: int, rng: np.random.Generator) -> dict[str, float]:
    """One DuckDB file of ``len(columns)`` memories at ``level``, with every per-memory field the issue lists
    (ids, lifecycle columns, valence, arousal, tags, the text at the level). Returns its size per memory."""
    n = len(columns)
    texts = level_texts(level, n, rng)
    valence_names = list(VALENCES)
    frame = {
        "key": np.arange(n, dtype=np.int64),
        **{name: getattr(columns, name) for name in FIELDS},
        "valence": np.array(valence_names, dtype=object)[rng.integers(0, len(valence_names), n)],
        "arousal": np.round(rng.uniform(0, 100, n)),
        "text": np.array(texts, dtype=object),
    }
    frame["level"] = np.full(n, level, np.int8)
    tag_lists = [list(rng.choice(TAGS, size=int(k), replace=False)) for k in rng.integers(0, 4, n)]
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE memories (memory_id VARCHAR PRIMARY KEY, user_id VARCHAR NOT NULL, "
                f"{_column_sql(columns)}, valence VARCHAR NOT NULL, arousal DOUBLE NOT NULL, tags VARCHAR[] NOT NULL, "
                "text VARCHAR)")
    con.register("level_rows", frame)
    con.execute("CREATE TEMP TABLE level_tags AS SELECT unnest(?::BIGINT[]) AS key, unnest(?::VARCHAR[][]) AS tags",
                [frame["key"].tolist(), tag_lists])
    names = ", ".join(f'r."{n}"' for n in FIELDS)
    con.execute(f"INSERT INTO memories SELECT 'memory-' || r.key, 'user-' || r.\"group\", {names}, r.valence, "
                "r.arousal, t.tags, r.text FROM level_rows r JOIN level_tags t USING (key) ORDER BY r.key")
    con.execute("DROP TABLE level_tags")
    con.unregister("level_rows")
    con.execute("CHECKPOINT")
    con.close()
    size = path.stat().st_size
    text_chars = [len(t) for t in texts if t is not None]
    return {"rows": n, "file_bytes": size, "bytes_per_memory": round(size / n, 1),
            "text_chars_mean": round(float(np.mean(text_chars)), 1) if text_chars else 0.0}


def vector_file_bytes(path: Path, embeddings: np.ndarray) -> dict[str, float]:
    """The embeddings alone next to the memory id, as FLOAT[dim] (fixed size) and as FLOAT[] (a list, as the
    archive's segments keep theirs), one file each: bytes per memory."""
    n, dim = embeddings.shape
    flat = {"row": np.repeat(np.arange(n, dtype=np.int64), dim), "pos": np.tile(np.arange(dim, dtype=np.int16), n),
            "value": np.ascontiguousarray(embeddings, np.float32).reshape(-1)}
    out: dict[str, float] = {"rows": n, "raw_bytes_per_memory": dim * 4}
    for label, sql_type in (("fixed", f"FLOAT[{dim}]"), ("list", "FLOAT[]")):
        target = path.with_name(f"{path.stem}-{label}{path.suffix}")
        con = duckdb.connect(str(target))
        con.execute(f"CREATE TABLE memory_vectors (memory_id VARCHAR PRIMARY KEY, embedding {sql_type} NOT NULL)")
        con.register("flat_vectors", flat)
        con.execute(f"INSERT INTO memory_vectors SELECT 'memory-' || row, list(value ORDER BY pos)::{sql_type} "
                    "FROM flat_vectors GROUP BY row ORDER BY row")
        con.unregister("flat_vectors")
        con.execute("CHECKPOINT")
        con.close()
        out[f"{label}_bytes_per_memory"] = round(target.stat().st_size / n, 1)
    return out
