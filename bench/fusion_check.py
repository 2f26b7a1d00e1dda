"""Recall's ranking against plain vectors, question by question, under settings variants: the tool that tunes and
checks the fusion (nodes.retrieval.fusion) on a labelled set.

    python -m bench.fusion_check --data F.json --keep-data DIR [--conversations ID,…] [--half even|odd|all]
                                 [--budget 512,1024,2048] [--variant NAME[:setting=value;…]] … [--out OUT]
                                 [--why N]

Each conversation is ingested once (or reused from ``--keep-data``, bench.locomo.ingest) and every question asked
through ``recall`` under each variant: the settings as they are (``base``) or with some recall settings changed
(``trust_off:recall_lexical_trust=0``). Plain vectors (bench.baselines.InMemoryStoreBaseline: the raw question
against the raw turns, the issue's baseline) run on the same budgets and packer; their covered ids are kept in
``OUT.vectors.json`` and reused by later runs on the same data. Per budget: each variant's evidence recall, and its
difference from plain vectors and from the first variant, with 95% paired bootstrap intervals over conversations
(bench.ablation_stats), overall and per category. ``--why N`` prints, for up to N questions whose evidence plain
vectors covers and the first variant does not, the rank each channel gave the evidence turns.
"""

from __future__ import annotations

import argparse
import gc
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from bench.ablation import in_half
from bench.ablation_stats import ConvSums, contribution
from bench.locomo_data import CATEGORY_NAMES, Conversation, load

VECTORS = "vectors"


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME:setting=value;setting=value`` (values as JSON, else strings)."""
    name, _, rest = text.partition(":")
    changes: dict[str, Any] = {}
    for part in filter(None, rest.split(";")):
        key, _, value = part.partition("=")
        try:
            changes[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            changes[key.strip()] = value.strip()
    return name, changes


def _covered(items: Sequence[dict], budget: int) -> set[str]:
    from lumina_memory.nodes.retrieval.budget import pack

    return pack(items, budget)[1]


def _vector_rows(conv: Conversation, budgets: Sequence[int], embedder) -> dict[str, dict[str, list[str]]]:
    from bench.baselines import InMemoryStoreBaseline
    from bench.locomo import BASELINE_LIMIT

    base = InMemoryStoreBaseline(conv.turns, embedder, (conv.sample_id, "turns"))
    out = {}
    for q in conv.questions:
        ranked = base.search(q.question, None, BASELINE_LIMIT)
        out[q.question] = {str(b): sorted(_covered(ranked, b)) for b in budgets}
    return out


def why(services, conv: Conversation, question, changes: dict[str, Any]) -> str:
    """Each channel's rank of the evidence turns for one question (the first variant's settings)."""
    from lumina_memory.nodes.retrieval.recall_run import RecallRequest, RecallRun
    from lumina_memory.nodes.retrieval.recall_stages import STAGES

    settings = services.settings
    services.settings = settings.model_copy(update=changes)
    try:
        run = RecallRun(services, RecallRequest(conv.sample_id, question.question, purpose="question", budget=1024))
        for stage in STAGES:
            run = stage(run)
            if stage.__name__ == "rank":
                break
    finally:
        services.settings = settings
    index = run.index
    where = {index.turns[i].source_id: i for i in range(len(index.turns)) if index.turns[i].source_id}
    lines = [f"  Q [{CATEGORY_NAMES.get(question.category, question.category)}] {question.question}"]
    order = {int(i): r for r, i in enumerate(run.ordered._cols[1].tolist())}
    for e in question.evidence:
        i = where.get(e)
        if i is None:
            lines.append(f"    {e}: not in the index")
            continue
        ranks = {name: (r.index(i) if i in r else None) for name, r in run.cands.turn_rankings.items()}
        text = index.turns[i].text.replace("\n", " ")[:90]
        lines.append(f"    {e} ({index.token_counts[i]} tok, final rank {order.get(i)}): {ranks} | {text}")
    top = [int(i) for i in run.ordered._cols[1][:5].tolist()]
    lines.append("    top5: " + "; ".join(f"{index.turns[i].source_id} ({index.token_counts[i]} tok) "
                                        f"{index.turns[i].text[:50]!r}" for i in top))
    return "\n".join(lines)


def run(args) -> dict[str, Any]:
    from bench.locomo import ingest
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.nodes.text.embedder import CachedEmbedder, Usem3Embedder
    from lumina_memory.stores.redis_server import stop_server

    budgets = [int(b) for b in args.budget.split(",") if b.strip()]
    wanted = [c.strip() for c in args.conversations.split(",") if c.strip()] or None
    conversations = in_half(load(args.data, wanted), args.half)
    variants = dict(parse_variant(v) for v in (args.variant or ["base"]))
    out = Path(args.out)
    cache_path = out.with_suffix(".vectors.json")
    cache = json.loads(cache_path.read_text(encoding="utf-8")) if cache_path.exists() else {}
    embedder = None
    rows: list[dict[str, Any]] = []
    shown = 0
    for conv in conversations:
        settings, services, _ = ingest(conv, Path(args.keep_data) / conv.sample_id, quiet=True)
        try:
            if conv.sample_id not in cache or any(q.question not in cache[conv.sample_id] for q in conv.questions):
                embedder = embedder or CachedEmbedder(Usem3Embedder(threads=1), 100_000)
                cache[conv.sample_id] = _vector_rows(conv, budgets, embedder)
                cache_path.write_text(json.dumps(cache, ensure_ascii=False), encoding="utf-8")
            base_settings = services.settings
            for q in conv.questions:
                qvec = services.embedder.embed([q.question])[0]
                row = {"conv": conv.sample_id, "question": q.question, "category": q.category,
                       "evidence": q.evidence, VECTORS: {}}
                for b in budgets:
                    got = set(cache[conv.sample_id][q.question][str(b)])
                    row[VECTORS][str(b)] = sum(e in got for e in q.evidence) / len(q.evidence)
                for name, changes in variants.items():
                    services.settings = base_settings.model_copy(update=changes)
                    try:
                        row[name] = {}
                        for b in budgets:
                            got = _covered(recall(services, conv.sample_id, q.question, purpose="question", budget=b,
                                                  query_vector=qvec), b)
                            row[name][str(b)] = sum(e in got for e in q.evidence) / len(q.evidence)
                    finally:
                        services.settings = base_settings
                first = next(iter(variants))
                if shown < args.why and row[VECTORS][str(budgets[0])] > row[first][str(budgets[0])]:
                    print(why(services, conv, q, variants[first]), flush=True)
                    shown += 1
                rows.append(row)
        finally:
            services.close()
            stop_server(settings)
            gc.collect()
        print(f"{conv.sample_id}: {len(conv.questions)} questions done", flush=True)
    report = {"data": str(args.data), "conversations": [c.sample_id for c in conversations], "budgets": budgets,
              "variants": {k: v for k, v in variants.items()}, "rows": rows}
    report["summary"] = summarise(rows, budgets, list(variants))
    return report


def _sums(rows: Sequence[dict[str, Any]], config: str, budget: str) -> dict[str, ConvSums]:
    out: dict[str, ConvSums] = {}
    for r in rows:
        out.setdefault(r["conv"], ConvSums()).add(r[config][budget], r[config][budget] >= 1.0)
    return out


def summarise(rows: Sequence[dict[str, Any]], budgets: Sequence[int], variants: Sequence[str]) -> dict[str, Any]:
    """Per budget and group (all, each category): every configuration's mean, and each variant's paired Δ against
    plain vectors and against the first variant, in points with a 95% interval over conversations."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups["all"].append(r)
        groups[CATEGORY_NAMES.get(r["category"], str(r["category"]))].append(r)
    out: dict[str, Any] = {}
    for b in map(str, budgets):
        for group, members in groups.items():
            cell: dict[str, Any] = {"n": len(members)}
            vec = _sums(members, VECTORS, b)
            cell[VECTORS] = sum(s.recall for s in vec.values()) / len(members)
            for v in variants:
                mine = _sums(members, v, b)
                cell[v] = sum(s.recall for s in mine.values()) / len(members)
                cell[f"{v}-vectors"] = _points(contribution(mine, vec))
                if v != variants[0]:
                    cell[f"{v}-{variants[0]}"] = _points(contribution(mine, _sums(members, variants[0], b)))
            out.setdefault(b, {})[group] = cell
    return out


def _points(ci: dict[str, float]) -> list[float]:
    return [round(ci["delta"] * 100, 2), round(ci["lo"] * 100, 2), round(ci["hi"] * 100, 2)]


def render(report: dict[str, Any]) -> str:
    variants = list(report["variants"])
    lines = [f"`{report.get('command', '')}` — {len(report['conversations'])} conversations "
             f"({', '.join(report['conversations'])}), {len(report['rows'])} questions. Δ in points, 95% paired "
             "bootstrap over conversations.", ""]
    for name, changes in report["variants"].items():
        lines.append(f"- `{name}`: " + (", ".join(f"{k}={v}" for k, v in changes.items()) or "the settings' defaults"))
    lines.append("")
    for b, groups in report["summary"].items():
        head = ["group", "n", VECTORS, *variants, *[f"{v} − vectors" for v in variants],
                *[f"{v} − {variants[0]}" for v in variants[1:]]]
        lines += [f"### B = {b}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for group, c in groups.items():
            ci = lambda x: f"{x[0]:+.1f} [{x[1]:+.1f}, {x[2]:+.1f}]"  # noqa: E731
            lines.append("| " + " | ".join([group, str(c["n"]), f"{c[VECTORS]:.3f}", *[f"{c[v]:.3f}" for v in variants],
                                             *[ci(c[f"{v}-vectors"]) for v in variants],
                                             *[ci(c[f"{v}-{variants[0]}"]) for v in variants[1:]]]) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    parser = argparse.ArgumentParser(prog="python -m bench.fusion_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--keep-data", required=True, help="data dirs are kept and reused here")
    parser.add_argument("--conversations", default="")
    parser.add_argument("--half", choices=("even", "odd", "all"), default="all")
    parser.add_argument("--budget", default="512,1024,2048")
    parser.add_argument("--variant", action="append", default=[], help="NAME[:setting=value;…], repeatable")
    parser.add_argument("--why", type=int, default=0)
    parser.add_argument("--out", required=True, help="OUT.json, OUT.md (and OUT.vectors.json, the baseline's cache)")
    args = parser.parse_args(argv)
    report = run(args)
    report["command"] = " ".join(["python -m bench.fusion_check", *(argv if argv is not None else sys.argv[1:])])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    out.with_suffix(".md").write_text(render(report), encoding="utf-8")
    print(render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
