"""The DuckDB side of ``bench.lifecycle``: the batch's round trip through the product's table, and on-disk bytes
per memory per level.

The round trip (``MemoryTableRoundTrip``) is ``lumina_memory.stores.memories_duckdb.MemoryTable`` on its own DuckDB file —
the table, the methods and the arguments ``lumina_memory.nodes.lifecycle.run.run_day`` uses: ``load`` and ``relation_rows``
for the users, memory ids mapped to rows; ``write_day`` with every row's batch columns, the users' relation set
as (user, src, dst, kind, score) tuples when it moved, the derived writes owed, the deletions and the day's
mark, in one transaction. Encoding's ``put_new`` writes the memories, recall's ``mark_recalled`` the flags
between two batches. What ``run_day`` does besides is not here: reading each user's segments (for texts and
their embeddings; the bench keeps the embeddings in memory) and compressing texts (model time is excluded).

The level files (``level_file_bytes``) are tables of their own: every per-memory field at one level, to weigh it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import duckdb
import numpy as np

from lumina_memory.nodes.lifecycle import TAGS, VALENCES, MemoryColumns, Relations, compression_work
from lumina_memory.stores.duckdb_connection import GuardedConnection
from lumina_memory.stores.memories_duckdb import CATEGORIES, RELATION_KINDS, WRITTEN_BY_BATCH, MemoryTable

from .perf import sentence

SQL_TYPES = {"float64": "DOUBLE", "int8": "TINYINT", "int64": "BIGINT", "bool": "BOOLEAN"}
FIELDS = [f.name for f in fields(MemoryColumns)]
PUT_CHUNK = 100_000  # memories per put_new call while importing (each call holds its rows as Python lists)
IMPORT_DAY = -1  # the day the imported relations are written with (before any batch day)


def memory_ids(keys: np.ndarray) -> np.ndarray:
    """The bench's memory ids (object array), one per key: keys are in insertion order, as the table's seq."""
    return np.array([f"m{k}" for k in np.asarray(keys).tolist()], dtype=object)


class MemoryTableRoundTrip:
    """Every memory of ``users`` users (``user_id`` "u<group>") in the product's lifecycle table."""

    def __init__(self, path: Path, users: int):
        self.path = path
        self.db = GuardedConnection(str(path), str(path.parent), "archive", ())
        self.table = MemoryTable(self.db)
        self.users = [f"u{g}" for g in range(users)]

    # --- what encoding and recall write ------------------------------------------------------------
    def insert(self, columns: MemoryColumns, ids: np.ndarray) -> None:
        """New memories, as encoding writes them (``put_new``; no emotion reading: neutral, no tags)."""
        for start in range(0, len(columns), PUT_CHUNK):
            part = slice(start, start + PUT_CHUNK)
            values = {name: getattr(columns, name)[part].tolist() for name in (
                "group", "created", "category", "intensity", "decay", "memory_days", "retention", "level",
                "protected", "recalled", "recall_count", "unbatched", "idle_days", "archived_on", "archive_reason",
                "revival_requested")}
            values["user_id"] = [self.users[g] for g in values.pop("group")]
            values["category"] = [CATEGORIES[c] for c in values["category"]]
            names = list(values)
            rows = [dict(zip(names, row), memory_id=memory_id, valence="neutral", valence_score=0.0, arousal=50.0,
                         tags=[], emotion_path="bench")
                    for memory_id, row in zip(ids[part].tolist(), zip(*values.values()))]
            self.table.put_new(rows)

    def import_relations(self, relations: Relations, columns: MemoryColumns, ids: np.ndarray) -> None:
        """The imported memories' relations, written as a batch day before the first (``IMPORT_DAY``)."""
        self.table.write_day(self.users, IMPORT_DAY, np.empty(0, np.int64), {}, {},
                             self._tuples(relations, columns.group, ids, {}), [], [], 0.0)

    def flag(self, columns: MemoryColumns, ids: np.ndarray, recalled: np.ndarray, asked: np.ndarray) -> None:
        """What recall writes between two batches (``mark_recalled``): per user, the ``recalled`` rows (any
        recall) and the ``asked`` archived rows (deliberate recall, at its ``revival_requested_at``)."""
        for rows, deliberate in ((np.flatnonzero(recalled), False), (np.flatnonzero(asked), True)):
            when = columns.revival_requested_at[rows] if deliberate else np.zeros(len(rows))
            keys = np.lexsort((when, columns.group[rows]))
            rows, when = rows[keys], when[keys]
            cut = np.flatnonzero((np.diff(columns.group[rows]) != 0) | (np.diff(when) != 0)) + 1
            for part in np.split(np.arange(len(rows)), cut):
                if len(part):
                    first = rows[part[0]]
                    self.table.mark_recalled(self.users[columns.group[first]], ids[rows[part]].tolist(),
                                             float(when[part[0]]), deliberate)

    # --- the batch's round trip, as run_day makes it --------------------------------------------------
    def load(self) -> tuple[MemoryColumns, Relations, np.ndarray, np.ndarray, list[tuple]]:
        """Every user's columns (by user, then seq), relations as rows, ids, seqs and the relation rows."""
        arrays, ids, seqs = self.table.load(self.users)
        columns = MemoryColumns.new(**arrays)
        relation_rows = self.table.relation_rows(self.users)
        index = {memory_id: i for i, memory_id in enumerate(ids)}
        kept = [(index[s], index[d], RELATION_KINDS.index(k)) for _u, s, d, k, _score in relation_rows
                if s in index and d in index]
        relations = Relations.of(*zip(*kept)) if kept else Relations.empty()
        return columns, relations, ids, seqs, relation_rows

    def write_day(self, day: int, ids: np.ndarray, seqs: np.ndarray, outcome, relations_after: Relations,
                  relation_rows: Sequence[tuple], now: float) -> int:
        """One day in one transaction: every row's batch columns, the relation set when it moved (scores kept,
        1.0 for new links), derived writes owed, deletions, the day's mark. Returns the rows written."""
        after = outcome.columns
        work = compression_work(outcome.level_before, after.level)
        changed = work["summarise"] | work["keywords"] | work["revive"]
        user_of = np.asarray(self.users, dtype=object)[after.group]
        outbox = [(user_of[i], ids[i], "payload" if work["revive"][i] else "reembed") for i in np.flatnonzero(changed)]
        relations = None
        if len(relations_after) != len(outcome.relations) or outcome.relations_removed or outcome.relations_flipped \
                or len(relations_after) != len(relation_rows):
            scores = {(s, d, k): score for _u, s, d, k, score in relation_rows}
            relations = self._tuples(relations_after, after.group, ids, scores)
            outbox += [(u, "*", "relations") for u in self.users]
        deleted = np.flatnonzero(outcome.deleted)
        outbox += [(user_of[i], ids[i], "delete") for i in deleted]
        payload = np.flatnonzero((after.level != outcome.level_before) & ~changed & ~outcome.deleted)
        outbox += [(user_of[i], ids[i], "payload") for i in payload]
        values = {k: getattr(after, k) for k in WRITTEN_BY_BATCH}
        self.table.write_day(self.users, day, seqs, values, {}, relations, outbox, seqs[deleted], now)
        return len(seqs)

    def _tuples(self, relations: Relations, group: np.ndarray, ids: np.ndarray, scores: dict) -> list[tuple]:
        out = []
        for s, d, k in zip(relations.src.tolist(), relations.dst.tolist(), relations.kind.tolist()):
            src, dst, kind = ids[s], ids[d], RELATION_KINDS[k]
            out.append((self.users[group[s]], src, dst, kind, float(scores.get((src, dst, kind),
                                                                            scores.get((dst, src, kind), 1.0)))))
        return out

    def close(self) -> int:
        """Checkpoint, close, and return the file's size in bytes."""
        self.db.close()
        return self.path.stat().st_size


def _column_sql(columns: MemoryColumns) -> str:
    # NaN (no revival request) arrives as NULL: a numpy scan reads NaN as NULL, as pandas does
    return ", ".join(f'"{name}" {SQL_TYPES[str(getattr(columns, name).dtype)]}'
                     + ("" if name == "revival_requested_at" else " NOT NULL") for name in FIELDS)


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
