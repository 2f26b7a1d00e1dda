"""Lexical search engines side by side: our in-process BM25 postings against Qdrant's sparse vectors, embedded.

The same documents either way: each LoCoMo turn as our tokenizer reads it (Sudachi/English terms, cross-script
keys), one user per conversation, all users in one qdrant-edge shard filtered on ``user_id`` (as the vector tiers
keep them). Qdrant's IDF modifier computes the IDF per query over the user's own points (``IdfParams(corpus=...)``)
and multiplies it into the dot product, so a document's sparse values carry BM25's saturated term frequency,
worked out here with the user's average length (the same k1, b and statistics as the in-process index).

Reported, in one process: evidence recall and hit in the lexical top-k over questions of categories 1–4 (with
95 % bootstrap intervals over conversations for the paired difference), how often the two top-k lists agree,
p50/p95 query latency (the search alone: reading the query is the same for both) and indexing time.

    python -m bench.lexical_engines --data ../shared/data/locomo/locomo_dev.json [--k 10,50] [--md out.md]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict

import numpy as np
import qdrant_edge as qe

from bench.ablation_stats import ConvSums, contribution
from bench.locomo_data import load
from lumina_memory.nodes.retrieval.turn_reads import read_turns
from lumina_memory.nodes.text.tokenize import terms
from lumina_memory.stores.lexical import B, K1
from lumina_memory.stores.lexical_index import InProcessLexical
from lumina_memory.stores.models import Turn

CATEGORIES = (1, 2, 3, 4)
SPARSE = "bm25"


def _shard(path: str) -> qe.EdgeShard:
    config = qe.EdgeConfig(vectors={}, sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})
    shard = qe.EdgeShard.create(path, config)
    shard.update(qe.UpdateOperation.create_field_index("user_id", qe.KeywordIndexParams(is_tenant=True)))
    return shard


def _user_filter(user: str) -> qe.Filter:
    return qe.Filter(must=[qe.FieldCondition(key="user_id", match=qe.MatchValue(user))])


def _sparse_docs(index: InProcessLexical, vocab: dict[str, int]) -> list[tuple[list[int], list[float]]]:
    """Each document's (term ids, BM25-saturated term frequencies) from the in-process postings."""
    norm = index.norms(K1, B)
    rows: list[tuple[list[int], list[float]]] = [([], []) for _ in range(index.size)]
    for term, (docs, tf) in index.postings.items():
        code = vocab.setdefault(term, len(vocab))
        tf = tf.astype(np.float64)
        values = tf * (K1 + 1) / (tf + norm[docs])
        for d, v in zip(docs.tolist(), values.tolist()):
            rows[d][0].append(code)
            rows[d][1].append(v)
    return rows


def _recall(found: list[str], evidence: list[str]) -> tuple[float, bool]:
    covered = set(found) & set(evidence)
    return len(covered) / len(set(evidence)), covered == set(evidence)


def run(path: str, ks: list[int], conversations: list[str] | None = None) -> dict:
    convs = load(path, conversations)
    top = max(ks)
    sums = {(engine, k): {} for engine in ("in-process", "qdrant-edge") for k in ks}
    latency = defaultdict(list)
    timing = defaultdict(float)
    agree = {k: [0, 0, 0] for k in ks}  # identical lists, identical score sequences (ties in another order), questions
    vocab: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        shard = _shard(tmp + "/shard")
        point = 0
        users = []
        for conv in convs:
            user = conv.sample_id
            turns = [Turn(turn_id=t.dia_id, source_id=t.dia_id, user_id=user, speaker=t.speaker, text=t.text, ts=t.ts)
                     for t in conv.turns]
            started = time.perf_counter()
            reads = read_turns([t.text for t in turns], (0, 0))
            timing["read (shared)"] += time.perf_counter() - started
            started = time.perf_counter()
            lexical = InProcessLexical().extended([r.terms for r in reads.reads], [r.keys for r in reads.reads])
            timing["index in-process"] += time.perf_counter() - started
            started = time.perf_counter()
            docs = _sparse_docs(lexical, vocab)
            points = [qe.Point(point + d, {SPARSE: qe.SparseVector(ids, values)}, {"user_id": user, "doc": d})
                      for d, (ids, values) in enumerate(docs) if ids]
            for at in range(0, len(points), 256):
                shard.update(qe.UpdateOperation.upsert_points(points[at:at + 256]))
            shard.flush()
            timing["index qdrant-edge"] += time.perf_counter() - started
            point += len(docs)
            users.append((conv, user, lexical, [t.turn_id for t in turns]))
        seen: set[str] = set()
        started = time.perf_counter()
        shard.optimize()
        timing["qdrant-edge optimize (once, all users)"] += time.perf_counter() - started
        for conv, user, lexical, turn_ids in users + users:  # the first pass warms both engines up, untimed
            warm = conv.sample_id not in seen
            seen.add(conv.sample_id)
            flt = _user_filter(user)
            params = qe.SearchParams(idf=qe.IdfParams(corpus=flt))
            for q in conv.questions:
                if q.category not in CATEGORIES or not q.evidence:
                    continue
                q_terms = terms(q.question)
                started = time.perf_counter()
                mine = lexical.search(q_terms, top)
                if not warm:
                    latency["in-process"].append(time.perf_counter() - started)
                started = time.perf_counter()
                codes = sorted({vocab[t] for t in q_terms if t in vocab})
                theirs = [] if not codes else shard.query(qe.QueryRequest(
                    limit=top, query=qe.Query.Nearest(qe.SparseVector(codes, [1.0] * len(codes)), using=SPARSE),
                    filter=flt, params=params, with_payload=True))
                if not warm:
                    latency["qdrant-edge"].append(time.perf_counter() - started)
                    continue
                ranked = {"in-process": [i for i, _ in mine], "qdrant-edge": [int(h.payload["doc"]) for h in theirs]}
                for k in ks:
                    a, b = ranked["in-process"][:k], ranked["qdrant-edge"][:k]
                    agree[k][0] += a == b
                    agree[k][1] += len(a) == len(b) and bool(np.allclose([s for _, s in mine[:k]], [h.score for h in theirs[:k]], rtol=1e-4))
                    agree[k][2] += 1
                    for engine, found in ranked.items():
                        r, hit = _recall([turn_ids[i] for i in found[:k]], q.evidence)
                        sums[(engine, k)].setdefault(user, ConvSums()).add(r, hit)
        shard.close()
    return {"sums": sums, "latency": latency, "timing": timing, "agree": agree, "ks": ks,
            "turns": sum(len(c.turns) for c in convs), "conversations": len(convs)}


def _mean(sums: dict[str, ConvSums], metric: str) -> float:
    return sum(getattr(s, metric) for s in sums.values()) / sum(s.n for s in sums.values())


def report(result: dict) -> str:
    lat = {e: np.percentile(np.asarray(v) * 1000, [50, 95]) for e, v in result["latency"].items()}
    t = result["timing"]
    lines = [
        f"{result['conversations']} conversations, {result['turns']} turns, one user each; "
        f"{result['agree'][result['ks'][0]][2]} questions (categories 1–4 with evidence).", "",
        "| engine | " + " | ".join(f"recall@{k} | hit@{k}" for k in result["ks"]) + " | query p50 / p95 ms | index s |",
        "|---|" + "---|---|" * len(result["ks"]) + "---|---|",
    ]
    for engine, index_key in (("in-process", "index in-process"), ("qdrant-edge", "index qdrant-edge")):
        cells = " | ".join(f"{_mean(result['sums'][(engine, k)], 'recall'):.3f} | {_mean(result['sums'][(engine, k)], 'hit'):.3f}"
                           for k in result["ks"])
        lines.append(f"| {engine} | {cells} | {lat[engine][0]:.3f} / {lat[engine][1]:.3f} | {t[index_key]:.3f} |")
    lines.append("")
    for k in result["ks"]:
        ci = contribution(result["sums"][("qdrant-edge", k)], result["sums"][("in-process", k)])
        same, scores, n = result["agree"][k]
        lines.append(f"- top-{k}: qdrant-edge − in-process recall {ci['delta']:+.4f} (95 % CI {ci['lo']:+.4f} … "
                     f"{ci['hi']:+.4f}, conversations resampled); the same scores in the same order (to 1e-4) for "
                     f"{scores}/{n} questions, the same documents in the same order for {same}/{n} (ties break otherwise)")
    ratio_p50 = lat["qdrant-edge"][0] / lat["in-process"][0]
    ratio_p95 = lat["qdrant-edge"][1] / lat["in-process"][1]
    ratio_index = t["index qdrant-edge"] / t["index in-process"]
    lines += [f"- ratios qdrant-edge / in-process: query p50 {ratio_p50:.1f}×, p95 {ratio_p95:.1f}×, "
              f"indexing {ratio_index:.1f}× (plus {t['qdrant-edge optimize (once, all users)']:.3f} s optimize)",
              f"- reading the turns (tokenizer, shared by both): {t['read (shared)']:.3f} s"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--k", default="10,50")
    parser.add_argument("--conversations", default="")
    parser.add_argument("--md", default="")
    args = parser.parse_args()
    text = report(run(args.data, [int(k) for k in args.k.split(",")],
                      [c for c in args.conversations.split(",") if c] or None))
    print(text)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
