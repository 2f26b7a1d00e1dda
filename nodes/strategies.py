"""S5 strategy learning: the agent remembers how it decomposed its own tasks and how that went, and the failure
patterns it met, and is told them again for a similar task.

    record_task(services, "agent-7", "Research competitor pricing and write a report",
                ["collect the price pages", "tabulate", "write the summary"], success=True, category="research")
    suggestion = suggest(services, "agent-7", "Investigate rivals' prices and summarise them", category="research")
    suggestion.subtasks, suggestion.confidence, suggestion.warnings

- A decomposition is the task, its subtasks and its strategy (``parallel`` or ``sequential``); the same task
  decomposed the same way again counts on the same row (success or failure), so its success rate is what
  happened. A failed task may name its failure pattern (``FailurePattern``: indicator words, a mitigation, a
  severity 1-5); a pattern met again gains the new indicators.
- ``suggest`` (the notes' DecompositionAdvisor): among remembered decompositions whose task is as close as
  ``procedures.strategy_similar`` and whose success rate is at least ``procedures.strategy_min_success``, those
  of the same category as the new task come first (a similar task of another kind is a weaker precedent), then the
  closest. Its warnings are the failure patterns whose indicator words the task holds or whose task is that close.
  Nothing close enough: a suggestion with confidence 0 and no subtasks, said as such.

Rows live in the archive database (stores.strategies_sql), one user's (or agent's) never another's.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.protocols_tables import StrategyStore

from .knowledge.procedures import params_of

Strategy = Literal["parallel", "sequential"]


class FailurePattern(BaseModel):
    pattern: str = Field(min_length=1, max_length=200, description="A name for what went wrong, e.g. rate_limit.")
    indicators: list[str] = Field(default_factory=list, description="Words in a task that announce it.")
    mitigation: str = Field(default="", max_length=1_000, description="What to do instead.")
    severity: int = Field(default=3, ge=1, le=5)


class Warning_(BaseModel):
    pattern: str
    mitigation: str
    severity: int
    matched: str = Field(description="An indicator word the task holds, or 'similar task'.")


class Suggestion(BaseModel):
    subtasks: list[str] = Field(default_factory=list)
    strategy: Strategy | None = None
    confidence: float = 0.0
    similarity: float = 0.0
    category: str | None = None
    reason: str = "no similar successful task remembered"
    warnings: list[Warning_] = Field(default_factory=list)


def strategies(services) -> StrategyStore:
    """The strategy table on this archive's connection (made once per archive)."""
    return services.stores.archive.strategies()


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _id(user_id: str, *parts: object) -> str:
    return "st-" + hashlib.sha256("\x1f".join([user_id, *map(str, parts)]).encode()).hexdigest()[:24]


def _vector(services, text: str) -> list[float]:
    return [float(v) for v in np.asarray(services.embedder.embed([text])[0], dtype=np.float32)]


def _text(value: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, "must be a non-empty string")
    return value.strip()


def record_task(services, user_id: str, task: str, subtasks: Sequence[str], success: bool, *,
                strategy: Strategy = "sequential", category: str | None = None, failure: FailurePattern | None = None,
                now: float | None = None) -> dict:
    """Count one run of ``task`` decomposed into ``subtasks``; a failure may name its pattern. Returns the
    decomposition's row (without its embedding)."""
    user_id = validate_id(user_id, "user_id")
    task = _text(task, "task")
    steps = [_text(s, "subtasks") for s in subtasks]
    if not steps:
        raise InvalidInput("subtasks", "a decomposition has at least one subtask")
    if strategy not in ("parallel", "sequential"):
        raise InvalidInput("strategy", f"must be parallel or sequential, got {strategy!r}")
    now = time.time() if now is None else now
    table = strategies(services)
    sid = _id(user_id, "decomposition", _norm(task), *map(_norm, steps), strategy)
    row = table.get(user_id, sid) or {
        "strategy_id": sid, "user_id": user_id, "kind": "decomposition", "task": task, "category": category or "",
        "subtasks": steps, "strategy": strategy, "pattern": "", "indicators": [], "mitigation": "", "severity": 0,
        "success_count": 0, "failure_count": 0, "embedding": _vector(services, task), "created_at": now}
    row.update(success_count=row["success_count"] + int(bool(success)),
               failure_count=row["failure_count"] + int(not success), updated_at=now)
    table.put(row)
    if failure is not None and not success:
        _record_failure(services, table, user_id, task, category, failure, now)
    return {k: v for k, v in row.items() if k != "embedding"}


def _record_failure(services, table: StrategyStore, user_id: str, task: str, category: str | None,
                    failure: FailurePattern, now: float) -> None:
    pid = _id(user_id, "failure", _norm(failure.pattern))
    row = table.get(user_id, pid) or {
        "strategy_id": pid, "user_id": user_id, "kind": "failure", "task": task, "category": category or "",
        "subtasks": [], "strategy": "", "pattern": failure.pattern.strip(), "indicators": [], "mitigation": "",
        "severity": failure.severity,
        "success_count": 0, "failure_count": 0, "embedding": _vector(services, task), "created_at": now}
    indicators = list(dict.fromkeys([*row["indicators"], *(i.strip() for i in failure.indicators if i.strip())]))
    row.update(indicators=indicators, mitigation=failure.mitigation or row["mitigation"],
               severity=max(row["severity"], failure.severity), failure_count=row["failure_count"] + 1, updated_at=now)
    table.put(row)


def _cosine(query: np.ndarray, row: dict) -> float:
    emb = np.asarray(row["embedding"], dtype=np.float32)
    return float(query @ emb) if emb.shape == query.shape else 0.0


def suggest(services, user_id: str, task: str, category: str | None = None) -> Suggestion:
    """What the agent did for similar tasks: the best remembered successful decomposition (same category
    first) and the failure patterns to watch for."""
    user_id = validate_id(user_id, "user_id")
    task = _text(task, "task")
    params = params_of(services)
    rows = strategies(services).of_user(user_id)
    if not rows:
        return Suggestion()
    query = np.asarray(services.embedder.embed([task])[0], dtype=np.float32)
    text = _norm(task)
    warnings = []
    for row in (r for r in rows if r["kind"] == "failure"):
        said = next((i for i in row["indicators"] if _norm(i) and _norm(i) in text), None)
        if said is None and _cosine(query, row) >= params.strategy_similar:
            said = "similar task"
        if said is not None:
            warnings.append(Warning_(pattern=row["pattern"], mitigation=row["mitigation"], severity=row["severity"],
                                     matched=said))
    warnings.sort(key=lambda w: -w.severity)
    candidates = []
    for row in (r for r in rows if r["kind"] == "decomposition"):
        runs = row["success_count"] + row["failure_count"]
        rate = row["success_count"] / runs if runs else 0.0
        similarity = _cosine(query, row)
        if similarity >= params.strategy_similar and rate >= params.strategy_min_success:
            same = bool(category) and row["category"] == category
            candidates.append((same, similarity, rate, row))
    if not candidates:
        return Suggestion(warnings=warnings)
    same, similarity, rate, best = max(candidates, key=lambda c: (c[0], c[1]))
    reason = (f"a similar {'task of the same category' if same else 'successful task'}: {best['task']!r} "
              f"({best['success_count']} of {best['success_count'] + best['failure_count']} runs succeeded)")
    return Suggestion(subtasks=best["subtasks"], strategy=best["strategy"], confidence=round(rate, 4),
                      similarity=round(similarity, 4), category=best["category"] or None, reason=reason,
                      warnings=warnings)

