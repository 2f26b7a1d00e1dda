"""The held-out knowledge timelines (bench/data/knowledge_independent_{en,ja}.jsonl): loading with a schema check,
and `python -m bench.knowledge_independent` printing how many expected facts each attribute has per language.

The sentences were written by someone who had not read the extraction rules or the phrase templates, so they are
for scoring only, never for tuning (see bench/data/README.md). The attribute list is spelled out here rather than
imported from the extractor on purpose: the held-out set states what it expects on its own terms."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
LANGUAGES = ("en", "ja")
SPEAKERS = ("user", "lumina")

ATTRIBUTES = (
    "likes", "dislikes", "drink", "food", "film", "name", "lives_in", "from", "works_at", "job", "sibling", "parent",
    "child", "partner", "friend", "pet", "age", "has", "plan", "event", "visited", "habit",
)
SINGLE_VALUED = frozenset(("drink", "food", "film", "name", "lives_in", "from", "works_at", "job", "partner", "age"))
MIN_USER_TURNS, MAX_USER_TURNS = 3, 8


class TimelineDataError(ValueError):
    """A line of a held-out timeline file breaks the schema; the message names the file, line and rule."""


def path_for(language: str) -> Path:
    if language not in LANGUAGES:
        raise TimelineDataError(f"unknown language {language!r}; expected one of {LANGUAGES}")
    return DATA_DIR / f"knowledge_independent_{language}.jsonl"


def load(language: str, path: Path | None = None) -> list[dict]:
    """Every timeline of one language, each checked against the schema; the first broken rule raises
    TimelineDataError naming where it is."""
    path = path or path_for(language)
    timelines: list[dict] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            timeline = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TimelineDataError(f"{where}: not JSON ({exc})") from exc
        check_timeline(timeline, language, where)
        if timeline["id"] in seen:
            raise TimelineDataError(f"{where}: id {timeline['id']!r} appears twice")
        seen.add(timeline["id"])
        timelines.append(timeline)
    if not timelines:
        raise TimelineDataError(f"{path.name}: no timelines")
    return timelines


def _fail(where: str, message: str) -> None:
    raise TimelineDataError(f"{where}: {message}")


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def check_timeline(timeline: object, language: str, where: str) -> None:
    if not isinstance(timeline, dict):
        _fail(where, "a timeline is a JSON object")
    missing = {"id", "turns", "expect", "questions"} - timeline.keys()
    if missing:
        _fail(where, f"missing keys {sorted(missing)}")
    extra = timeline.keys() - {"id", "turns", "expect", "questions", "absent"}
    if extra:
        _fail(where, f"unknown keys {sorted(extra)}")
    if not _text(timeline["id"]) or not timeline["id"].startswith(f"{language}-"):
        _fail(where, f"id must be a string starting with '{language}-'")
    where = f"{where} ({timeline['id']})"
    user_text = _check_turns(timeline["turns"], where)
    all_text = " ".join(turn["text"] for turn in timeline["turns"])
    _check_expect(timeline["expect"], user_text, all_text, where)
    _check_absent(timeline.get("absent", []), timeline["expect"], all_text, where)
    _check_questions(timeline["questions"], user_text, where)


def _check_turns(turns: object, where: str) -> str:
    if not isinstance(turns, list) or not turns:
        _fail(where, "turns must be a non-empty list")
    last_day = 0
    for turn in turns:
        if not isinstance(turn, dict) or set(turn) != {"speaker", "text", "day"}:
            _fail(where, f"a turn has exactly speaker, text, day: {turn!r}")
        if turn["speaker"] not in SPEAKERS:
            _fail(where, f"speaker {turn['speaker']!r} is not one of {SPEAKERS}")
        if not _text(turn["text"]):
            _fail(where, "a turn's text is empty")
        day = turn["day"]
        if not isinstance(day, int) or isinstance(day, bool) or day < last_day:
            _fail(where, f"days are whole numbers that never go back (day {day!r} after {last_day})")
        last_day = day
    user_turns = [turn["text"] for turn in turns if turn["speaker"] == "user"]
    if not MIN_USER_TURNS <= len(user_turns) <= MAX_USER_TURNS:
        _fail(where, f"{len(user_turns)} user turns; expected {MIN_USER_TURNS} to {MAX_USER_TURNS}")
    return "\n".join(user_turns)


def _check_fact(fact: object, where: str, keys: set[str]) -> None:
    if not isinstance(fact, dict) or set(fact) != keys:
        _fail(where, f"a fact has exactly {sorted(keys)}: {fact!r}")
    if fact["attribute"] not in ATTRIBUTES:
        _fail(where, f"attribute {fact['attribute']!r} is not one of the {len(ATTRIBUTES)} attributes")
    if not _text(fact["subject"]) or not _text(fact["value"]):
        _fail(where, f"subject and value are non-empty strings: {fact!r}")


def _check_subject(subject: str, all_text: str, where: str) -> None:
    if subject != "user" and subject.lower() not in all_text.lower():
        _fail(where, f"subject {subject!r} is neither 'user' nor named in the conversation")


def _check_expect(expect: object, user_text: str, all_text: str, where: str) -> None:
    if not isinstance(expect, list) or not expect:
        _fail(where, "expect must be a non-empty list")
    seen: set[tuple[str, str, str]] = set()
    current: Counter = Counter()
    slots: set[tuple[str, str]] = set()
    for fact in expect:
        _check_fact(fact, where, {"subject", "attribute", "value", "current"})
        if not isinstance(fact["current"], bool):
            _fail(where, f"current is true or false: {fact!r}")
        _check_subject(fact["subject"], all_text, where)
        if fact["value"] not in user_text:
            _fail(where, f"value {fact['value']!r} is not written verbatim in any user turn")
        key = (fact["subject"], fact["attribute"], fact["value"])
        if key in seen:
            _fail(where, f"fact listed twice: {key}")
        seen.add(key)
        slot = (fact["subject"], fact["attribute"])
        if fact["attribute"] in SINGLE_VALUED:
            slots.add(slot)
            current[slot] += fact["current"]
    for slot in sorted(slots):
        if current[slot] != 1:
            _fail(where, f"single-valued {slot} has {current[slot]} current values; exactly one expected")


def _check_absent(absent: object, expect: list[dict], all_text: str, where: str) -> None:
    if not isinstance(absent, list):
        _fail(where, "absent must be a list")
    held = {(f["subject"], f["attribute"], f["value"]) for f in expect if f["current"]}
    for fact in absent:
        _check_fact(fact, where, {"subject", "attribute", "value"})
        _check_subject(fact["subject"], all_text, where)
        if fact["value"] not in all_text:
            _fail(where, f"absent value {fact['value']!r} is not written in any turn")
        if (fact["subject"], fact["attribute"], fact["value"]) in held:
            _fail(where, f"{fact!r} is both expected as current and absent")


def _check_questions(questions: object, user_text: str, where: str) -> None:
    if not isinstance(questions, list) or not questions:
        _fail(where, "questions must be a non-empty list")
    for question in questions:
        if not isinstance(question, dict) or set(question) != {"q", "answer"}:
            _fail(where, f"a question has exactly q and answer: {question!r}")
        if not _text(question["q"]) or not _text(question["answer"]):
            _fail(where, f"q and answer are non-empty strings: {question!r}")
        if question["answer"] not in user_text:
            _fail(where, f"answer {question['answer']!r} is not written verbatim in any user turn")


def changes(timelines: list[dict]) -> int:
    """How many (timeline, subject, single-valued attribute) slots hold a superseded value."""
    return sum(
        len({(f["subject"], f["attribute"]) for f in t["expect"]
             if f["attribute"] in SINGLE_VALUED and not f["current"]})
        for t in timelines
    )


def attribute_counts(timelines: list[dict]) -> Counter:
    return Counter(fact["attribute"] for timeline in timelines for fact in timeline["expect"])


def summary() -> str:
    loaded = {language: load(language) for language in LANGUAGES}
    counts = {language: attribute_counts(timelines) for language, timelines in loaded.items()}
    rows = [f"{'attribute':<10} " + " ".join(f"{language:>4}" for language in LANGUAGES)]
    rows += [f"{a:<10} " + " ".join(f"{counts[lang][a]:>4}" for lang in LANGUAGES) for a in ATTRIBUTES]
    totals = {
        "facts": lambda ts: sum(len(t["expect"]) for t in ts),
        "current": lambda ts: sum(f["current"] for t in ts for f in t["expect"]),
        "changes": changes,
        "absent": lambda ts: sum(len(t.get("absent", [])) for t in ts),
        "timelines": len,
        "user turns": lambda ts: sum(x["speaker"] == "user" for t in ts for x in t["turns"]),
        "questions": lambda ts: sum(len(t["questions"]) for t in ts),
    }
    rows.append("-" * len(rows[0]))
    rows += [f"{name:<10} " + " ".join(f"{fn(loaded[lang]):>4}" for lang in LANGUAGES) for name, fn in totals.items()]
    return "\n".join(rows)


if __name__ == "__main__":
    try:
        print(summary())
    except TimelineDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
