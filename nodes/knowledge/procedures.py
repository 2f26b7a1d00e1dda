"""Procedural memory (A8, S5) on the stores: distilled at archive time, matched, and taught by outcomes.

``learn_procedures`` runs inside the archive transaction that stores a segment (nodes.archive_to_duckdb),
after the knowledge: the procedure a segment taught and the outcome it reported commit with it, and a
replay of the same segment changes nothing (ids are deterministic; a segment already among a procedure's
sources or counted outcomes is skipped). Per segment:

1. outcomes: the user's reports (「失敗した」, "it worked") count on the current procedure the segment is
   about (``rank``'s three stages over the reporting turn, then over the whole segment), never on one the
   same segment taught; ``confidence = s / max(1, s + f)``;
2. distillation (``procedure_detect.distill``), then against the user's current procedures:
   - a near-duplicate (cosine ≥ ``near_duplicate`` of description and steps) whose amounts agree: the same
     procedure restated — it gains the episode as a source, nothing new is written;
   - the same task (same title key and cosine ≥ ``same_task``, or a near-duplicate not named as another task)
     with other amounts (170度で40分 → 160度で50分) or other steps: re-consolidated — a new version (counts
     reset, confidence 0.5), the old one kept as ``superseded`` (the newest ``keep_versions`` of a procedure are
     kept, the notes' last five; an older one goes unless tagged [IMPORTANT]);
   - anything else: a new procedure, version 1, confidence 0.4.

A segment holding the notes' ``[IMPORTANT]`` tag (nodes.text.important_tag) tags the description of the
procedure it teaches, and every later version of it: a tagged procedure is never forgotten (stores.procedures_duckdb).

``record_outcome`` is the API for an outcome reported elsewhere (the agent's report_procedure_outcome tool,
nodes.tools.writing, under the user's turn as outcome id: the segment it is in then counts no second outcome
for that procedure; the CLI); ``match_procedures``
answers which procedures a message is about; ``list_procedures`` is what `lumina-memory procedures` prints.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import validate_id

from .models import SourceTurn, as_source_turn
from .procedure_detect import distill
from .procedure_match import rank
from .procedure_models import ProcedureDraft, ProcedureParams, confidence_of, procedure_id
from .procedure_outcomes import Verdict, reports
from .procedure_text import quantities
from ..text.important_tag import has_important_tag, tagged

log = logging.getLogger("lumina.procedures")

JSON_FIELDS = ("procedure_id", "lineage_id", "version", "title", "description", "steps", "keywords", "language",
               "success_count", "failure_count", "confidence", "status", "superseded_by", "supersedes",
               "episode_ids", "source_turn_ids", "source_ids", "outcome_ids", "said_at", "last_outcome_at",
               "method", "note", "created_at", "updated_at")
"""The fields of `lumina-memory procedures --json` (fixed: scripts depend on them). Times are epoch seconds."""


def params_of(services) -> ProcedureParams:
    return getattr(services.settings, "procedures", None) or ProcedureParams()


def public(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in JSON_FIELDS}


def _embed_one(services):
    return lambda text: np.asarray(services.embedder.embed([text])[0], dtype=np.float32)


def _amounts(steps: Sequence[str]) -> dict[str, set[float]]:
    by_unit: dict[str, set[float]] = defaultdict(set)
    for step in steps:
        for value, unit in quantities(step):
            by_unit[unit].add(value)
    return by_unit


def _disagreements(new_steps: Sequence[str], old_steps: Sequence[str]) -> list[str]:
    """Units whose amounts the new steps change (170度 → 160度): the new one says an amount the old never did."""
    new, old = _amounts(new_steps), _amounts(old_steps)
    return [f"{unit} {'/'.join(f'{v:g}' for v in sorted(old[unit]))} → {'/'.join(f'{v:g}' for v in sorted(new[unit]))}"
            for unit in sorted(new.keys() & old.keys()) if new[unit] - old[unit]]


def _row(user_id: str, draft: ProcedureDraft, vector: np.ndarray, episode: str, now: float, *, version: int = 1,
         lineage: str | None = None, supersedes: str | None = None, confidence: float, note: str = "") -> dict[str, Any]:
    pid = procedure_id(draft.source_turn_ids[0], draft.task_key)
    return {
        "procedure_id": pid, "user_id": user_id, "lineage_id": lineage or pid, "version": version,
        "title": draft.title, "task_key": draft.task_key, "description": draft.description,
        "steps": draft.step_texts, "keywords": list(draft.keywords), "language": draft.language,
        "embedding": [float(v) for v in vector], "success_count": 0, "failure_count": 0, "confidence": confidence,
        "status": "current", "superseded_by": None, "supersedes": supersedes, "episode_ids": [episode],
        "source_turn_ids": list(draft.source_turn_ids), "source_ids": list(draft.source_ids), "outcome_ids": [],
        "said_at": draft.said_at, "last_outcome_at": None, "method": "offline", "note": note,
        "created_at": now, "updated_at": now,
    }


def _with_outcome(row: Mapping[str, Any], success: bool, outcome_id: str | None, at: float, now: float) -> dict[str, Any]:
    s = row["success_count"] + int(success)
    f = row["failure_count"] + int(not success)
    return {**row, "success_count": s, "failure_count": f, "confidence": confidence_of(s, f),
            "outcome_ids": [*row["outcome_ids"], *([outcome_id] if outcome_id else [])],
            "last_outcome_at": at, "updated_at": now}


class _Learner:
    """One user's procedures while a batch of segments is learnt: rows read once, written once."""

    def __init__(self, services, user_id: str, now: float):
        self.services, self.user_id, self.now = services, user_id, now
        self.params = params_of(services)
        self.embed = _embed_one(services)
        self.rows = {r["procedure_id"]: r for r in services.stores.archive.procedures.procedures(user_id, history=True)}
        self.written: dict[str, dict[str, Any]] = {}
        self.counts: Counter = Counter()

    def _put(self, row: dict[str, Any]) -> None:
        self.rows[row["procedure_id"]] = self.written[row["procedure_id"]] = row

    def _current(self, episode: str) -> list[dict[str, Any]]:
        return [r for r in self.rows.values() if r["status"] == "current" and episode not in r["episode_ids"]]

    def outcomes(self, episode: str, turns: Sequence[SourceTurn], said: Sequence[tuple[SourceTurn, Verdict]]) -> None:
        candidates = self._current(episode)
        if not said or not candidates:
            return
        turn, verdict = said[-1]
        whole = "\n".join(t["text"] for t in turns)
        matches = (rank(turn["text"], candidates, self.params, 1, self.embed)
                   or rank(whole, candidates, self.params, 1, self.embed))
        if not matches:
            return
        row = self.rows[matches[0].procedure_id]
        # Reported by the agent's tool during this conversation (its outcome id is one of the conversation's
        # turns): judged already, not counted again at its end.
        if episode in row["outcome_ids"] or {t["turn_id"] for t in turns} & set(row["outcome_ids"]):
            self.counts["outcome_unchanged"] += 1
            return
        self._put(_with_outcome(row, verdict == "success", episode, turn["ts"], self.now))
        self.counts[verdict] += 1
        log.info("procedure outcome user=%s procedure=%s %s (matched by %s)", self.user_id, row["procedure_id"],
                 verdict, matches[0].stage)

    def consolidate(self, episode: str, draft: ProcedureDraft) -> None:
        if any(episode in r["episode_ids"] for r in self.rows.values()):
            self.counts["unchanged"] += 1
            return
        vector = self.embed(draft.text)
        scored = []
        for r in self._current(episode):
            emb = np.asarray(r["embedding"], dtype=np.float32)
            cosine = float(vector @ emb) if emb.shape == vector.shape else 0.0
            scored.append((cosine, _disagreements(draft.step_texts, r["steps"]), r))
        scored.sort(key=lambda s: -s[0])
        near = self.params.near_duplicate
        for cosine, changed, r in scored:
            if cosine >= near and not changed:
                self._merge(r, draft, episode)
                return
        for cosine, changed, r in scored:
            same_key = bool(draft.task_key) and draft.task_key == r["task_key"]
            other_task = bool(draft.task_key and r["task_key"]) and not same_key  # レアチーズケーキ is no new チーズケーキ
            if (same_key and cosine >= self.params.same_task) or (cosine >= near and not other_task):
                self._reconsolidate(r, draft, vector, episode, changed, cosine)
                return
        self._put(_row(self.user_id, draft, vector, episode, self.now, confidence=self.params.initial_confidence))
        self.counts["add"] += 1

    def _merge(self, row: dict[str, Any], draft: ProcedureDraft, episode: str) -> None:
        self._put({**row, "episode_ids": [*row["episode_ids"], episode],
                   "source_turn_ids": list(dict.fromkeys([*row["source_turn_ids"], *draft.source_turn_ids])),
                   "source_ids": list(dict.fromkeys([*row["source_ids"], *draft.source_ids])),
                   "note": row["note"] or "restated", "updated_at": self.now})
        self.counts["merge"] += 1

    def _reconsolidate(self, old: dict[str, Any], draft: ProcedureDraft, vector: np.ndarray, episode: str,
                       changed: list[str], cosine: float) -> None:
        why = "; ".join(changed) if changed else f"other steps (cosine {cosine:.2f})"
        if not draft.title:
            draft = draft.model_copy(update={"title": old["title"], "task_key": old["task_key"]})
        if has_important_tag(old["description"]):  # the tag protects the procedure, every version of it
            draft = draft.model_copy(update={"description": tagged(draft.description)})
        new = _row(self.user_id, draft, vector, episode, self.now, version=old["version"] + 1,
                   lineage=old["lineage_id"], supersedes=old["procedure_id"],
                   confidence=self.params.reconsolidated_confidence, note=f"re-consolidated: {why}")
        self._put({**old, "status": "superseded", "superseded_by": new["procedure_id"],
                   "note": f"superseded by version {new['version']}: {why}", "updated_at": self.now})
        self._put(new)
        self.counts["reconsolidate"] += 1
        log.info("procedure re-consolidated user=%s %s v%d → v%d (%s)", self.user_id, old["title"], old["version"],
                 new["version"], why)


def learn_procedures(services, user_id: str, segments: Sequence[tuple[Any, Sequence[Mapping[str, Any] | Any]]],
                     now: float | None = None) -> dict[str, int]:
    """(SegmentRecord, its turns) per closed segment → the user's procedures and their outcomes. Returns counts
    (add, merge, reconsolidate, success, failure, unchanged)."""
    now = time.time() if now is None else now
    params = params_of(services)
    learner: _Learner | None = None
    for record, raw_turns in segments:
        turns = [as_source_turn(t) for t in raw_turns]
        said, draft = reports(turns), distill(turns, params)
        if draft is not None and any(has_important_tag(t["text"]) for t in turns):
            draft = draft.model_copy(update={"description": tagged(draft.description)})
        if not said and draft is None:
            continue  # most segments: no procedure, no outcome — the table is not even read
        learner = learner or _Learner(services, user_id, now)
        if said:
            learner.outcomes(record.segment_id, turns, said)
        if draft is not None:
            learner.consolidate(record.segment_id, draft)
    if learner is None:
        return {}
    table = services.stores.archive.procedures
    table.upsert(list(learner.written.values()))
    versioned = sorted({r["lineage_id"] for r in learner.written.values() if r["version"] > params.keep_versions})
    if versioned:
        learner.counts["pruned"] = len(table.prune_versions(user_id, versioned, params.keep_versions))
    if learner.written:
        log.info("procedures user=%s %s", user_id, dict(learner.counts))
    return dict(learner.counts)


def record_outcome(services, user_id: str, procedure_id: str, success: bool, *, outcome_id: str | None = None,
                   now: float | None = None) -> dict[str, Any]:
    """Count one outcome of a current procedure (``outcome_id``: counted once however often it is sent).
    Returns the procedure as `lumina-memory procedures --json` shows it."""
    table = services.stores.archive.procedures
    validate_id(procedure_id, "procedure_id")
    now = time.time() if now is None else now
    with table.transaction(user_id):
        rows = table.procedures(user_id, procedure_ids=[procedure_id])
        if not rows:
            raise InvalidInput("procedure_id", f"{procedure_id!r} not found for user_id {user_id!r}")
        row = rows[0]
        if row["status"] != "current":
            raise InvalidInput("procedure_id", f"{procedure_id!r} was superseded by {row['superseded_by']!r}; "
                                               "report the outcome on the current version")
        if outcome_id is not None and outcome_id in row["outcome_ids"]:
            return public(row)
        row = _with_outcome(row, bool(success), outcome_id, now, now)
        table.upsert([row])
    return public(row)


def match_procedures(services, user_id: str, text: str, limit: int = 3) -> list[dict[str, Any]]:
    """The user's current procedures ``text`` is about, best first (bracket keyword, content words, vectors),
    each with ``stage`` and ``score``."""
    rows = services.stores.archive.procedures.current(validate_id(user_id, "user_id"))
    by_id = {r["procedure_id"]: r for r in rows}
    return [{**public(by_id[m.procedure_id]), "stage": m.stage, "score": m.score}
            for m in rank(text, rows, params_of(services), limit, _embed_one(services))]


def list_procedures(services, user_id: str, *, history: bool = False) -> list[dict[str, Any]]:
    """The user's current procedures (``history``: superseded versions too), oldest first."""
    return [public(r) for r in services.stores.archive.procedures.procedures(validate_id(user_id, "user_id"),
                                                                               history=history)]
