"""The notes' batch, written as they write it: a list of memory dicts and Python loops.

This is the oracle the vectorised core is tested against and the baseline ``bench/lifecycle.py`` measures, so it
stays close to the notes' pseudocode (``compression.py``'s loop, ``calculate_revival_score``,
``find_similar_memories``, ``calculate_resonance``, ``calculate_relevance``) and makes the same choices where they
are ambiguous (documented in ``formulas``, ``ratios``, ``relations`` and ``autolink``). Records use the notes'
field names plus ``user``, ``unbatched``, ``idle_days`` and ``archive_reason``; ``archived_at`` is a batch-day
number; ``created``/``revival_requested_at`` are epoch seconds.

Powers go through ``_power`` — NumPy's ``power`` on one-element arrays. On AVX-512 builds NumPy's array loop
(SVML) and libm's ``pow`` (``math.pow``, and ``np.power`` on Python floats) differ in the last bit for a few
percent of inputs, and the comparison with the core is exact; the notes' formula is unchanged.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from typing import Any

import numpy as np

from .columns import (
    ARCHIVED, CATEGORIES, NOT_ARCHIVED, RELATION_KINDS, UNKNOWN_CATEGORY, ArchiveReason, MemoryColumns, Relations,
)
from .params import LifecycleParams

Memory = dict[str, Any]
_REASONS = {ArchiveReason.THRESHOLD: "threshold", ArchiveReason.RATIO: "ratio",
            ArchiveReason.LOW_ACTIVITY: "low_activity"}


# --- formulas -------------------------------------------------------------------------------------
def _power(base: float, exponent: float) -> float:
    return float(np.power(np.array([base], np.float64), np.array([exponent], np.float64))[0])


def get_decay_coefficient(category: str | None, emotional_intensity: float, params: LifecycleParams) -> float:
    bounds = dict(zip(CATEGORIES, params.category_ranges())).get(category)
    if bounds:
        min_val, max_val = bounds
        return min_val + (max_val - min_val) * (emotional_intensity / 100)
    return params.base_decay_coefficient


def level_for(score: float, params: LifecycleParams) -> int:
    if score > params.level1_threshold:
        return 1
    if score > params.level2_threshold:
        return 2
    if score > params.level3_threshold:
        return 3
    return 4


def calculate_revival_score(memory: Memory, archived_days: int, params: LifecycleParams) -> float:
    base_score = memory["emotional_intensity"]
    decay = _power(params.revival_decay_per_day, archived_days)
    calculated_score = base_score * decay
    min_score = params.level3_threshold + params.revival_min_margin
    return max(calculated_score, min_score)


def _allowed(ratio: float, total: int, params: LifecycleParams) -> int:
    return total if total < params.ratio_min_memories else math.floor(ratio * total + 1e-9)


def _archive(memory: Memory, today: int, reason: str) -> None:
    memory["current_level"] = ARCHIVED
    memory["archived_at"] = today
    memory["archive_reason"] = reason


def _users(memories: list[Memory]) -> list[Any]:
    return list(dict.fromkeys(m["user"] for m in memories))


# --- the batch ------------------------------------------------------------------------------------
def reference_daily_batch(
    memories: list[Memory], today: int, params: LifecycleParams, embeddings: dict[str, Any] | None = None
) -> tuple[list[Memory], list[str]]:
    """One batch day. Returns the memories left (deleted ones gone) and the ids deleted."""
    memories = copy.deepcopy(memories)
    level_before = {m["id"]: m["current_level"] for m in memories}
    new_ids = {m["id"] for m in memories if m["unbatched"] and m["archived_at"] is None}

    age_score_compress(memories, params, today)  # 1–3
    enforce_ratios(memories, params, today)  # 4
    revive(memories, params, today)  # 4.5
    repair_relations(memories)  # 5
    reorient_relations(memories, params)  # 6
    if embeddings is not None and params.enable_auto_linking:  # 7
        changed = {
            m["id"] for m in memories
            if m["archived_at"] is None and m["current_level"] > level_before[m["id"]]
        }
        auto_link(memories, embeddings, new_ids | changed, params)
    deleted = [m["id"] for m in memories if should_delete(m, params, today)]  # 8
    gone = set(deleted)
    kept = [m for m in memories if m["id"] not in gone]
    for m in kept:
        m["relations"] = [r for r in m["relations"] if r["id"] not in gone]
    return kept, deleted


def age_score_compress(memories: list[Memory], params: LifecycleParams, today: int) -> None:
    """Steps 1–3 of the notes' loop, for each memory outside the archive."""
    for m in memories:
        if m["archived_at"] is not None:  # level 4: outside the batch
            continue
        # 1. reinforcement, or one more day
        if m["recalled_since_last_batch"]:
            m["memory_days"] = m["memory_days"] * params.memory_days_reduction
            m["decay_coefficient"] = min(
                params.max_decay_coefficient, m["decay_coefficient"] + params.decay_coefficient_boost
            )
            m["recall_count"] += 1
            m["recalled_since_last_batch"] = False
            m["idle_days"] = 0.0
        elif not m["unbatched"]:
            m["memory_days"] += 1.0
            m["idle_days"] += 1.0
        m["unbatched"] = False
        # 2. retention
        m["retention_score"] = m["emotional_intensity"] * _power(m["decay_coefficient"], m["memory_days"])
        # 3. compression by threshold (protected memories keep their level)
        if m["protected"]:
            continue
        level = level_for(m["retention_score"], params)
        if level > m["current_level"]:
            m["current_level"] = level
        if m["current_level"] == ARCHIVED:
            _archive(m, today, "threshold")
        elif (
            params.low_activity_enabled
            and m["idle_days"] >= params.low_activity_unused_days
            and m["recall_count"] < params.low_activity_min_recalls
        ):
            _archive(m, today, "low_activity")


def enforce_ratios(memories: list[Memory], params: LifecycleParams, today: int) -> None:
    for user in _users(memories):
        pool = [m for m in memories if m["user"] == user and not m["protected"]]
        total = len(pool)
        for level, ratio in ((1, params.level1_ratio), (2, params.level2_ratio), (3, params.level3_ratio)):
            at_level = [m for m in pool if m["current_level"] == level]
            allowed = _allowed(ratio, total, params)
            if len(at_level) <= allowed:
                continue
            at_level.sort(key=lambda m: (m["retention_score"], m["created"], m["recall_count"]))
            for m in at_level[: len(at_level) - allowed]:
                if level + 1 == ARCHIVED:
                    _archive(m, today, "ratio")
                else:
                    m["current_level"] = level + 1


def revive(memories: list[Memory], params: LifecycleParams, today: int) -> None:
    for user in _users(memories):
        pool = [m for m in memories if m["user"] == user and not m["protected"]]
        allowed = _allowed(params.level3_ratio, len(pool), params)
        level3 = sum(1 for m in pool if m["current_level"] == 3)
        requests = [
            m for m in memories if m["user"] == user and m["archived_at"] is not None and m["revival_requested"]
        ]
        requests.sort(key=lambda m: (
            math.inf if m["revival_requested_at"] is None else m["revival_requested_at"], m["created"]
        ))
        for m in requests:
            if not m["protected"] and level3 + 1 > allowed:
                m["revival_requested"] = False  # no room this time
                m["revival_requested_at"] = None
                continue
            archived_days = today - m["archived_at"]
            m["current_level"] = 3
            m["archived_at"] = None
            m["archive_reason"] = None
            m["revival_requested"] = False
            m["revival_requested_at"] = None
            m["recalled_since_last_batch"] = True
            m["recall_count"] += 1
            m["retention_score"] = calculate_revival_score(m, archived_days, params)
            m["idle_days"] = 0.0
            if not m["protected"]:
                level3 += 1


def repair_relations(memories: list[Memory]) -> None:
    by_id = {m["id"]: m for m in memories}
    for m in memories:
        m["relations"] = [
            r for r in m["relations"]
            if r["id"] != m["id"] and r["id"] in by_id and by_id[r["id"]]["archived_at"] is None
        ]


def points_right(a: Memory, b: Memory, params: LifecycleParams) -> bool:
    if abs(a["retention_score"] - b["retention_score"]) < params.score_proximity_threshold:
        return a["created"] >= b["created"]  # close scores: newer → older
    return a["retention_score"] >= b["retention_score"]


def reorient_relations(memories: list[Memory], params: LifecycleParams) -> None:
    by_id = {m["id"]: m for m in memories}
    for a in memories:
        if a["archived_at"] is not None:
            continue
        for rel in list(a["relations"]):
            b = by_id[rel["id"]]
            if b["archived_at"] is not None or points_right(a, b, params):
                continue
            a["relations"].remove(rel)
            back = {"id": a["id"], "type": rel["type"]}
            if back not in b["relations"]:
                b["relations"].append(back)


def find_similar_memories(new_embeddings, all_embeddings, new_ids, all_ids, threshold):
    """The notes' function, unchanged but for the zero-vector warning."""
    with np.errstate(invalid="ignore", divide="ignore"):
        new_normalized = new_embeddings / np.linalg.norm(new_embeddings, axis=1, keepdims=True)
        all_normalized = all_embeddings / np.linalg.norm(all_embeddings, axis=1, keepdims=True)
        similarity_matrix = new_normalized @ all_normalized.T
        indices = np.where(similarity_matrix >= threshold)
    results = []
    for i, j in zip(indices[0], indices[1]):
        if new_ids[i] == all_ids[j]:
            continue
        results.append((new_ids[i], all_ids[j], float(similarity_matrix[i, j])))
    return results


def auto_link(memories: list[Memory], embeddings: dict[str, Any], candidate_ids: set[str],
              params: LifecycleParams) -> None:
    row = {m["id"]: i for i, m in enumerate(memories)}
    cap = params.max_relations_per_memory
    for user in _users(memories):
        everyone = [m for m in memories if m["user"] == user and m["archived_at"] is None]
        fresh = [m for m in everyone if m["id"] in candidate_ids]
        if not fresh:
            continue
        pairs = find_similar_memories(
            np.array([embeddings[m["id"]] for m in fresh], np.float64),
            np.array([embeddings[m["id"]] for m in everyone], np.float64),
            [m["id"] for m in fresh], [m["id"] for m in everyone], params.auto_link_similarity_threshold,
        )
        by_new: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for new_id, other_id, similarity in pairs:
            by_new[new_id].append((similarity, other_id))
        chosen: dict[tuple[int, int], float] = {}
        for new_id, found in by_new.items():
            found.sort(key=lambda c: (-c[0], row[c[1]]))
            for similarity, other_id in found[:cap]:
                key = (min(row[new_id], row[other_id]), max(row[new_id], row[other_id]))
                chosen[key] = max(chosen.get(key, -math.inf), similarity)
        proposals = []
        for (low, high), similarity in chosen.items():
            a, b = memories[low], memories[high]
            if any(r["id"] == b["id"] for r in a["relations"]) or any(r["id"] == a["id"] for r in b["relations"]):
                continue
            src, dst = (a, b) if points_right(a, b, params) else (b, a)
            proposals.append((src, dst, similarity))
        proposals.sort(key=lambda p: (row[p[0]["id"]], -p[2], row[p[1]["id"]]))
        for src, dst, _ in proposals:
            if len(src["relations"]) < cap:
                src["relations"].append({"id": dst["id"], "type": "same_topic"})


def should_delete(m: Memory, params: LifecycleParams, today: int) -> bool:
    if m["archived_at"] is None or m["protected"] or m["revival_requested"]:
        return False
    archived_days = today - m["archived_at"]
    if params.low_activity_enabled and m["archive_reason"] == "low_activity" and (
        archived_days > params.low_activity_delete_after_days
    ):
        return True
    if not params.auto_delete_enabled:
        return False
    conditions = [archived_days > params.archive_retention_days,
                  m["emotional_intensity"] < params.delete_max_intensity]
    if params.delete_require_zero_recall:
        conditions.append(m["recall_count"] == 0)
    return all(conditions) if params.delete_condition_mode == "AND" else any(conditions)


# --- ranking (the notes' memory_retrieval.py) -----------------------------------------------------
def calculate_resonance(memory: Memory, current: Memory, params: LifecycleParams) -> float:
    score = 0
    if memory.get("emotional_valence") == current.get("valence"):
        score += params.valence_match_bonus
    mem_arousal = memory.get("emotional_arousal", 50)
    cur_arousal = current.get("arousal", 50)
    arousal_diff = abs(mem_arousal - cur_arousal) / 100
    score += max(0, params.arousal_proximity_bonus * (1 - arousal_diff))
    mem_tags = set(memory.get("emotional_tags", []))
    cur_tags = set(current.get("tags", []))
    if mem_tags and cur_tags:
        overlap = len(mem_tags & cur_tags) / max(len(mem_tags), len(cur_tags))
        score += overlap * params.tags_overlap_weight
    return score


def calculate_relevance(memory: Memory, similarity: float, current: Memory | None, params: LifecycleParams) -> float:
    score = memory.get("retention_score", 0) or 0
    keyword_match = max(0, similarity)
    recall_weight = 1 + params.recall_count_weight * memory.get("recall_count", 0)
    base_priority = score * keyword_match * recall_weight
    resonance_bonus = 0
    if current:
        resonance_bonus = calculate_resonance(memory, current, params)
        resonance_bonus = params.priority_weight_alpha * resonance_bonus * score
    return base_priority + resonance_bonus


# --- converters between records and columns -----------------------------------------------------
def to_records(columns: MemoryColumns, relations: Relations, ids: list[str]) -> list[Memory]:
    records = []
    for i, memory_id in enumerate(ids):
        category = int(columns.category[i])
        archived = int(columns.archived_on[i])
        asked = float(columns.revival_requested_at[i])
        records.append({
            "id": memory_id, "user": int(columns.group[i]), "created": float(columns.created[i]),
            "memory_days": float(columns.memory_days[i]), "recalled_since_last_batch": bool(columns.recalled[i]),
            "recall_count": int(columns.recall_count[i]), "emotional_intensity": float(columns.intensity[i]),
            "decay_coefficient": float(columns.decay[i]),
            "category": CATEGORIES[category] if 0 <= category < len(CATEGORIES) else None,
            "current_level": int(columns.level[i]), "retention_score": float(columns.retention[i]),
            "archived_at": None if archived == NOT_ARCHIVED else archived,
            "archive_reason": _REASONS.get(ArchiveReason(int(columns.archive_reason[i]))),
            "protected": bool(columns.protected[i]), "revival_requested": bool(columns.revival_requested[i]),
            "revival_requested_at": None if math.isnan(asked) else asked,
            "unbatched": bool(columns.unbatched[i]), "idle_days": float(columns.idle_days[i]), "relations": [],
        })
    for src, dst, kind in zip(relations.src.tolist(), relations.dst.tolist(), relations.kind.tolist()):
        records[src]["relations"].append({"id": ids[dst], "type": RELATION_KINDS[kind]})
    return records


def from_records(records: list[Memory]) -> tuple[MemoryColumns, Relations, list[str]]:
    ids = [m["id"] for m in records]
    row = {memory_id: i for i, memory_id in enumerate(ids)}
    reasons = {name: code for code, name in _REASONS.items()}

    def column(key, convert=lambda v: v):
        return np.array([convert(m[key]) for m in records])

    columns = MemoryColumns.new(
        intensity=column("emotional_intensity"), decay=column("decay_coefficient"),
        category=column("category", lambda c: CATEGORIES.index(c) if c in CATEGORIES else UNKNOWN_CATEGORY),
        memory_days=column("memory_days"), retention=column("retention_score"), level=column("current_level"),
        protected=column("protected"), recalled=column("recalled_since_last_batch"),
        recall_count=column("recall_count"), unbatched=column("unbatched"), idle_days=column("idle_days"),
        created=column("created"), archived_on=column("archived_at", lambda a: NOT_ARCHIVED if a is None else a),
        archive_reason=column("archive_reason", lambda r: reasons.get(r, ArchiveReason.ACTIVE)),
        revival_requested=column("revival_requested"),
        revival_requested_at=column("revival_requested_at", lambda t: np.nan if t is None else t),
        group=column("user"),
    ) if records else _empty_columns()
    edges = [(row[m["id"]], row[r["id"]], RELATION_KINDS.index(r["type"])) for m in records for r in m["relations"]]
    relations = Relations.of(*zip(*edges)) if edges else Relations.empty()
    return columns, relations, ids


def _empty_columns() -> MemoryColumns:
    return MemoryColumns.new(intensity=np.empty(0), decay=np.empty(0))
