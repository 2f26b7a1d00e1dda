"""Recall ablation over every labelled set: what each switch of ``RecallConfig`` contributes, with intervals.

    python -m bench.ablation [--set locomo_dev] [--set multilingual] [--data PATH …] [--budget 256,1024]
                             [--conversations ID,…] [--switches a,b] [--half even|odd]
                             [--data-dir DIR] [--out bench/results/ablation_NAME]

For each set, each conversation is ingested once through the real memory graph (bench.locomo.ingest), then
every question is asked through ``recall`` with all switches on ("full") and with each switch of
``RecallConfig`` (``SWITCHES``) turned off in turn (``disabled=(switch,)``), and with the ``plain`` preset (the
hybrid baseline: dense search over turn vectors with the question's content view and BM25, fused by rank), at every budget; the configurations
are interleaved question by question in a shuffled order, after one untimed recall of the question that warms
its caches, so load on the machine, caching and order fall on all of them alike. Per question: evidence
recall@B and hit@B (bench.locomo's packer and metric). A switch's contribution is full − off, with a 95% paired
bootstrap interval resampling conversations (bench.ablation_stats, 1,000 resamples), and leave-one-conversation-out:
the keep/drop choice made on the other conversations, scored on the held-out one. Latency: p50/p95 of each
configuration's recall (without the query embedding, computed once per question outside the timing).

Sets: ``locomo_dev`` (../shared/data/locomo/locomo_dev.json), ``multilingual`` (bench.multilingual_data: Korean,
Arabic, Hindi, Thai, Chinese, German, Spanish), ``longreply`` / ``longreply_hard`` (bench.longreply_data: English
and Japanese), generated into a temporary file; ``--data PATH`` adds any LoCoMo-format file. Writes
``OUT.json`` (per-conversation sums of every configuration, enough to recompute every interval) and ``OUT.md``.
A switch whose recall interval includes zero at every budget on every set run is listed as a removal candidate.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from bench.ablation_stats import RESAMPLES, ConvSums, contribution, includes_zero, leave_one_out
from bench.common import percentiles
from bench.locomo_data import Conversation, load

FULL = "full"
PLAIN = "plain"  # RecallConfig's "plain" preset: dense (content view) + BM25 over turns fused by rank, the baseline
LOCOMO_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
SETS = ("locomo_dev", "multilingual", "longreply", "longreply_hard")


def materialise(name: str, tmp: Path) -> Path:
    """The file of a named set: LoCoMo dev as shipped, the project's own sets generated with their defaults."""
    if name == "locomo_dev":
        return LOCOMO_DEV
    out = tmp / f"{name}.json"
    if name == "multilingual":
        from bench import multilingual_data

        out.write_text(json.dumps(multilingual_data.generate(), ensure_ascii=False), encoding="utf-8")
    elif name in ("longreply", "longreply_hard"):
        from bench import longreply_data as lr

        profile = lr.PROFILES["hard" if name.endswith("hard") else "default"]
        out.write_text(lr.dumps(lr.generate(lr.DEFAULT_PER_LANGUAGE, lr.DEFAULT_SEED, profile)), encoding="utf-8")
    else:
        raise SystemExit(f"unknown set {name!r}; known: {', '.join(SETS)} (or --data PATH)")
    return out


def in_half(conversations: Sequence[Conversation], half: str) -> list[Conversation]:
    """The conversations of one half, in file order: ``even`` = 0, 2, 4 …, ``odd`` = 1, 3, 5 … (tune on one, report
    on the other), or ``all``."""
    if half not in ("even", "odd", "all"):
        raise ValueError(f"half must be even, odd or all, not {half!r}")
    return [c for k, c in enumerate(conversations) if half == "all" or k % 2 == (half == "odd")]


class SetRun:
    """Per-conversation sums and latencies of every configuration at every budget, for one set."""

    def __init__(self, configs: Sequence[str], budgets: Sequence[int]) -> None:
        self.configs, self.budgets = list(configs), list(budgets)
        self.sums: dict[str, dict[int, dict[str, ConvSums]]] = {c: {b: {} for b in budgets} for c in configs}
        self.ms: dict[str, dict[int, list[float]]] = {c: {b: [] for b in budgets} for c in configs}

    def add(self, config: str, budget: int, conv: str, recall: float, hit: bool, ms: float) -> None:
        self.sums[config][budget].setdefault(conv, ConvSums()).add(recall, hit)
        self.ms[config][budget].append(ms)

    def mean(self, config: str, budget: int, metric: str, convs: Sequence[str] | None = None) -> float:
        rows = [s for c, s in self.sums[config][budget].items() if convs is None or c in convs]
        n = sum(s.n for s in rows)
        return sum(getattr(s, metric) for s in rows) / n if n else float("nan")


def _ask(services, conv: Conversation, run: SetRun, configs: dict[str, dict[str, Any]]) -> None:
    from lumina_memory.nodes.retrieval.budget import pack
    from lumina_memory.nodes.retrieval.recall import Timings, recall

    rng = random.Random(conv.sample_id)
    for q in conv.questions:
        qvec = services.embedder.embed([q.question])[0]
        # Untimed, every switch on: what recall caches per query (its reading, its content view's embedding)
        # is warm for every timed configuration alike, not only for the ones after the first.
        recall(services, conv.sample_id, q.question, purpose="question", budget=max(run.budgets), query_vector=qvec)
        for budget in run.budgets:
            order = list(configs)
            rng.shuffle(order)  # no configuration is always first (or last) after the warm-up
            for config in order:
                kwargs = configs[config]
                timings = Timings()
                started = time.perf_counter()
                items = recall(services, conv.sample_id, q.question, purpose="question", budget=budget,
                               query_vector=qvec, timings=timings, **kwargs)
                ms = (time.perf_counter() - started) * 1000 - timings.embed_ms
                _, covered, _ = pack(items, budget)
                found = sum(1 for e in q.evidence if e in covered)
                run.add(config, budget, conv.sample_id, found / len(q.evidence), found == len(q.evidence), ms)


def run_set(name: str, path: Path, budgets: Sequence[int], switches: Sequence[str], wanted: list[str] | None,
            root: Path, language: str = "", half: str = "all") -> dict[str, Any]:
    from bench.locomo import ingest
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.stores.redis_server import stop_server

    conversations = [c for c in load(path, wanted) if not language or c.language == language]
    conversations = in_half(conversations, half)
    if not conversations:
        raise SystemExit(f"{name}: no conversations in {path} (asked for {wanted})")
    from lumina_memory.stores.settings_recall import RecallConfig

    configs = {FULL: {}, PLAIN: {"config": RecallConfig.preset("plain")}, **{s: {"disabled": (s,)} for s in switches}}
    run = SetRun(list(configs), budgets)
    started = time.perf_counter()
    for i, conv in enumerate(conversations, 1):
        settings, services, stats = ingest(conv, root / name / conv.sample_id, quiet=True)
        try:
            # One untimed recall first: the user's in-process indexes are built on the first one.
            recall(services, conv.sample_id, conv.questions[0].question, purpose="question", budget=max(budgets))
            _ask(services, conv, run, configs)
        finally:
            services.close()
            stop_server(settings)
            gc.collect()
        _progress(name, conv, i, len(conversations), run, switches, stats, time.perf_counter() - started)
    return summarise(name, path, conversations, run, switches)


def _progress(name, conv, i, total, run: SetRun, switches, stats, elapsed: float) -> None:
    b = max(run.budgets)
    full = run.mean(FULL, b, "recall", [conv.sample_id])
    print(f"[{name}] {conv.sample_id} ({i}/{total}) {len(conv.questions)} questions, ingest "
          f"{stats.get('seconds', float('nan')):.1f}s, full recall@{b} {full:.3f}, {elapsed:.0f}s so far", flush=True)
    for s in switches:
        off = run.mean(s, b, "recall", [conv.sample_id])
        print(f"[{name}]   {conv.sample_id} off {s:<16} Δrecall@{b} {full - off:+.4f}  "
              f"p50 {percentiles(run.ms[s][b][-len(conv.questions):], (50,))['p50']:.1f} ms", flush=True)


def summarise(name: str, path: Path, conversations: list[Conversation], run: SetRun,
              switches: Sequence[str]) -> dict[str, Any]:
    configs = {
        c: {str(b): {"recall": round(run.mean(c, b, "recall"), 4), "hit": round(run.mean(c, b, "hit"), 4),
                     **percentiles(run.ms[c][b], (50, 95))} for b in run.budgets}
        for c in run.configs
    }
    contributions: dict[str, dict[str, Any]] = {}
    for s in switches:
        per_budget = {}
        for b in run.budgets:
            full, off = run.sums[FULL][b], run.sums[s][b]
            ci = {m: {k: round(v, 4) if isinstance(v, float) else v for k, v in contribution(full, off, m).items()}
                  for m in ("recall", "hit")}
            loco = leave_one_out(full, off, "recall")
            per_budget[str(b)] = {
                **ci,
                "loco_recall_gain": round(loco["gain"], 4),
                "loco_agree": f"{loco['agree']}/{loco['conversations']}",
                "p50_ms_cost": round(configs[FULL][str(b)]["p50"] - configs[s][str(b)]["p50"], 2),
                "p95_ms_cost": round(configs[FULL][str(b)]["p95"] - configs[s][str(b)]["p95"], 2),
            }
        contributions[s] = per_budget
    return {
        "set": name,
        "data": str(path),
        "conversations": [c.sample_id for c in conversations],
        "questions": sum(len(c.questions) for c in conversations),
        "budgets": run.budgets,
        "configs": configs,
        "contributions": contributions,
        "sums": {c: {str(b): {k: v.as_dict() for k, v in run.sums[c][b].items()} for b in run.budgets}
                 for c in run.configs},
    }


def _common(sets: Sequence[dict[str, Any]]) -> list[str]:
    """The switches every set ran, in the first set's order."""
    return [s for s in (sets[0]["contributions"] if sets else ()) if all(s in r["contributions"] for r in sets)]


def removal_candidates(sets: Sequence[dict[str, Any]]) -> list[str]:
    """Switches whose recall interval includes zero at every budget of every set."""
    return [s for s in _common(sets)
            if all(includes_zero(r["contributions"][s][str(b)]["recall"]) for r in sets for b in r["budgets"])]


def never_help(sets: Sequence[dict[str, Any]]) -> list[str]:
    """Switches whose recall interval is entirely below zero somewhere and never entirely above it: recall is
    better without them."""
    cis = {s: [r["contributions"][s][str(b)]["recall"] for r in sets for b in r["budgets"]] for s in _common(sets)}
    return [s for s, xs in cis.items() if any(x["hi"] < 0 for x in xs) and not any(x["lo"] > 0 for x in xs)]


def _ci(x: dict[str, float]) -> str:
    return f"{x['delta'] * 100:+.2f} [{x['lo'] * 100:+.2f}, {x['hi'] * 100:+.2f}]"


def _across(sets: Sequence[dict[str, Any]]) -> list[str]:
    """One row a switch: its recall Δ [CI] at every budget of every set, and whether every interval holds 0."""
    head = ["switch", *[f"{r['set']} @{b}" for r in sets for b in r["budgets"]], "0 in every interval"]
    lines = ["## Every set", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    zero = set(removal_candidates(sets))
    for s in _common(sets):
        cells = [_ci(r["contributions"][s][str(b)]["recall"]) for r in sets for b in r["budgets"]]
        lines.append("| " + " | ".join([s, *cells, "yes" if s in zero else ""]) + " |")
    return lines + [""]


def render(report: dict[str, Any]) -> str:
    lines = [f"# Recall ablation ({report['date']})", "",
             f"`{report['command']}` — machine: {report['machine']}. Δ = full − switch off, in points of recall "
             f"(×100), 95% paired bootstrap over conversations ({RESAMPLES} resamples); LOCO: leave-one-conversation-"
             "out gain of keeping the switch when it helped on the other conversations (points), and how many "
             "held-out conversations agree with that choice; Δp50 = p50(full) − p50(off) in ms (what the switch "
             "costs; latency moves between runs on a shared 2-core machine).", ""]
    for r in report["sets"]:
        bs = r["budgets"]
        lines += [f"## {r['set']} — {len(r['conversations'])} conversations, {r['questions']} questions", ""]
        lines.append("full: " + ", ".join(
            f"recall@{b} {r['configs'][FULL][str(b)]['recall']:.3f}, hit@{b} {r['configs'][FULL][str(b)]['hit']:.3f}, "
            f"p50/p95 {r['configs'][FULL][str(b)]['p50']:.1f}/{r['configs'][FULL][str(b)]['p95']:.1f} ms" for b in bs))
        if PLAIN in r["configs"]:
            lines.append(f"{PLAIN} (baseline): " + ", ".join(
                f"recall@{b} {r['configs'][PLAIN][str(b)]['recall']:.3f}, hit@{b} {r['configs'][PLAIN][str(b)]['hit']:.3f}, "
                f"p50/p95 {r['configs'][PLAIN][str(b)]['p50']:.1f}/{r['configs'][PLAIN][str(b)]['p95']:.1f} ms" for b in bs))
        lines.append("")
        head = ["switch", *[f"Δrecall@{b} [CI]" for b in bs], f"Δhit@{bs[-1]} [CI]", f"LOCO@{bs[-1]}",
                *[f"Δp50@{b} ms" for b in bs]]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for s, c in r["contributions"].items():
            zero = all(includes_zero(c[str(b)]["recall"]) for b in bs)
            cells = [f"{'*' if zero else ''}{s}", *[_ci(c[str(b)]["recall"]) for b in bs], _ci(c[str(bs[-1])]["hit"]),
                     f"{c[str(bs[-1])]['loco_recall_gain'] * 100:+.2f} ({c[str(bs[-1])]['loco_agree']})",
                     *[f"{c[str(b)]['p50_ms_cost']:+.1f}" for b in bs]]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "\\* recall interval includes zero at every budget of this set.", ""]
    if len(report["sets"]) > 1:
        lines += _across(report["sets"])
    lines += ["## Removal candidates", "",
              "Switches whose recall interval includes zero at every budget on every set run: "
              + (", ".join(f"`{s}`" for s in report["removal_candidates"]) or "none") + ".", "",
              "Switches recall is better without (interval below zero somewhere, above zero nowhere): "
              + (", ".join(f"`{s}`" for s in report.get("never_help", [])) or "none") + ".", ""]
    return "\n".join(lines)


def _rerender(paths: Sequence[str], out: Path | None) -> int:
    """The Markdown (and the removal lists) of saved runs; several runs are merged into ``out``, whose lists
    then range over every set of every run."""
    reports = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    if len(reports) > 1 and out is None:
        raise SystemExit("--render with several files needs --out (where the merged report goes)")
    report = reports[0] if len(reports) == 1 else {
        "date": ", ".join(dict.fromkeys(r["date"] for r in reports)), "machine": reports[0]["machine"],
        "command": "; ".join(r["command"] for r in reports), "resamples": RESAMPLES,
        "sets": [s for r in reports for s in r["sets"]],
    }
    report["removal_candidates"], report["never_help"] = removal_candidates(report["sets"]), never_help(report["sets"])
    target = out or Path(paths[0])
    target.with_suffix(".json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    target.with_suffix(".md").write_text(render(report), encoding="utf-8")
    print(render(report))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from lumina_memory.stores.settings_recall import SWITCHES

    parser = argparse.ArgumentParser(prog="python -m bench.ablation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], help=f"a named set ({', '.join(SETS)}); repeatable")
    parser.add_argument("--data", action="append", default=[], help="a LoCoMo-format file; repeatable")
    parser.add_argument("--budget", default="256,1024")
    parser.add_argument("--conversations", default="", help="only these sample ids (every set)")
    parser.add_argument("--language", default="", help="only the conversations of this language (a set's "
                        "samples say theirs: longreply en / ja, multilingual ko, ar, …)")
    parser.add_argument("--switches", default="", help="only these switches (default: every one)")
    parser.add_argument("--half", choices=("even", "odd", "all"), default="all",
                        help="only the even or odd conversations of each set, in file order (tune on one, report on the other)")
    parser.add_argument("--render", action="append", default=[],
                        help="only rewrite the report of saved JSON(s); several are merged into --out (repeatable)")
    parser.add_argument("--out", default="", help="path without extension (default bench/results/ablation_<sets>)")
    parser.add_argument("--data-dir", default="", help="where conversations are ingested (reused when there; default "
                        "a temporary directory)")
    args = parser.parse_args(argv)
    if args.render:
        return _rerender(args.render, Path(args.out) if args.out else None)
    names = args.set or ([] if args.data else ["locomo_dev"])
    budgets = [int(b) for b in args.budget.split(",") if b.strip()]
    switches = [s for s in args.switches.split(",") if s] or list(SWITCHES)
    unknown = sorted(set(switches) - set(SWITCHES))
    if unknown:
        raise SystemExit(f"--switches: unknown {', '.join(unknown)}; known: {', '.join(SWITCHES)}")
    wanted = [c.strip() for c in args.conversations.split(",") if c.strip()] or None
    tag = "+".join(names + [Path(d).stem for d in args.data]) + (f"_{args.language}" if args.language else "") \
        + (f"_{args.half}" if args.half != "all" else "")
    out = Path(args.out or f"bench/results/ablation_{tag}")
    report: dict[str, Any] = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()} {platform.python_version()}",
        "command": " ".join(["python -m bench.ablation", *(argv if argv is not None else sys.argv[1:])]),
        "resamples": RESAMPLES, "sets": [],
    }
    with tempfile.TemporaryDirectory(prefix="ablation-") as tmp:
        root = Path(args.data_dir or tmp)
        jobs = [(n, materialise(n, Path(tmp))) for n in names] + [(Path(d).stem, Path(d)) for d in args.data]
        for name, path in jobs:
            label = (f"{name}[{args.language}]" if args.language else name) + (f" ({args.half})" if args.half != "all" else "")
            report["sets"].append(run_set(label, path, budgets, switches, wanted, root, args.language, args.half))
            report["removal_candidates"] = removal_candidates(report["sets"])
            report["never_help"] = never_help(report["sets"])
            out.parent.mkdir(parents=True, exist_ok=True)  # written after each set: a long run keeps what it did
            out.with_suffix(".json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
            out.with_suffix(".md").write_text(render(report), encoding="utf-8")
    print(render(report))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
