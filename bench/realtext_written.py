"""The real-text set with hand-written questions (issue 46): the generated conversations of bench.realtext_data,
each conversation's template questions replaced by the paraphrased ones written for it in
``bench/data/realtext_written_*.json`` (format: the writers' guide; ``{"version": 1, "conversations": {sample_id:
{"qa": [{question, answer, kind, answer_in, evidence, quotes}]}}}``).

Only conversations with written questions are kept. Every written question is checked before it is used: its kind
and ``answer_in`` are known ones, every evidence id is a turn of its conversation, and every evidence turn has a
quote that is an exact substring of that turn's text (the quote carries the answer, so a quote that is not there
means the evidence is not what the writer meant). A question that fails is dropped and counted with its reason.

    python -m bench.realtext_written --split dev|report|all --out FILE [--pad N] [--language en,ja]

writes a LoCoMo-format file that ``python -m bench.locomo --data FILE`` reads unchanged.

The conversations are generated from the texts installed packages ship (bench.realtext_sources), so the quotes
hold where the same versions are installed: ``bench/data/realtext_sources_versions.json`` records the ones the
questions were checked against, and a run elsewhere says which differ (and drops the questions whose quotes moved).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from bench import realtext_data as rt
from bench.realtext_phrases import KIND_CATEGORY

DATA_DIR = Path(__file__).resolve().parent / "data"
PATTERN = "realtext_written_*.json"
ANSWER_IN = ("turns", "dates")
VERSIONS = DATA_DIR / "realtext_sources_versions.json"


def version_drift(record: Path = VERSIONS) -> dict[str, tuple[str, str]]:
    """What differs from the versions the written questions were checked against: name → (recorded, installed)."""
    import importlib.metadata
    import platform

    recorded = json.loads(record.read_text(encoding="utf-8"))
    out = {}
    if recorded["python"] != platform.python_version():
        out["python"] = (recorded["python"], platform.python_version())
    for name, version in recorded["packages"].items():
        try:
            here = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            here = "not installed"
        if here != version:
            out[name] = (version, here)
    return out


class WrittenQuestionsError(ValueError):
    """A written-questions file that cannot be read as the writers' format (not JSON, wrong version or shape)."""


@dataclass
class Dropped:
    """Questions left out, with why: ``reasons`` counts them, ``details`` says which (file, sample, question)."""

    reasons: Counter = field(default_factory=Counter)
    details: list[str] = field(default_factory=list)

    def add(self, reason: str, where: str, question: str) -> None:
        self.reasons[reason] += 1
        self.details.append(f"{where}: {reason}: {question[:80]}")

    @property
    def total(self) -> int:
        return sum(self.reasons.values())


def read_files(paths: Iterable[Path]) -> dict[str, list[tuple[str, dict]]]:
    """sample_id → its written questions from every file, each with the file's name (questions of one conversation
    may come from several files)."""
    out: dict[str, list[tuple[str, dict]]] = {}
    for path in sorted(paths):
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise WrittenQuestionsError(f"{path}: not a readable JSON file ({e})") from e
        if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("conversations"), dict):
            raise WrittenQuestionsError(f'{path}: expected {{"version": 1, "conversations": {{...}}}}')
        for sample_id, entry in data["conversations"].items():
            qa = entry.get("qa") if isinstance(entry, dict) else None
            if not isinstance(qa, list):
                raise WrittenQuestionsError(f'{path}: conversation {sample_id} has no "qa" list')
            out.setdefault(sample_id, []).extend((Path(path).name, q) for q in qa)
    return out


def turn_texts(sample: dict) -> dict[str, str]:
    """dia_id → text of every turn of a LoCoMo sample."""
    return {t["dia_id"]: t["text"] for k, v in sample["conversation"].items()
            if k.startswith("session_") and isinstance(v, list) for t in v}


def problem(qa: Any, texts: dict[str, str]) -> str:
    """Why a written question cannot be used ("" when it can)."""
    if not isinstance(qa, dict) or not str(qa.get("question") or "").strip() or not str(qa.get("answer") or ""):
        return "no question or answer"
    if qa.get("kind") not in KIND_CATEGORY:
        return f"unknown kind {qa.get('kind')!r}"
    if qa.get("answer_in", "turns") not in ANSWER_IN:
        return f"unknown answer_in {qa.get('answer_in')!r}"
    evidence, quotes = qa.get("evidence"), qa.get("quotes")
    if not isinstance(evidence, list) or not evidence or not isinstance(quotes, dict):
        return "no evidence or quotes"
    for dia in evidence:
        if dia not in texts:
            return f"evidence {dia} is not a turn"
        quote = quotes.get(dia)
        if not isinstance(quote, str) or not quote.strip():
            return f"no quote for {dia}"
        if quote not in texts[dia]:
            return f"quote not in {dia}"
    return ""


def written_qa(sample: dict, written: Sequence[tuple[str, dict]], dropped: Dropped) -> list[dict]:
    """The usable written questions of one sample, in bench.realtext_questions' shape (plus ``quotes``)."""
    texts = turn_texts(sample)
    out = []
    for name, qa in written:
        why = problem(qa, texts)
        if why:
            dropped.add(why, f"{name} {sample['sample_id']}", str(qa.get("question", "")) if isinstance(qa, dict)
                        else repr(qa))
            continue
        out.append({"question": qa["question"].strip(), "answer": str(qa["answer"]), "evidence": list(qa["evidence"]),
                    "category": KIND_CATEGORY[qa["kind"]], "kind": qa["kind"],
                    "answer_in": qa.get("answer_in", "turns"), "quotes": dict(qa["quotes"])})
    return out


def build(split: str = "dev", pad: int = 0, languages: Sequence[str] = rt.LANGUAGES,
          per_language: int = rt.DEFAULT_PER_LANGUAGE, seed: int = rt.DEFAULT_SEED, size: rt.Size = rt.DEFAULT,
          paths: Iterable[Path] | None = None) -> tuple[list[dict], Dropped]:
    """The conversations of ``split`` that have written questions, each with those questions as its ``qa``, and
    what was dropped. A written conversation id that the generator does not make counts as dropped questions."""
    written = read_files(DATA_DIR.glob(PATTERN) if paths is None else paths)
    extra = {"pad": pad} if pad > 0 else {}
    samples = rt.generate(per_language, seed, size, split, tuple(languages), **extra)
    dropped = Dropped()
    known = {f"realtext-{lang}-{i:02d}" for lang in languages for i in range(per_language)}
    for sample_id in sorted(set(written) - known):
        if sample_id.split("-")[1:2] and sample_id.split("-")[1] not in languages:
            continue  # another language's conversation, not asked for
        for name, qa in written[sample_id]:
            dropped.add("no such conversation", f"{name} {sample_id}",
                        str(qa.get("question", "")) if isinstance(qa, dict) else repr(qa))
    out = []
    for sample in samples:
        qa = written_qa(sample, written.get(sample["sample_id"], []), dropped)
        if qa:
            out.append({**sample, "qa": qa})
    return out, dropped


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realtext_written", description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "report", "all"), default="dev")
    parser.add_argument("--out", required=True, help="the LoCoMo-format JSON file to write")
    parser.add_argument("--pad", type=int, default=0, help="filler exchanges appended to each session (0: none)")
    parser.add_argument("--language", default="", help="en, ja or en,ja (default: both)")
    parser.add_argument("--per-language", type=int, default=rt.DEFAULT_PER_LANGUAGE)
    parser.add_argument("--seed", type=int, default=rt.DEFAULT_SEED)
    args = parser.parse_args(argv)
    languages = tuple(args.language.split(",")) if args.language else rt.LANGUAGES
    try:
        samples, dropped = build(args.split, args.pad, languages, args.per_language, args.seed)
    except WrittenQuestionsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    Path(args.out).write_text(rt.dumps(samples), encoding="utf-8")
    drift = version_drift()
    if drift:
        print("warning: the written questions were checked against other versions of the texts' packages ("
              + ", ".join(f"{k} {a} here {b}" for k, (a, b) in sorted(drift.items()))
              + "): the conversations differ, and questions whose quotes moved are dropped", file=sys.stderr)
    for line in dropped.details:
        print(f"dropped {line}", file=sys.stderr)
    kinds = Counter(q["kind"] for s in samples for q in s["qa"])
    print(f"wrote {args.out}: {len(samples)} conversations, {sum(kinds.values())} questions, "
          f"{dropped.total} dropped ({', '.join(f'{r}: {n}' for r, n in dropped.reasons.items()) or 'none'}); "
          + ", ".join(f"{k} {kinds[k]}" for k in KIND_CATEGORY if kinds[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
