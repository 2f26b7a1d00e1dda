"""Knowledge benchmark (issue 18): what the offline pipeline learns from fact-update stories, and what recall does
with it — per language, against the stories' gold.

    python -m bench.knowledge [--quick] [--per-language N] [--half a|b] [--data STORIES.json] [--budget 256]
                              [--locomo PATH | --no-locomo] [--out bench/results/knowledge.json]

Stories (``bench.knowledge_data``: Japanese and English, 48 each by default, generated with the default seed, or
read from ``--data``) are replayed one user per story (user id = story id) through the real memory graph on the
embedded defaults, offline (``bench.common.bench_settings``: no model, no server), into one fresh data directory.
Knowledge is learnt when a segment is archived (nodes.archive_to_duckdb → nodes.knowledge.learn); the replay
closes the last segment, so every turn is archived. Then every stored item of the user is read
(``KnowledgeTable.items(user, history=True)``) and each of the story's questions is asked through
``lumina_memory.nodes.retrieval.recall.recall(purpose="question", budget=B)`` twice: with the knowledge switch on, and off
(``disabled=["knowledge"]``), with the same query vector. ``bench.knowledge_score`` judges each story,
``bench.knowledge_totals`` adds them up; the matching rule is in ``bench.knowledge_match``.

LoCoMo (``--locomo``, default ../shared/data/locomo/locomo_dev.json when present): each conversation is ingested as
``bench.locomo`` ingests it (fresh data dir each) and every question is recalled with knowledge on and off in the
same process, same query vectors: evidence recall@B and hit@B for both, over all questions, over those where recall
brought a knowledge item, and over those whose evidence holds a source turn of a stored fact that was superseded or
superseded another (answers that may have changed during the conversation).

Writes the JSON report (``--out``) and a Markdown one beside it (same name, ``.md``). The last lines printed are
``RESULT <lang> precision=… recall=… over_invalidation=… below=…`` per language.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from bench import knowledge_data as kd
from bench.common import bench_settings, peak_rss_mb
from bench.knowledge_render import render, result_lines
from bench.knowledge_score import StoryObservation, score_story, slim_recall_item, slim_row
from bench.knowledge_totals import language_report
from bench.locomo import Scores, ingest as ingest_locomo, _progress as progress

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
DEFAULT_OUT = Path("bench/results/knowledge.json")
DEFAULT_BUDGET = 256  # tokens: a story of 40–60 turns fits whole in 1,024, so the order would not matter there
LOCOMO_BUDGETS = (1024, 256)  # bench.locomo's dev run
QUICK_PER_LANGUAGE = 12
KNOWLEDGE_OFF = ("knowledge",)


def _open(data_dir: Path):
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    settings = bench_settings(data_dir)
    try:
        return settings, open_services(settings)
    except BaseException:
        stop_server(settings)
        raise


def _rows(conv) -> list[dict[str, Any]]:
    return [{"speaker": t.speaker, "text": t.text, "ts": t.ts, "source_id": t.dia_id} for t in conv.turns]


def _recall_twice(services, user: str, question: str, budget: int) -> tuple[list[dict], list[dict]]:
    from lumina_memory.nodes.retrieval.recall import recall

    vector = services.embedder.embed([question])[0]
    on = recall(services, user, question, purpose="question", budget=budget, query_vector=vector)
    off = recall(services, user, question, purpose="question", budget=budget, query_vector=vector,
                 disabled=KNOWLEDGE_OFF)
    return on, off


def observe(stories: Sequence[kd.Story], data_dir: Path, *, budget: int = DEFAULT_BUDGET,
            quiet: bool = True) -> tuple[list[StoryObservation], dict[str, Any]]:
    """Replay every story (one user each) into fresh services on ``data_dir``; return what was stored and recalled
    per story, and the ingest's timing."""
    from langgraph.checkpoint.memory import InMemorySaver

    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import replay
    from lumina_memory.stores.redis_server import stop_server

    settings, services = _open(data_dir)
    observed: list[StoryObservation] = []
    timing = {"turns": 0, "ingest_seconds": 0.0, "recall_seconds": 0.0, "recalls": 0}
    bar = progress(len(stories), "stories", quiet)
    try:
        graph = build_graph(services, checkpointer=InMemorySaver())
        for story in stories:
            conv = kd.to_conversation(story)
            started = time.perf_counter()
            replay(graph, story.story_id, _rows(conv))
            timing["ingest_seconds"] += time.perf_counter() - started
            timing["turns"] += len(conv.turns)
            rows = services.stores.archive.knowledge.items(story.story_id, history=True)
            recalls = {}
            started = time.perf_counter()
            for question in story.questions:
                on, off = _recall_twice(services, story.story_id, question.question, budget)
                recalls[question.question] = {"question": question.question,
                                              "on": [slim_recall_item(i) for i in on],
                                              "off": [slim_recall_item(i) for i in off]}
            timing["recall_seconds"] += time.perf_counter() - started
            timing["recalls"] += 2 * len(story.questions)
            observed.append({"story_id": story.story_id, "items": [slim_row(r) for r in rows], "recalls": recalls})
            bar.update(1)
    finally:
        bar.close()
        services.close()
        stop_server(settings)
        gc.collect()
    timing = {k: round(v, 2) if isinstance(v, float) else v for k, v in timing.items()}
    return observed, timing


def score(stories: Sequence[kd.Story], observed: Sequence[StoryObservation],
          worst_groups: int = 15) -> dict[str, Any]:
    """Per language: the figures of ``bench.knowledge_totals.language_report`` over the scored stories."""
    by_id = {o["story_id"]: o for o in observed}
    scored = [score_story(s, by_id[s.story_id]) for s in stories if s.story_id in by_id]
    languages = [lang for lang in kd.LANGUAGES if any(s["language"] == lang for s in scored)]
    return {lang: language_report([s for s in scored if s["language"] == lang], worst_groups) for lang in languages}


# --- LoCoMo: deliberate recall with the knowledge switch on and off, same run -------------------------------------

def _changed_turns(rows: Sequence[dict[str, Any]]) -> set[str]:
    """Source turns of the stored facts that were superseded, and of the facts that superseded them (a merged
    item also points at its survivor: not a change)."""
    ended = [r for r in rows if r["status"] == "superseded"]
    successors = {r["superseded_by"] for r in ended if r["superseded_by"]}
    return {s for r in rows if r in ended or r["item_id"] in successors for s in r["source_ids"] or ()}


def locomo_on_off(path: Path, root: Path, *, budgets: Sequence[int] = LOCOMO_BUDGETS,
                  conversations: Sequence[str] | None = None, quiet: bool = True) -> dict[str, Any]:
    from bench.locomo_data import load
    from lumina_memory.nodes.retrieval.budget import pack
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.stores.redis_server import stop_server

    convs = load(path, list(conversations) if conversations else None)
    subsets = ("all", "knowledge_recalled", "answer_may_have_changed")
    scores = {sub: {sw: {b: Scores() for b in budgets} for sw in ("on", "off")} for sub in subsets}
    facts = {"items": 0, "current": 0, "superseded": 0, "by_attribute": {}}
    bar = progress(sum(len(c.questions) for c in convs), "LoCoMo questions", quiet)
    for conv in convs:
        settings, services, _stats = ingest_locomo(conv, root / conv.sample_id, quiet)
        try:
            rows = services.stores.archive.knowledge.items(conv.sample_id, history=True)
            facts["items"] += len(rows)
            facts["current"] += sum(r["status"] in ("current", "coexisting") and r["valid_to"] is None for r in rows)
            facts["superseded"] += sum(r["status"] == "superseded" for r in rows)
            for r in rows:
                facts["by_attribute"][r["attribute"]] = facts["by_attribute"].get(r["attribute"], 0) + 1
            changed = _changed_turns(rows)
            vectors = services.embedder.embed([q.question for q in conv.questions])
            for q, vector in zip(conv.questions, vectors):
                for budget in budgets:
                    on = recall(services, conv.sample_id, q.question, purpose="question", budget=budget,
                                query_vector=vector)
                    off = recall(services, conv.sample_id, q.question, purpose="question", budget=budget,
                                 query_vector=vector, disabled=KNOWLEDGE_OFF)
                    member = {"all": True, "knowledge_recalled": any(i.get("kind") == "knowledge" for i in on),
                              "answer_may_have_changed": bool(changed & set(q.evidence))}
                    for switch, items in (("on", on), ("off", off)):
                        _packed, covered, tokens = pack(items, budget)
                        for sub in subsets:
                            if member[sub]:
                                scores[sub][switch][budget].add(q.category, q.evidence, covered, tokens)
                bar.update(1)
        finally:
            services.close()
            stop_server(settings)
            gc.collect()
    bar.close()
    results: dict[str, Any] = {}
    for sub in subsets:
        results[sub] = {}
        for budget in budgets:
            on, off = (_no_nan(scores[sub][sw][budget].summary()) for sw in ("on", "off"))
            delta = None if on["n"] == 0 else round(on["recall"] - off["recall"], 4)
            results[sub][str(budget)] = {"on": on, "off": off, "recall_delta": delta,
                                         "not_lower": None if delta is None else delta >= 0}
    return {"data": str(path), "conversations": [c.sample_id for c in convs],
            "questions": sum(len(c.questions) for c in convs), "budgets": list(budgets),
            "knowledge_items": facts, "results": results}


def _no_nan(value: Any) -> Any:
    """bench.locomo's summaries say NaN for an empty category; JSON has no NaN, so None."""
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    return None if isinstance(value, float) and value != value else value


# --- the run -----------------------------------------------------------------------------------------------------

def _code_version() -> dict[str, Any]:
    """The commit measured, and whether the knowledge code had uncommitted edits (others edit it in this tree)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = git("status", "--porcelain", "--", "nodes/knowledge", "nodes/retrieval", "stores/knowledge_duckdb.py",
                "stores/knowledge_vectors.py")
    return {"commit": git("rev-parse", "--short", "HEAD").strip(),
            "uncommitted": [line[3:] for line in dirty.splitlines() if line.strip()]}


def run(args: argparse.Namespace) -> dict[str, Any]:
    per_language = args.per_language or (QUICK_PER_LANGUAGE if args.quick else kd.DEFAULT_PER_LANGUAGE)
    stories = kd.load_stories(args.data) if args.data else kd.generate(per_language, half=args.half)
    with tempfile.TemporaryDirectory(prefix="knowledge-bench-") as tmp:
        started = time.perf_counter()
        observed, timing = observe(stories, Path(tmp) / "stories", budget=args.budget, quiet=args.quiet)
        languages = score(stories, observed, args.worst)
        locomo = None
        if args.locomo:
            wanted = None
            if args.quick:
                from bench.locomo_data import load

                wanted = [load(args.locomo)[0].sample_id]
            locomo = locomo_on_off(Path(args.locomo), Path(tmp) / "locomo", conversations=wanted, quiet=args.quiet)
        seconds = round(time.perf_counter() - started, 1)
    return {
        "command": " ".join(["python -m bench.knowledge", *(args.argv or [])]),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()} {platform.python_version()}",
        "code": _code_version(),
        "data": str(args.data) if args.data else f"generated: bench.knowledge_data.generate({per_language}), "
                                                 f"seed {kd.DEFAULT_SEED}, template half {args.half or 'all'}",
        "stories": len(stories), "budget": args.budget, "offline": True, "timing": {**timing, "seconds": seconds},
        "languages": languages, "locomo": locomo, "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.knowledge", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_PER_LANGUAGE} stories per language, LoCoMo on its first conversation only")
    parser.add_argument("--per-language", type=int, default=0, help="generated stories per language (default 48)")
    parser.add_argument("--data", type=Path, help="a stories file written by bench.knowledge_data (instead of generating)")
    parser.add_argument("--half", choices=("a", "b"), help="user lines from one half of the templates only "
                        "(a: the rules' development half, b: held out; bench.knowledge_phrases.user_lines)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="recall budget in tokens for the stories")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO if DEFAULT_LOCOMO.exists() else None,
                        help="a LoCoMo-format file for the knowledge on/off comparison")
    parser.add_argument("--no-locomo", dest="locomo", action="store_const", const=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON report (the Markdown one goes beside it)")
    parser.add_argument("--worst", type=int, default=15, help="failure groups listed per language")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    report = run(args)
    text = render(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(text + "\n", encoding="utf-8")
    print(text)
    print("\n".join(result_lines(report)))
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    sys.exit(main())
