"""``python -m bench.locomo ... --lifecycle``: the forgetting lifecycle along each conversation's own clock.

Each conversation is ingested a second time, into a data dir of its own, session by session. Every session
ends with a flush (what the maintenance run's idle step does to a conversation quiet for 10 minutes, A5), and
the daily batch (``lumina_memory.nodes.lifecycle.run.run_lifecycle`` for that conversation's user) runs at the session's
start and at its end, on the conversation's clock: at session N's start it catches up every day since the
last one, one day at a time, so the memories of session N-1 have decayed for the weeks between the two; the
run at the end of session 1 starts the user's clock (a user's first batch day is the day it first runs).
After the last session it runs once more, ``--lifecycle-days-after`` days after the last turn.

Then, next to the same conversation without the lifecycle (same process, same embedder, same query vectors,
same budgets and packer):

- **deliberate recall**: every question through ``recall(..., purpose="question", budget=B)``, which reaches
  faded and archived memories and their source turns in the archive. Recall@B / hit@B per category and the
  difference to the run without the lifecycle (issue 17: within 1 point).
- **priming**: what ``retrieve_context`` would give a character at the end (``recall`` with the graph's default
  purpose "talking", no budget, ``now`` = the last batch's time) for a neutral opener and for every question:
  items per query, the memories' levels, tokens, whether the question's evidence is among them, and the archived
  memories found there (checked against the memory table, not only the item's own flag: must be 0). Knowledge
  and procedure items (issue 18: facts learned from episodes, which do not fade) are counted apart, with how
  many were learned from an episode that is archived now.
- **levels**: per conversation at the end, memories at levels 1–4 and protected, against the segments archived.
- **batch timings**: calls, days run, seconds, level moves, re-embeddings.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence, TypedDict

import numpy as np

from bench.common import bench_settings, percentiles
from bench.locomo_data import Conversation, Turn
from lumina_memory.nodes.retrieval.budget import count_tokens, pack
from lumina_memory.nodes.retrieval.recall import recall

DAY = 86_400.0
PRIMING_PURPOSE = "talking"  # graphs.context.Context.purpose's default: what retrieve_context passes
NEUTRAL = {"en": "Hey, how have you been lately?", "ja": "最近どうしてた？"}
LEVELS = (1, 2, 3, 4)
NOT_MEMORIES = ("knowledge", "procedure")  # recall item kinds that are not a memory (issue 18's tiers)


class BatchCall(TypedDict):
    """One ``run_lifecycle`` call: when (on the conversation's clock) and what it did."""

    at: str  # "before session N", "after session N", "end + D days"
    now: float
    days: int
    seconds: float
    transitions: list[list[int]]  # [from level 1–4][to level 1–4, 5 = deleted]
    reembedded: int
    compression: dict[str, int]


class LevelCounts(TypedDict):
    memories: int
    segments: int  # archived segments: every closed segment is a memory unless auto-deleted
    levels: dict[str, int]  # "1".."4"
    protected: int


def sessions_of(conv: Conversation) -> list[list[Turn]]:
    """The conversation's turns grouped by session, in order."""
    out: list[list[Turn]] = []
    for turn in conv.turns:
        if not out or out[-1][0].session != turn.session:
            out.append([])
        out[-1].append(turn)
    return out


def _rows(turns: Sequence[Turn]) -> list[dict]:
    return [{"speaker": t.speaker, "text": t.text, "ts": t.ts, "source_id": t.dia_id} for t in turns]


def _batch(services, user_id: str, now: float, at: str) -> BatchCall:
    from lumina_memory.nodes.lifecycle.run import run_lifecycle

    started = time.perf_counter()
    report = run_lifecycle(services, now=now, user_id=user_id)
    seconds = time.perf_counter() - started
    return BatchCall(at=at, now=now, days=int(report["days"]), seconds=round(seconds, 4),
                     transitions=report["transitions"], reembedded=int(report["applied"].get("reembed", 0)),
                     compression=dict(report.get("compression") or {}))


def ingest_with_lifecycle(conv: Conversation, data_dir: Path, days_after: float, quiet: bool,
                          progress: Callable[[int, str], Any]) -> tuple[Any, Any, dict[str, Any]]:
    """Fresh services on ``data_dir``; the conversation replayed session by session with the daily batch
    between sessions (module docstring). Returns (settings, services, stats); on error everything started
    here stops before raising. ``progress(n, desc)``: a bar's update, made by the caller."""
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    settings = bench_settings(data_dir)
    try:
        services = open_services(settings)
    except BaseException:
        stop_server(settings)
        raise
    try:
        return settings, services, _ingest_into(conv, services, days_after, progress)
    except BaseException:
        services.close()
        stop_server(settings)
        raise


def _ingest_into(conv: Conversation, services, days_after: float, progress) -> dict[str, Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import replay

    user = conv.sample_id
    end_now = conv.turns[-1].ts + days_after * DAY
    calls: list[BatchCall] = []
    done = services.stores.archive.counts(user)["turns"]
    reused = done == len(conv.turns)
    ingest_s = 0.0
    if not reused:
        graph = build_graph(services, checkpointer=InMemorySaver())
        start_workers = getattr(services.embedder.inner, "start_worker", None)
        if start_workers:
            start_workers(wait=True)  # the model's load is not ingest time (as in bench.locomo.ingest)
        for session in sessions_of(conv):
            number = session[0].session
            calls.append(_batch(services, user, session[0].ts, f"before session {number}"))
            started = time.perf_counter()
            # flush: the session's last segment becomes a memory now, as the idle step (A5) would make it
            # before the next day's batch; without it, it would wait for the next session's first turn.
            replay(graph, user, _rows(session), flush=True, progress=lambda n: progress(n, user))
            ingest_s += time.perf_counter() - started
            calls.append(_batch(services, user, session[-1].ts, f"after session {number}"))
    calls.append(_batch(services, user, end_now, f"end + {days_after:g} days"))
    moves = np.sum([c["transitions"] for c in calls], axis=0).astype(int)
    per_day_ms = [1000 * c["seconds"] / c["days"] for c in calls if c["days"]]
    compression: Counter = Counter()
    for c in calls:
        compression.update(c["compression"])
    return {
        "turns": len(conv.turns), "reused": reused, "ingest_seconds": round(ingest_s, 3), "end_now": end_now,
        "batch": {
            "calls": len(calls), "days": sum(c["days"] for c in calls),
            "seconds": round(sum(c["seconds"] for c in calls), 3),
            "ms_per_day": percentiles(per_day_ms, (50, 95)) | {"max": round(max(per_day_ms), 2) if per_day_ms else 0.0},
            "transitions": moves.tolist(), "reembedded": sum(c["reembedded"] for c in calls),
            "compression": dict(compression),
        },
        "levels": level_counts(services, user),
    }


def level_counts(services, user_id: str) -> LevelCounts:
    table = services.stores.archive.memories
    by_level = table.level_counts(user_id)
    return LevelCounts(memories=sum(by_level.values()),
                       segments=services.stores.archive.counts(user_id, ("segments",))["segments"],
                       levels={str(level): int(by_level.get(level, 0)) for level in LEVELS},
                       protected=table.protected_count(user_id))


def neutral_query(conv: Conversation) -> str:
    """An opener that asks about nothing in particular, in the conversation's language."""
    text = "".join(t.text for t in conv.turns[:20])
    cjk = sum(1 for ch in text if "\u3040" <= ch <= "\u9fff")
    return NEUTRAL["ja" if cjk > len(text) / 4 else "en"]


class Priming:
    """What priming (recall for a reply) gives at the end, over many queries, for one run."""

    def __init__(self) -> None:
        self.queries = 0
        self.empty = 0
        self.items: list[int] = []
        self.tokens: list[int] = []
        self.levels: Counter = Counter()  # memory items (episodes) by level
        self.memory_items = 0
        self.learned: Counter = Counter()  # knowledge / procedure items by kind
        self.learned_from_archived = 0  # of them, learned from an episode whose memory is archived now
        self.flagged_archived = 0  # items whose own "archived" flag is set
        self.archived_in_table = 0  # items whose memory is at level 4 in the memory table
        self.evidence: list[float] = []  # per question: share of its evidence in a primed item's source ids
        self.neutral: dict[str, Any] = {}

    def add(self, services, user_id: str, query: str, now: float, evidence: Sequence[str] | None) -> None:
        items = recall(services, user_id, query, purpose=PRIMING_PURPOSE, now_ts=now)
        table = services.stores.archive.memories
        ids = sorted({i["segment_id"] for i in items if i.get("segment_id")})
        level_of = {r["memory_id"]: int(r["level"]) for r in table.rows(user_id, ids)} if ids else {}
        self.queries += 1
        self.empty += not items
        self.items.append(len(items))
        self.tokens.append(sum(count_tokens(i["text"]) for i in items))
        for item in items:
            archived = level_of.get(item.get("segment_id"), 1) == 4
            if item.get("kind") in NOT_MEMORIES:
                self.learned[item["kind"]] += 1
                self.learned_from_archived += archived
                continue
            self.memory_items += 1
            self.levels[str(item.get("level", 1))] += 1
            self.flagged_archived += bool(item.get("archived"))
            self.archived_in_table += archived
        if evidence is not None:
            covered = {s for i in items for s in i.get("source_ids", [])}
            self.evidence.append(sum(e in covered for e in evidence) / len(evidence))
        else:
            self.neutral.setdefault("items", []).append(len(items))
            for item in items:
                if item.get("kind") not in NOT_MEMORIES:
                    self.neutral.setdefault("levels", Counter())[str(item.get("level", 1))] += 1

    def summary(self) -> dict[str, Any]:
        return {
            "purpose": PRIMING_PURPOSE, "queries": self.queries, "empty_queries": self.empty,
            "items_mean": round(float(np.mean(self.items)), 2) if self.items else 0.0,
            "items_total": int(sum(self.items)), "memory_items": self.memory_items,
            "learned_items": dict(self.learned), "learned_from_archived": self.learned_from_archived,
            "tokens_mean": round(float(np.mean(self.tokens)), 1) if self.tokens else 0.0,
            "levels": {str(level): int(self.levels.get(str(level), 0)) for level in LEVELS},
            "archived_flagged": self.flagged_archived, "archived_in_table": self.archived_in_table,
            "question_evidence_primed": round(float(np.mean(self.evidence)), 4) if self.evidence else float("nan"),
            "neutral_items": self.neutral.get("items", []),
            "neutral_levels": dict(self.neutral.get("levels", {})),
        }


def prime(services, conv: Conversation, now: float, priming: Priming) -> None:
    """Priming for the neutral opener and every question of the conversation (call after deliberate recall:
    priming flags what it touched for reinforcement, and no batch runs after it)."""
    priming.add(services, conv.sample_id, neutral_query(conv), now, None)
    for q in conv.questions:
        priming.add(services, conv.sample_id, q.question, now, q.evidence)


def deliberate(services, conv: Conversation, budgets: Sequence[int], qvecs: Sequence[np.ndarray], scores,
               reached: Counter) -> None:
    """Every question through deliberate recall at every budget, scored as bench.locomo scores ours.
    ``reached``: packed memory items by level and archived, and knowledge / procedure items by kind (what the
    questions reached, at the largest budget)."""
    for q, qvec in zip(conv.questions, qvecs):
        for budget in budgets:
            items = recall(services, conv.sample_id, q.question, purpose="question", budget=budget, query_vector=qvec)
            packed, covered, _tokens = pack(items, budget)
            real = sum(count_tokens(i["text"]) for i in packed)
            assert real <= budget and len(packed) == len(items), (real, budget, len(packed), len(items))
            scores[budget].add(q.category, q.evidence, covered, real)
            if budget == max(budgets):
                for item in packed:
                    if item.get("kind") in NOT_MEMORIES:
                        reached[item["kind"]] += 1
                        continue
                    reached[f"level {item.get('level', 1)}"] += 1
                    reached["archived"] += bool(item.get("archived"))
                    reached["items"] += 1


def compare(plain: dict[str, Any], with_lifecycle: dict[str, Any], tolerance: float = 0.01) -> dict[str, Any]:
    """Per budget: recall and hit differences (lifecycle − plain), overall and by category; ``within`` is
    the issue's check (recall drops by at most ``tolerance``)."""
    out: dict[str, Any] = {}
    for budget, ours in plain.items():
        theirs = with_lifecycle[budget]
        out[budget] = {
            "recall_delta": round(theirs["recall"] - ours["recall"], 4),
            "hit_delta": round(theirs["hit"] - ours["hit"], 4),
            "by_category": {name: round(theirs["by_category"][name]["recall"] - cat["recall"], 4)
                            for name, cat in ours["by_category"].items() if cat["n"]},
            "within_tolerance": theirs["recall"] >= ours["recall"] - tolerance,
        }
    return {"tolerance": tolerance, "budgets": out}


def _f(x: float) -> str:
    return "  —  " if x != x else f"{x:.3f}"


def render(report: dict[str, Any]) -> list[str]:
    """The lifecycle section of bench.locomo's text output."""
    life = report["lifecycle"]
    lines = ["", f"## forgetting lifecycle (--lifecycle, last batch {life['days_after']:g} days after each "
                 f"conversation's last turn)"]
    lines.append("deliberate recall (purpose \"question\": faded and archived memories and their source turns too):")
    categories = report["categories"]  # the ones the questions have (bench.locomo_data.categories_in)
    header = "| run | B | recall@B | Δ recall | hit@B | Δ hit | " + " | ".join(f"{n} R (Δ)" for n in categories) + " |"
    lines += [header, "|" + "---|" * (header.count("|") - 1)]
    for budget, cmp_ in life["comparison"]["budgets"].items():
        for run, per in (("without", report["results"]["lumina"][budget]), ("with lifecycle", life["results"][budget])):
            delta = run != "without"
            cats = " | ".join(
                f"{_f(per['by_category'][n]['recall'])}" + (f" ({cmp_['by_category'][n]:+.3f})" if delta and n in cmp_["by_category"] else "")
                for n in categories)
            lines.append(f"| {run} | {budget} | {_f(per['recall'])} | {cmp_['recall_delta']:+.3f} | {_f(per['hit'])} | "
                         f"{cmp_['hit_delta']:+.3f} | {cats} |" if delta else
                         f"| {run} | {budget} | {_f(per['recall'])} | | {_f(per['hit'])} | | {cats} |")
    checks = ", ".join(f"B={b}: {'within' if c['within_tolerance'] else 'NOT within'} 1 point ({c['recall_delta']:+.3f})"
                       for b, c in life["comparison"]["budgets"].items())
    lines.append(f"issue 17 check: {checks}")
    r = life["reached"]
    if r.get("items"):
        lines.append(f"packed memory items at B={max(report['budgets'])}: {r['items']}; by level " +
                     ", ".join(f"{k} {r.get(k, 0)}" for k in (f'level {x}' for x in LEVELS)) +
                     f"; archived {r.get('archived', 0)}; knowledge items {r.get('knowledge', 0)}, "
                     f"procedures {r.get('procedure', 0)}")
    lines.append("")
    lines.append(f"priming at the end (recall for a reply, purpose \"{PRIMING_PURPOSE}\", no budget; a neutral opener + every question):")
    lines.append("| run | queries | empty | items/query | tokens/query | memories at level 1 / 2 / 3 / 4 | archived (flag / table) | "
                 "knowledge items (from archived episodes) | question evidence primed |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for run, p in (("without", life["priming"]["without"]), ("with lifecycle", life["priming"]["with"])):
        lv = " / ".join(str(p["levels"][str(x)]) for x in LEVELS)
        lines.append(f"| {run} | {p['queries']} | {p['empty_queries']} | {p['items_mean']} | {p['tokens_mean']} | {lv} | "
                     f"{p['archived_flagged']} / {p['archived_in_table']} | {sum(p['learned_items'].values())} "
                     f"({p['learned_from_archived']}) | {_f(p['question_evidence_primed'])} |")
    lines.append("")
    lines.append("levels at the end, per conversation, and the batch along its clock:")
    lines.append("| conversation | memories | L1 | L2 | L3 | L4 (archived) | protected | batch calls | days | batch s | ms/day p50 / p95 / max | re-embedded |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for sample_id, c in life["conversations"].items():
        lv, b = c["levels"], c["batch"]
        lines.append(f"| {sample_id} | {lv['memories']} | " + " | ".join(str(lv["levels"][str(x)]) for x in LEVELS) +
                     f" | {lv['protected']} | {b['calls']} | {b['days']} | {b['seconds']} | "
                     f"{b['ms_per_day']['p50']} / {b['ms_per_day']['p95']} / {b['ms_per_day']['max']} | {b['reembedded']} |")
    t = life["totals"]
    lines.append(f"| all | {t['memories']} | " + " | ".join(str(t["levels"][str(x)]) for x in LEVELS) +
                 f" | {t['protected']} | {t['calls']} | {t['days']} | {t['batch_seconds']} | | {t['reembedded']} |")
    lines.append(f"level moves over all batches [from L1–L4][to L1–L4, deleted]: {t['transitions']}; "
                 f"compression paths: {t['compression']}; ingest with the lifecycle {t['ingest_seconds']} s "
                 f"(batches apart), segments {t['segments']} (without: {t['segments_without']})")
    return lines


def totals(conversations: dict[str, dict[str, Any]], segments_without: int) -> dict[str, Any]:
    moves = np.zeros((4, 5), dtype=int)
    compression: Counter = Counter()
    for c in conversations.values():
        moves += np.asarray(c["batch"]["transitions"], dtype=int)
        compression.update(c["batch"]["compression"])
    levels = {str(x): sum(c["levels"]["levels"][str(x)] for c in conversations.values()) for x in LEVELS}
    return {
        "memories": sum(c["levels"]["memories"] for c in conversations.values()),
        "segments": sum(c["levels"]["segments"] for c in conversations.values()),
        "segments_without": segments_without,
        "levels": levels,
        "protected": sum(c["levels"]["protected"] for c in conversations.values()),
        "calls": sum(c["batch"]["calls"] for c in conversations.values()),
        "days": sum(c["batch"]["days"] for c in conversations.values()),
        "batch_seconds": round(sum(c["batch"]["seconds"] for c in conversations.values()), 2),
        "reembedded": sum(c["batch"]["reembedded"] for c in conversations.values()),
        "ingest_seconds": round(sum(c["ingest_seconds"] for c in conversations.values()), 2),
        "transitions": moves.tolist(),
        "compression": dict(compression),
    }
