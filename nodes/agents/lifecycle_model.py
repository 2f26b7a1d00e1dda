"""The chat's emotion-weighted lifecycle applied to agents' long-term records (``memory_model="lifecycle"``).

The formulas are the chat's (nodes.lifecycle.formulas, docs/lifecycle.md): retention = intensity ×
decay^memory_days with the decay coefficient interpolated by intensity in the category's range; level 1 (full)
above ``level1_threshold``, 2 (summary), 3 (keywords and emotion tags), archived at or below ``level3_threshold``;
a recall halves memory_days and raises the coefficient by ``decay_coefficient_boost``. What this module decides is
how an agent's record maps onto them:

- **Intensity and category.** The chat reads them once at encoding and never again; a record has no column for
  them, so they are read from what compression never rewrites: its ``summary`` (the first sentence of what
  consolidation wrote; the content's first sentence when empty) with the chat's offline emotion reader, so every
  maintenance reads the same values. Intensity is the larger of that reading and 100 × importance: P3's
  importance already carries the event's emotion (its ``emotion_intensity``, the emotional modifier) and the
  re-rating by use, and a threat or a goal worded flatly must not fade like small talk.
- **Days.** The run's clock, ``lifecycle_day_hours`` game hours to a lifecycle day (24: the chat's day).
- **Recalls.** A record keeps ``access_count`` and ``last_accessed``, not the batch's per-day state, so every
  access counts as one recall at ``last_accessed``: memory_days = days up to it × reduction^accesses + days
  since; the coefficient gains the boost once per access (capped).
- **Levels only go down** (the chat's rule) without a stored level: the level is the thresholds' level of the
  lowest retention the record had, the smaller of now's and the un-reinforced one just before its last access.
- **What a level does.** Level 2 replaces the content by the summary and level 3 by the keywords and emotion tags:
  the chat's offline texts (nodes.lifecycle.compress.offline_text), so the same level always gives the same text
  and a second maintenance rewrites nothing. Level 4 deletes the record: agents have no archive tier that a
  deliberate recall would reach, so an archived record could never be returned again. The chat's level ratios
  (nodes.lifecycle.ratios) are not applied for that reason: counted with the archive, they push a fixed share
  (20 %) of every agent's records to level 4, which here would delete them.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lumina_memory.nodes.lifecycle.columns import ARCHIVED, CATEGORIES
from lumina_memory.nodes.lifecycle.compress import offline_text
from lumina_memory.nodes.lifecycle.formulas import decay_coefficient, level_from_retention, retention
from lumina_memory.nodes.text.emotion_f2 import EmotionReading, read_emotion
from lumina_memory.nodes.text.sentences import sentences
from lumina_memory.stores.agent_records import LtmRecord
from lumina_memory.stores.errors import InvalidInput

SECONDS_PER_HOUR = 3600.0
EMOTION_PATH = "lexicon"
COMPRESSION_PATH = "offline"


class LifecyclePlan(BaseModel):
    """What maintenance does to one agent's LTM under the lifecycle: ``delete`` (archived) ids, ``rewrite`` the
    records whose text changes level (their new text in ``content``), every record's ``level`` and ``retention``
    (0–100, the chat's scale)."""

    model_config = ConfigDict(frozen=True)

    delete: list[str] = Field(default_factory=list)
    rewrite: list[LtmRecord] = Field(default_factory=list)
    level: dict[str, int] = Field(default_factory=dict)
    retention: dict[str, float] = Field(default_factory=dict)


def stable_summary(record: LtmRecord) -> str:
    """The text intensity and category are read from: the record's summary, else its content's first sentence."""
    if record.summary:
        return record.summary
    head = sentences(record.content)
    return head[0].strip() if head else record.content


def recall_state(created_at, last_accessed, access_count, now: float, day_seconds: float, params
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(days up to the last access, memory_days now, boost multiplier) per record (see the module's Recalls)."""
    created = np.asarray(created_at, np.float64)
    last = np.where(np.asarray(access_count) > 0, np.maximum(np.asarray(last_accessed, np.float64), created), created)
    before = np.maximum(np.minimum(last, float(now)) - created, 0.0) / day_seconds
    since = np.maximum(float(now) - last, 0.0) / day_seconds
    access = np.asarray(access_count, np.float64)
    return before, before * np.power(params.memory_days_reduction, access) + since, access


def lifecycle_plan(records: Sequence[LtmRecord], now: float, params, lifecycle,
                   reader=read_emotion) -> LifecyclePlan:
    """The lifecycle's levels of one agent's records at ``now`` (``params``: AgentParams; ``lifecycle``: the chat's
    LifecycleParams) and what they ask: deletions and rewritten texts."""
    if not records:
        return LifecyclePlan()
    if len({r.agent_id for r in records}) > 1:
        raise InvalidInput("records", "a lifecycle plan is for one agent's records")
    texts = [stable_summary(r) for r in records]
    once = {t: reader(t) for t in dict.fromkeys(texts)}  # a reading costs ~0.3 ms; agents repeat themselves
    readings: list[EmotionReading] = [once[t] for t in texts]
    intensity = np.maximum(np.array([x.intensity for x in readings], np.float64),
                           100.0 * np.array([r.importance for r in records], np.float64))
    category = np.array([CATEGORIES.index(x.category) for x in readings], np.int8)
    start = decay_coefficient(category, intensity, lifecycle)
    day = params.lifecycle_day_hours * SECONDS_PER_HOUR
    before, days, access = recall_state([r.created_at for r in records],
                                        [r.last_accessed if r.last_accessed is not None else r.created_at
                                         for r in records],
                                        [r.access_count for r in records], now, day, lifecycle)
    reinforced = np.minimum(lifecycle.max_decay_coefficient, start + lifecycle.decay_coefficient_boost * access)
    now_score = retention(intensity, reinforced, days)
    lowest = np.minimum(now_score, retention(intensity, start, before))
    levels = level_from_retention(lowest, lifecycle)
    delete, rewrite = [], []
    for i, (r, reading, level) in enumerate(zip(records, readings, levels)):
        if level == ARCHIVED:
            delete.append(r.memory_id)
            continue
        summary = texts[i]
        view = SimpleNamespace(summary=summary, keywords=list(r.tags))
        text = offline_text(view, list(reading.tags), int(level))
        if text is not None and text.strip() and text != r.content:
            rewrite.append(r.model_copy(update={"content": text, "summary": summary}))
    return LifecyclePlan(delete=delete, rewrite=rewrite,
                         level={r.memory_id: int(v) for r, v in zip(records, levels)},
                         retention={r.memory_id: round(float(v), 4) for r, v in zip(records, now_score)})
