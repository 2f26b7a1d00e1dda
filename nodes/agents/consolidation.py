"""Consolidation of short-term events into long-term records (P4, the note's sections 4.3 and 4.6.4).

1. ``cluster``: events whose embeddings have cosine >= ``cluster_cosine`` (0.85) form one cluster. The method is
   complete linkage, built greedily in time order: each event joins the existing cluster to which its *lowest*
   cosine is highest, provided that lowest cosine reaches the threshold, else it starts a new cluster. Every pair
   inside a cluster is therefore at least the threshold (a chain a~b~c with a≁c never merges, which single linkage
   would do), and the result depends only on the events and their order. One similarity matrix and one vector
   operation per event (each cluster's lowest cosine to every row is kept up to date): well under a tenth of a
   second for the 300 events of a full STM.
2. ``summarise_cluster``: one record per cluster. With a chat model: the note's consolidation prompt (Japanese, as
   written) and its JSON (summary, type, tags, importance) validated with pydantic; a failing call or an invalid
   answer falls back to the offline summary with ``path`` saying so ("offline-after-llm-error", logged), never
   silently. Offline: the most central event's text (the highest mean cosine to the cluster), then the other
   events that add nouns it lacks while the whole stays short; tags are the cluster's keywords
   (nodes.text.keywords); importance the highest of the events'; the type semantic when the cluster holds at least
   ``semantic_min_cluster`` events (repeated experience becomes knowledge: episodic → semantic), episodic
   otherwise.
3. ``rerate_importance``: offline, importance' = importance + (1 − importance) · ½ · log(1+access)/log(1+max_access)
   (P5's access term over the records given: the most used record closes half its gap to 1, an unused one keeps
   its score). With a model, the note's 1-10 prompt (method 2) rated n gives n/10 as the base, then the same
   access term.
4. ``consolidate_events``: the records (ids derived from the agent and the source events, so a retried
   consolidation rewrites the same records) and the event ids they replace, for AgentTables.consolidated. Their
   importance is the summary's (the model's own rating in the note's JSON, else the events' highest) re-scored
   offline from the source events' access counts: one model call per cluster, not two.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
import uuid
from typing import Literal, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from lumina_memory.nodes.text.keywords import extract_keywords
from lumina_memory.nodes.text.sentences import sentences
from lumina_memory.nodes.text.tokenize import nouns
from lumina_memory.stores.agent_records import AgentEvent, LtmRecord
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import NAMESPACE

from .decay import access_weight

log = logging.getLogger("lumina.agents")

Path = Literal["llm", "offline", "offline-after-llm-error"]
SUMMARY_MAX_CHARS = 280
MAX_TAGS = 8

CONSOLIDATION_PROMPT = """あなたはエージェント{agent_name}の記憶管理システムです。

以下の関連する記憶群を、1つの簡潔な要約記憶に統合してください。

## 統合対象の記憶:
{memory_list}

## 要件:
- 重要な人物関係を保持すること
- 学んだ教訓や知識を保持すること
- 感情的に重要な要素を保持すること
- 具体的な詳細より抽象的なパターンを優先すること
- 1-3文で要約すること

## 出力形式:
{{
  "summary": "要約テキスト",
  "type": "episodic | semantic | procedural",
  "tags": ["タグ1", "タグ2"],
  "importance": 0.0-1.0
}}"""

RATING_PROMPT = """以下の記憶の重要度を1-10で評価してください。
 1は日常的で忘れても問題ない出来事、
 10は人生を変えるような重大な出来事です。

 記憶: {content}
 重要度:"""


class ClusterSummary(BaseModel):
    """One cluster's long-term record before it has an id; ``path`` names how it was made."""

    model_config = ConfigDict(frozen=True)

    summary: str
    type: Literal["episodic", "semantic", "procedural"]
    tags: list[str]
    importance: float = Field(ge=0, le=1)
    path: Path


class ModelSummary(BaseModel):
    """The note's JSON answer, checked before it is trusted."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(min_length=1, max_length=4000)
    type: Literal["episodic", "semantic", "procedural"]
    tags: list[str] = Field(default_factory=list, max_length=50)
    importance: float = Field(ge=0, le=1)

    @field_validator("summary")
    @classmethod
    def _text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("empty summary")
        return v.strip()


# --- 1. clusters -------------------------------------------------------------------------------------------------
def _unit_rows(vectors) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        raise InvalidInput("vectors", f"expected one vector per event (a 2-D array), got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise InvalidInput("vectors", "contain NaN or infinite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def cluster(vectors, threshold: float) -> list[list[int]]:
    """Row indices grouped by complete linkage at ``threshold`` (rows in time order; see the module's note).
    Clusters come in the order of their first row, indices ascending; a zero vector stays alone."""
    unit = _unit_rows(vectors)
    n = len(unit)
    if n == 0:
        return []
    sims = unit @ unit.T
    alone = np.linalg.norm(unit, axis=1) == 0
    clusters: list[list[int]] = []
    # lowest[c, j]: the lowest cosine between row j and the members of cluster c (one row per cluster so far)
    lowest = np.empty((n, n), dtype=np.float32)
    for i in range(n):
        best = -1
        if clusters and not alone[i]:
            column = lowest[: len(clusters), i]
            top = int(np.argmax(column))  # the first of equal clusters: the earliest
            best = top if column[top] >= threshold else -1
        if best < 0:
            clusters.append([i])
            lowest[len(clusters) - 1] = -np.inf if alone[i] else sims[i]
        else:
            clusters[best].append(i)
            np.minimum(lowest[best], sims[i], out=lowest[best])
    return clusters


# --- 2. one summary per cluster ----------------------------------------------------------------------------------
def _central(unit: np.ndarray) -> int:
    if len(unit) <= 2:
        return 0
    sims = unit @ unit.T
    return int(np.argmax((sims.sum(axis=1) - 1.0) / (len(unit) - 1)))


def offline_summary(events: Sequence[AgentEvent], vectors, params) -> ClusterSummary:
    """The extractive summary: the central event, then others that add facts (nouns) while it stays short."""
    unit = _unit_rows(vectors)
    first = _central(unit)
    parts = [" ".join(events[first].content.split())]
    covered = set(nouns(parts[0]))
    order = sorted(range(len(events)), key=lambda i: -float(unit[i] @ unit[first]))
    for i in order:
        if i == first:
            continue
        text = " ".join(events[i].content.split())
        new = set(nouns(text)) - covered
        if new and len(" / ".join(parts)) + 3 + len(text) <= SUMMARY_MAX_CHARS:
            parts.append(text)
            covered |= new
    kind = "semantic" if len(events) >= params.semantic_min_cluster else "episodic"
    return ClusterSummary(summary=" / ".join(parts), type=kind,
                          tags=extract_keywords([e.content for e in events], MAX_TAGS),
                          importance=max(e.importance for e in events), path="offline")


def _json_object(text: str) -> dict:
    """The first JSON object in a model's answer (fenced in ```json or not)."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the answer")
    value, _ = json.JSONDecoder().raw_decode(text[start:])
    if not isinstance(value, dict):
        raise ValueError("the answer's JSON is not an object")
    return value


def _answer(model, prompt: str) -> str:
    reply = model.invoke(prompt)
    content = getattr(reply, "content", reply)
    if isinstance(content, list):  # content blocks (some providers): their text parts, in order
        content = "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                          if isinstance(b, (str, dict)))
    if not isinstance(content, str):
        raise ValueError(f"the model answered {type(content).__name__}, not text")
    return content


def memory_list(events: Sequence[AgentEvent]) -> str:
    """The events as the prompt's list: one line each, in time order, with type and participants."""
    lines = []
    for e in sorted(events, key=lambda e: e.time):
        who = f" ({', '.join(e.participants)})" if e.participants else ""
        lines.append(f"- [{e.type}]{who} {' '.join(e.content.split())}")
    return "\n".join(lines)


def summarise_cluster(events: Sequence[AgentEvent], vectors, model=None, agent_name: str | None = None, *,
                      params) -> ClusterSummary:
    """One cluster's summary: the model's (the note's prompt and JSON) when a model is given, else offline."""
    if not events:
        raise InvalidInput("events", "a cluster needs at least one event")
    if len(events) != len(np.asarray(vectors)):
        raise InvalidInput("vectors", f"{len(np.asarray(vectors))} vectors for {len(events)} events")
    if model is None:
        return offline_summary(events, vectors, params)
    prompt = CONSOLIDATION_PROMPT.format(agent_name=agent_name or events[0].agent_id, memory_list=memory_list(events))
    try:
        answer = ModelSummary.model_validate(_json_object(_answer(model, prompt)))
    except Exception as exc:  # noqa: BLE001 - a provider failure or an invalid answer: offline, loudly
        return _fallback(events, vectors, params, exc)
    tags = list(dict.fromkeys(t.strip() for t in answer.tags if isinstance(t, str) and t.strip()))[:MAX_TAGS]
    return ClusterSummary(summary=answer.summary, type=answer.type, tags=tags, importance=answer.importance,
                          path="llm")


def _fallback(events, vectors, params, exc: Exception) -> ClusterSummary:
    log.warning("consolidation by the model failed (%s: %s); offline summary used", type(exc).__name__,
                str(exc)[:200])
    return offline_summary(events, vectors, params).model_copy(update={"path": "offline-after-llm-error"})


# --- 3. importance re-rated ----------------------------------------------------------------------------------------
class Rerated(BaseModel):
    """New importances in the records' order, and how each base was obtained."""

    model_config = ConfigDict(frozen=True)

    importance: list[float]
    paths: list[Path]


# A whole rating 1-10, not the "1-10" of an echoed scale.
_RATING = re.compile(r"(?<![\d.\-~〜])(10|[1-9])(?:\.\d+)?(?!\d|\s*[\-~〜]\s*\d)")


def model_rating(model, content: str) -> float:
    """The note's 1-10 rating of one memory, mapped to n/10 (a rating outside 1-10 or none is an error)."""
    answer = _answer(model, RATING_PROMPT.format(content=content))
    match = _RATING.search(unicodedata.normalize("NFKC", answer))
    if match is None:
        raise ValueError(f"no rating from 1 to 10 in the answer {answer[:60]!r}")
    return int(match.group(1)) / 10.0


def rerate_importance(records: Sequence[LtmRecord], access_counts: Sequence[int], model=None) -> Rerated:
    """Importance of ``records`` re-scored from their access counts (and the model's 1-10 rating when given)."""
    if len(records) != len(access_counts):
        raise InvalidInput("access_counts", f"{len(access_counts)} counts for {len(records)} records")
    if not records:
        return Rerated(importance=[], paths=[])
    bases, paths = [], []
    for record in records:
        if model is None:
            bases.append(record.importance)
            paths.append("offline")
            continue
        try:
            bases.append(model_rating(model, record.content))
            paths.append("llm")
        except Exception as exc:  # noqa: BLE001 - any provider or parsing failure: the rule's score, loudly
            log.warning("importance rating by the model failed (%s: %s); the rule's score kept",
                        type(exc).__name__, str(exc)[:200])
            bases.append(record.importance)
            paths.append("offline-after-llm-error")
    used = access_weight(np.asarray(access_counts))
    out = [round(min(1.0, b + (1.0 - b) * 0.5 * float(u)), 4) for b, u in zip(bases, used)]
    return Rerated(importance=out, paths=paths)


# --- 4. the whole step -------------------------------------------------------------------------------------------
def ltm_id(agent_id: str, event_ids: Sequence[str]) -> str:
    """The record's id: the same agent and source events always give the same id."""
    return "ltm-" + uuid.uuid5(NAMESPACE, f"agent-ltm|{agent_id}|{'|'.join(sorted(event_ids))}").hex


def consolidate_events(agent_id: str, events: Sequence[AgentEvent], vectors, now: float, params, model=None, *,
                       agent_name: str | None = None, access_counts: Mapping[str, int] | None = None
                       ) -> tuple[list[LtmRecord], list[str]]:
    """One agent's events (with their vectors, row for row) as long-term records, and the events they replace.
    ``access_counts`` (by event id) feed the re-rating; every event given ends in exactly one record."""
    if len(events) != len(np.asarray(vectors)):
        raise InvalidInput("vectors", f"{len(np.asarray(vectors))} vectors for {len(events)} events")
    foreign = sorted({e.agent_id for e in events} - {agent_id})
    if foreign:
        raise InvalidInput("events", f"events of other agents ({', '.join(foreign[:3])}) given for {agent_id}")
    if not events:
        return [], []
    order = sorted(range(len(events)), key=lambda i: (events[i].time, events[i].event_id))
    timed = [events[i] for i in order]
    matrix = np.asarray(vectors, dtype=np.float32)[order]
    records: list[LtmRecord] = []
    counts: list[int] = []
    for members in cluster(matrix, params.cluster_cosine):
        group = [timed[i] for i in members]
        made = summarise_cluster(group, matrix[members], model, agent_name, params=params)
        source = [e.event_id for e in group]
        head = sentences(made.summary)
        # As old as the newest event it stands for: recency and decay keep the order of what happened.
        created = min(now, max(e.time for e in group))
        records.append(LtmRecord(memory_id=ltm_id(agent_id, source), agent_id=agent_id, created_at=created,
                                 type=made.type, content=made.summary, summary=head[0] if head else made.summary,
                                 importance=made.importance, tags=made.tags, source_events=source))
        counts.append(sum(int((access_counts or {}).get(e, 0)) for e in source))
    rerated = rerate_importance(records, counts)  # the model rated its summaries already (the JSON's importance)
    records = [r.model_copy(update={"importance": i}) for r, i in zip(records, rerated.importance)]
    return records, [e.event_id for e in timed]
