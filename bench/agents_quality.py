"""Agents' retrieval on a village whose answers are known (bench.agents_scenario), against a plain vector store.

For every question, the agent's memory (``AgentMemory.retrieve`` with the question's module, plus the group
memories it may see) and a plain vector store (LangGraph ``InMemoryStore`` with an index, one namespace per agent,
the same embedder: what a LangGraph user would pick instead) each return their top k. A question is answered when
a result is one of its evidence events (an LTM record answers through its ``source_events``, a group memory by its
id) and *found* when a result's text holds the answer (the teller, the rule, the place). The same questions are
asked again after every agent's consolidation and forgetting. Leaks: group memories shown to an outsider (must be
0). 95% bootstrap intervals over agents.

    python -m bench.agents_quality [--agents 24] [--routine 60] [--k 5] [--json bench/results/agents_quality.json]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.agents_open import opened_memory
from bench.agents_scenario import Question, Scenario, generate
from bench.agents_sim import write_report
from bench.common import answer_found, bench_settings

KINDS = ("told", "rule", "trust", "latest")


def _bootstrap(per_agent: list[float], n: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    values = np.asarray(per_agent, dtype=float)
    if values.size == 0:
        return (float("nan"),) * 3
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, (n, values.size))].mean(axis=1)
    return float(values.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


class PlainVectors:
    """LangGraph's InMemoryStore with an index over every event's text, one namespace per agent."""

    name = "plain vectors"

    def __init__(self, sc: Scenario, embedder):
        from langgraph.store.memory import InMemoryStore

        self.store = InMemoryStore(index={"dims": embedder.dim, "embed": lambda texts: embedder.embed(list(texts)).tolist(),
                                          "fields": ["text"]})
        for e in sc.events:
            self.store.put(("agents", e["agent_id"]), e["event_id"], {"text": e["content"]})

    def search(self, q: Question, k: int) -> list[tuple[str, str, list[str]]]:
        hits = self.store.search(("agents", q.agent_id), query=q.query, limit=k)
        return [(h.key, h.value["text"], [h.key]) for h in hits]


class Agents:
    """The agents' memory: retrieve with the question's module, plus the group memories the agent may see."""

    name = "Lumina agents"

    def __init__(self, sc: Scenario, services, memory, clock: dict[str, float]):
        """``memory``: an AgentMemory on ``services`` whose run clock reads ``clock["now"]``, which this moves."""
        self.services, self.memory, self.clock = services, memory, clock
        self.clock["now"] = min(e["time"] for e in sc.events)
        started = time.perf_counter()
        by_agent = defaultdict(list)
        for e in sc.events:
            by_agent[e["agent_id"]].append(e)
        for group, members in sc.groups.items():
            for m in members:
                self.memory.join_group(m, group)
        for e in sc.events:  # in time order, so capacity-driven consolidation happens as it would in a run
            self.clock["now"] = e["time"]
            self.memory.store(e["agent_id"], {k: v for k, v in e.items() if k != "agent_id"})
        for s in sc.shared:
            self.memory.store_shared({"content": s["content"], "source_events": s["source_events"],
                                      "memory_id": s["memory_id"]}, scope="group", group_id=s["group_id"],
                                     author=s["author"])
        self.clock["now"] = max(e["time"] for e in sc.events) + 60.0
        self.ingest_s = time.perf_counter() - started

    def search(self, q: Question, k: int) -> list[tuple[str, str, list[str]]]:
        out = [(r.id, r.content, [r.id, *r.source_events]) for r in self.memory.retrieve(q.agent_id, q.query, q.module, top_k=k)]
        if q.kind == "rule":
            out += [(r.id, r.content, [r.id, *r.source_events]) for r in self.memory.retrieve_shared(q.agent_id, q.query, top_k=2)]
        return out

    def consolidate_and_forget(self, agents: list[str], later_hours: float) -> dict:
        """Every agent's STM consolidated (forced), then the run's clock ``later_hours`` ahead and the forgetting
        plan applied (P5: unused records that faded below the threshold go, e.g. routine observations of
        importance 0.2 after about 2.8 hours)."""
        made = sum(self.memory.consolidate(a, force=True) for a in agents)
        self.clock["now"] += later_hours * 3600.0
        reports = [self.memory.maintenance(a) for a in agents]
        return {"consolidated": made, "later_hours": later_hours,
                "deleted": sum(r["deleted"] for r in reports), "compressed": sum(r["compressed"] for r in reports),
                "merged_into": sum(r["merged_into"] for r in reports),
                "ltm_left": sum(r.get("ltm_count", 0) for r in reports),
                **({"levels": _summed([r["levels"] for r in reports])} if reports and "levels" in reports[0] else {})}

    def leaks(self, sc: Scenario) -> int:
        n = 0
        for agent, memory_id in sc.outsiders:
            seen = self.memory.retrieve_shared(agent, "group rule agreed", top_k=50)
            n += sum(r.id == memory_id for r in seen)
        return n


def _summed(counts: list[dict[str, int]]) -> dict[str, int]:
    """Per-agent counts by key (maintenance's lifecycle levels) added up."""
    total: dict[str, int] = defaultdict(int)
    for c in counts:
        for k, n in c.items():
            total[k] += n
    return dict(sorted(total.items()))


def judge(q: Question, results: list[tuple[str, str, list[str]]]) -> tuple[float, float, str]:
    """(answered by the evidence, answer found in the text, why not: "" when answered) read by the question's
    rule: ``any`` an evidence item among the results; ``first`` the first result naming evidence or a decoy names
    only evidence (a record merging both cannot tell them apart); ``most`` more evidence than decoy events (a
    merged record counts every source event it holds)."""
    good = set(q.evidence) | ({q.shared} if q.shared else set())
    bad = set(q.decoys)
    texts = [text for _, text, _ in results]
    if q.rule == "most":
        n_good = sum(len(set(ids) & good) for _, _, ids in results)
        n_bad = sum(len(set(ids) & bad) for _, _, ids in results)
        hit = float(n_good > n_bad)
        why = "" if hit else ("absent" if not n_good else "outnumbered")
        named = [sum(bool(answer_found(a, [t])) for t in texts) for a in (q.answer, *q.decoy_answers)]
        return hit, float(named[0] > 0 and named[0] > max(named[1:], default=0)), why
    if q.rule == "first":
        hit, why = 0.0, "absent"
        for _, _, ids in results:
            found = set(ids)
            if found & bad:
                why = "merged with a decoy" if found & good else "decoy ranked first"
                break
            if found & good:
                hit, why = 1.0, ""
                break
        text = 0.0
        for t in texts:
            if any(answer_found(a, [t]) for a in q.decoy_answers):
                break
            if answer_found(q.answer, [t]):
                text = 1.0
                break
        return hit, text, why
    hit = float(any(set(ids) & good for _, _, ids in results))
    return hit, answer_found(q.answer, texts) or 0.0, "" if hit else "absent"


def score(system, sc: Scenario, k: int) -> dict:
    per_agent_hit, per_agent_found = defaultdict(list), defaultdict(list)
    by_kind = defaultdict(list)
    misses: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    latencies = []
    for q in sc.questions:
        started = time.perf_counter()
        results = system.search(q, k)
        latencies.append((time.perf_counter() - started) * 1000)
        hit, found, why = judge(q, results)
        if why:
            misses[q.kind][why] += 1
        per_agent_hit[q.agent_id].append(hit)
        per_agent_found[q.agent_id].append(found)
        by_kind[q.kind].append((hit, found))
    hits = [float(np.mean(v)) for v in per_agent_hit.values()]
    founds = [float(np.mean(v)) for v in per_agent_found.values()]
    return {"system": system.name, "hit": _bootstrap(hits), "found": _bootstrap(founds),
            "by_kind": {kind: {"hit": float(np.mean([h for h, _ in v])), "found": float(np.mean([f for _, f in v])),
                               "questions": len(v)} for kind, v in by_kind.items()},
            "misses": {kind: dict(v) for kind, v in misses.items()},
            "p50_ms": float(np.percentile(latencies, 50)), "p95_ms": float(np.percentile(latencies, 95))}


def _row(r: dict, label: str) -> str:
    hit, lo, hi = r["hit"]
    found = r["found"][0]
    kinds = " | ".join(f"{r['by_kind'].get(k, {}).get('hit', float('nan')):.2f}" for k in KINDS)
    return f"| {label} | {hit:.3f} [{lo:.3f}, {hi:.3f}] | {found:.3f} | {kinds} | {r['p50_ms']:.1f} / {r['p95_ms']:.1f} |"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=24)
    ap.add_argument("--routine", type=int, default=60, help="Routine (distractor) events per agent.")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--memory-model", choices=["piano", "lifecycle"], default="piano",
                    help="Agents' forgetting model (LUMINA_AGENTS__MEMORY_MODEL): the note's or the chat's lifecycle.")
    ap.add_argument("--later-hours", type=float, default=3.0,
                    help="Game hours between consolidation and the forgetting and second asking.")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    sc = generate(args.agents, args.routine, seed=args.seed)
    load = os.getloadavg()
    clock = {"now": 0.0}
    # Closed, with the private Redis it started, on every exit path (bench.agents_open).
    with (tempfile.TemporaryDirectory(prefix="lumina-agents-quality-") as tmp,
          opened_memory(bench_settings(Path(tmp), agents={"memory_model": args.memory_model}),
                        lambda: clock["now"]) as (services, memory)):
        ours = Agents(sc, services, memory, clock)
        plain = PlainVectors(sc, services.embedder)
        rows = [score(ours, sc, args.k), score(plain, sc, args.k)]
        leaks_before = ours.leaks(sc)
        consolidation = ours.consolidate_and_forget(sorted({e["agent_id"] for e in sc.events}), args.later_hours)
        after = score(ours, sc, args.k)
        after["system"] += f" after consolidation and forgetting (+{args.later_hours:g} h)" + (
            "" if args.memory_model == "piano" else f", {args.memory_model}")
        rows.append(after)
        leaks_after = ours.leaks(sc)
    report = {"agents": args.agents, "routine": args.routine, "seed": args.seed, "memory_model": args.memory_model,
              "events": len(sc.events),
              "questions": len(sc.questions), "k": args.k, "rows": rows, "leaks": [leaks_before, leaks_after],
              "consolidation": consolidation,
              "load_average": {"start": [round(x, 2) for x in load], "end": [round(x, 2) for x in os.getloadavg()]}}
    print(f"{args.agents} agents, {len(sc.events)} events, {len(sc.questions)} questions, top {args.k}")
    print("| system | evidence hit [95% CI] | answer found | " + " | ".join(KINDS) + " | p50 / p95 ms |")
    print("|---|---|---|" + "---|" * len(KINDS) + "---|")
    for r in rows:
        print(_row(r, r["system"]))
    print(f"group memories shown to outsiders: {leaks_before} before, {leaks_after} after consolidation")
    print(f"consolidation: {consolidation['consolidated']} records; forgetting {consolidation['later_hours']:g} h "
          f"later deleted {consolidation['deleted']}, compressed {consolidation['compressed']}, "
          f"{consolidation['ltm_left']} records left")
    for r in rows:
        print(f"misses of {r['system']}: " + "; ".join(
            f"{kind}: " + ", ".join(f"{why} {n}" for why, n in sorted(v.items())) for kind, v in r["misses"].items()))
    write_report(args.json, report)
    return report


if __name__ == "__main__":
    main()
