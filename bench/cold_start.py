"""A process that starts: the first recall of a user warmed at start, of one whose index is built inside the
recall from the reads the archive keeps, and of one built from the texts (what every first recall cost before).

    python -m bench.cold_start [--memories 10000] [--long-share 0.5] [--data-dir DIR] [--out bench/results/cold_start.json]
                               [--snapshot-min-turns N]

A data directory is filled (once; ``--data-dir`` keeps it for later runs) with two users' synthetic memories as
``bench.perf`` writes them (half of the assistant's turns ~700-word replies when ``--long-share`` is 0.5), one
English, one Japanese of each kind, and each user's index is then topped up as the flush's last stage does, which
keeps the turns' reads in the archive (nodes.retrieval.turn_reads). Then, in one fresh process, the services open
as the LangGraph server opens them: the start-up warm-up (``lumina_memory.nodes.retrieval.warm.warm_at_start``) builds the recall
indexes of the most recently active user of each language in the background, and the two others are left cold.
After the warm-up ends and one recall of a user without memories (the process's one-time costs, reported apart),
each warmed user gets a first recall; then each cold user gets one with the index built
from the texts (the baseline: the kept reads ignored, as before they were kept) and, with that index and the text
caches dropped, one with the index built from the kept reads, and then one with the index loaded from the snapshot the
fill's write-time stage kept (nodes.retrieval.index_snapshot) (budget 1,024, query embedding excluded). Reported:
the warm-up's seconds, each first recall with its stages, and the ratios.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from bench import perf
from bench.common import bench_settings

USERS = ("cold-en", "cold-ja", "warm-en", "warm-ja")  # filled in this order: the last two are the most recent
QUESTIONS = {"en": "What did Emma cook on Monday at home?", "ja": "美咲は月曜日に家で何を作った？"}


def fill(data_dir: Path, memories: int, long_share: float, **overrides) -> None:
    from lumina_memory.nodes.retrieval.warm import warm_indexes
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.recall_snapshots import KINDS
    from lumina_memory.stores.redis_server import stop_server

    settings = bench_settings(data_dir, **overrides)
    services = open_services(settings)
    try:
        pool = None
        for seed, user in enumerate(USERS):
            if not services.stores.archive.counts(user)["turns"]:
                pool = pool or perf.Pool(services.embedder, min(4000, max(64, memories)))
                # odd seeds are Japanese in bench.perf: cold-ja and warm-ja
                perf.fill_user(services, pool, user, memories, seed, long_share=long_share)
                print(f"filled {user}", flush=True)
            archive = services.stores.archive
            if (archive.turn_reads.count(user) < archive.counts(user, which=("turns",))["turns"]
                    or any(services.turn_index.snapshots.existing(user, kind) is None for kind in KINDS)):
                warm_indexes(services, user)  # what the flush's last stage does after each write: keeps the reads and the snapshot
    finally:
        services.close()
        stop_server(settings)


def measure(data_dir: Path, **overrides) -> dict:
    from lumina_memory.nodes.retrieval.recall import Timings, recall
    from lumina_memory.nodes.retrieval.warm import _drop, warm_at_start
    from lumina_memory.nodes.services import open_services
    from lumina_memory.nodes.text.text_caches import clear_text_caches
    from lumina_memory.stores.redis_server import stop_server

    settings = bench_settings(data_dir, **overrides)
    services = open_services(settings)
    try:
        started = time.perf_counter()
        warm = warm_at_start(services, 2)
        assert warm is not None and sorted(warm.users) == ["warm-en", "warm-ja"], warm and warm.users
        warm.thread.join()
        warm_s = time.perf_counter() - started
        qvecs = {lang: services.embedder.embed([q])[0] for lang, q in QUESTIONS.items()}

        def first_recall(user: str) -> dict:
            lang = user.split("-")[1]
            timings = Timings()
            t = time.perf_counter()
            recall(services, user, QUESTIONS[lang], purpose="question", budget=1024, query_vector=qvecs[lang], timings=timings)
            ms = (time.perf_counter() - t) * 1000 - timings.embed_ms
            print(f"{user}: first recall {ms:.1f} ms", flush=True)
            return {"first_recall_ms": round(ms, 1), "stages_ms": {k: round(v, 1) for k, v in timings.stages.items()}}

        first: dict[str, dict] = {}
        # The process's first recall pays one-time costs whoever asks (lazy imports, first calls into numpy and the
        # engines): paid here by a user without memories, reported apart, so no user below carries them.
        t = time.perf_counter()
        recall(services, "bench-nobody", QUESTIONS["en"], purpose="question", budget=1024, query_vector=qvecs["en"])
        process_first_ms = round((time.perf_counter() - t) * 1000, 1)
        # The warmed users first: what the cold users' runs below drop (text caches) is theirs too.
        for user in USERS[2:]:
            first[user] = first_recall(user)
        index = services.turn_index
        snapshots = index.snapshots
        for user in USERS[:2]:
            # Baseline first, so the later figures get no help from the caches it warmed: each starts from
            # no index and empty text caches.
            index.kept_reads, index.snapshots = False, None
            clear_text_caches()
            first[f"{user} (from the texts)"] = first_recall(user)
            index.kept_reads = True
            _drop(services, user)
            clear_text_caches()
            first[f"{user} (from the kept reads)"] = first_recall(user)
            index.snapshots = snapshots
            _drop(services, user)
            clear_text_caches()
            first[f"{user} (from the snapshot)"] = first_recall(user)
        summary = index.summary()
        ms = {k: v["first_recall_ms"] for k, v in first.items()}
        ratio = {lang: {"texts_over_kept_reads": round(ms[f"cold-{lang} (from the texts)"] / ms[f"cold-{lang} (from the kept reads)"], 1),
                        "kept_reads_over_snapshot": round(ms[f"cold-{lang} (from the kept reads)"] / ms[f"cold-{lang} (from the snapshot)"], 1),
                        "snapshot_over_warmed": round(ms[f"cold-{lang} (from the snapshot)"] / ms[f"warm-{lang}"], 1)}
                 for lang in QUESTIONS}
        return {"warm_up_seconds": round(warm_s, 1), "warmed_users": warm.done, "process_first_recall_ms": process_first_ms,
                "first_recall": first, "ratios": ratio,
                "recall_index": summary, "turns_per_user": services.stores.archive.counts(USERS[0])["turns"]}
    finally:
        services.close()
        stop_server(settings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--long-share", type=float, default=0.5)
    parser.add_argument("--data-dir", type=Path, default=None, help="kept between runs (filled once)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--snapshot-min-turns", type=int, default=None,
                        help="LUMINA_RECALL_SNAPSHOT_MIN_TURNS for this run (default: the setting's)")
    args = parser.parse_args(argv)
    overrides = {} if args.snapshot_min_turns is None else {"recall_snapshot_min_turns": args.snapshot_min_turns}
    with tempfile.TemporaryDirectory(prefix="lumina-cold-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        fill(data_dir, args.memories, args.long_share, **overrides)
        result = measure(data_dir, **overrides)
    result.update(memories_per_user=args.memories, long_share=args.long_share, machine=platform.machine(),
                  when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    print(json.dumps(result, ensure_ascii=False, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
