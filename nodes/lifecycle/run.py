"""The daily batch on the stores (F9): catch-up one day at a time, each day one archive transaction.

    report = run_lifecycle(services, now=time.time())            # every user due
    report = run_lifecycle(services, now=ts, user_id="alice")    # one user

A user's days run from the day after their last completed one up to today's batch day (``schedule_hour`` in
``LUMINA_TIMEZONE``; before 03:00 it is still yesterday's). A user never batched starts today. Each day:
load the users' columns → ``daily_batch`` (the notes' steps, nodes.lifecycle.batch) → texts for the levels
reached (nodes.lifecycle.compress: the notes' prompts with a model, else the summary and keywords) → auto-link (same_topic at
cosine ≥ threshold over the segments' embeddings, matrix products) → one transaction writes the day, its
derived writes owed (re-embedding, payloads, graph relations, deletions) and the day's completion mark.
A batch killed before that commit left nothing of the day; killed after it, the owed writes are applied by
the next run (``apply_owed``). So no day is applied twice, and ten missed days are ten days of decay.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any, Callable

import numpy as np

from stores.errors import StoreUnavailable
from stores.memories_duckdb import WRITTEN_BY_BATCH

from .autolink import auto_link
from .batch import daily_batch, level_transitions
from .clock import batch_day
from .compress import Compressor, compressor_for
from .columns import ARCHIVED, RELATION_KINDS, MemoryColumns, Relations
from .formulas import compression_work

log = logging.getLogger("lumina.lifecycle")


def today_of(services, now: float) -> int:
    params = services.settings.lifecycle
    return batch_day(datetime.fromtimestamp(now, UTC), params.schedule_hour, params.timezone)


def _relations_of(rows, index: dict[str, int]) -> Relations:
    kept = [(index[s], index[d], RELATION_KINDS.index(k)) for _u, s, d, k, _score in rows if s in index and d in index]
    if not kept:
        return Relations.empty()
    src, dst, kind = zip(*kept)
    return Relations.of(np.array(src), np.array(dst), np.array(kind))


def run_day(services, users: list[str], day: int, now: float, compressor: Compressor | None = None) -> dict[str, Any]:
    """One batch day for ``users`` (all of them due on ``day``)."""
    compressor = compressor or compressor_for(services)
    params = services.settings.lifecycle
    archive = services.stores.archive
    table = archive.memories
    arrays, ids, seqs = table.load(users)
    columns = MemoryColumns.new(**arrays)
    index = {mid: i for i, mid in enumerate(ids)}
    relation_rows = table.relation_rows(users)
    relations = _relations_of(relation_rows, index)
    outcome = daily_batch(columns, relations, day, params)
    after = outcome.columns
    work = compression_work(outcome.level_before, after.level)
    changed = work["summarise"] | work["keywords"] | work["revive"]
    user_of = np.asarray(users, dtype=object)[arrays["group"]] if len(ids) else np.array([], dtype=object)
    texts: dict[int, str | None] = {}
    outbox: list[tuple[str, str, str]] = []
    loaded: set[str] = set()
    records: dict[str, Any] = {}

    def load_segments(user: str) -> None:  # once per user per day, for texts and auto-link alike
        if user not in loaded:
            loaded.add(user)
            records.update({r.segment_id: r for r in archive.segments(user)})

    for user in sorted(set(user_of[changed])) if changed.any() else []:
        load_segments(user)
    tags = {}
    if changed.any():
        tag_rows = table.rows_tags([ids[i] for i in np.flatnonzero(changed)])
        tags = dict(tag_rows)
    for i in np.flatnonzero(changed):
        record = records.get(ids[i])
        if record is None:
            continue
        if work["revive"][i]:  # back from the archive at level 3: its text is already level 3's
            outbox.append((user_of[i], ids[i], "payload"))
            continue
        texts[int(seqs[i])] = compressor.text(record, tags.get(ids[i], []), int(after.level[i]))
        outbox.append((user_of[i], ids[i], "reembed"))
    # F6 auto-link over the segments' embeddings (the meaning of the conversation, not of its compressed text).
    links_added = 0
    if params.enable_auto_linking and outcome.link_candidates.any():
        candidates_users = sorted(set(user_of[outcome.link_candidates]))
        vectors = np.zeros((len(ids), services.embedder.dim), dtype=np.float32)
        for user in candidates_users:
            load_segments(user)
        for segment_id, record in records.items():
            row = index.get(segment_id)
            if row is not None and record.embedding:
                vectors[row] = np.asarray(record.embedding, dtype=np.float32)
        links, _ = auto_link(vectors, outcome.link_candidates, after, outcome.relations, params)
        relations_after = outcome.relations.concat(links)
        links_added = len(links)
    else:
        relations_after = outcome.relations
    # Relations go back as the users' full set when anything about them moved.
    moved = links_added or outcome.relations_removed or outcome.relations_flipped
    new_relations = None
    if moved or len(relations_after) != len(relations):
        scores = {(s, d, k): sc for _u, s, d, k, sc in relation_rows}
        new_relations = []
        for s, d, k in zip(relations_after.src, relations_after.dst, relations_after.kind):
            src, dst, kind = ids[s], ids[d], RELATION_KINDS[k]
            score = scores.get((src, dst, kind), scores.get((dst, src, kind), 1.0))
            new_relations.append((user_of[s], src, dst, kind, float(score)))
        outbox += [(u, "*", "relations") for u in users]
    deleted = np.flatnonzero(outcome.deleted)
    outbox += [(user_of[i], ids[i], "delete") for i in deleted]
    payload_rows = np.flatnonzero((after.level != outcome.level_before) & ~changed & ~outcome.deleted)
    outbox += [(user_of[i], ids[i], "payload") for i in payload_rows]
    values = {k: getattr(after, k) for k in WRITTEN_BY_BATCH}
    table.write_day(users, day, seqs, values, texts, new_relations, outbox, seqs[deleted], now)
    moves = level_transitions(outcome.level_before, after.level, outcome.deleted)
    return {"day": day, "users": len(users), "memories": len(ids), "transitions": moves,
            "reinforced": int(outcome.reinforced.sum()), "revived": int(outcome.revived.sum()),
            "deleted": len(deleted), "links_added": links_added}


def apply_owed(services) -> dict[str, int]:
    """Derived writes committed days still owe: re-embed changed texts (long-term vector, payload), payloads,
    graph relations, deletions. Idempotent; a store that is down leaves its rows for the next run."""
    stores = services.stores
    table = stores.archive.memories
    done: list[tuple[str, str, str]] = []
    counts: Counter = Counter()
    by_user: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for user, memory_id, action in table.owed():
        by_user[user].append((memory_id, action))
    for user, rows in by_user.items():
        try:
            known = {r["memory_id"]: r for r in table.rows(user, [m for m, _ in rows if m != "*"])} if rows else {}
            reembed = [m for m, a in rows if a == "reembed" and m in known]
            if reembed:
                fields = {m: _payload(known[m]) for m in reembed}
                texts = [known[m]["text"] or "" for m in reembed]
                vectors = services.embedder.embed(texts)
                stores.vectors.replace_vector(user, {m: list(map(float, v)) for m, v in zip(reembed, vectors)}, fields)
            payload = {m: _payload(known[m]) for m, a in rows if a == "payload" and m in known}
            if payload:
                stores.vectors.set_payload(user, payload)
            deletions = [m for m, a in rows if a == "delete"]
            if deletions:
                stores.vectors.delete(user, deletions)
                stores.midterm.delete_segments(user, deletions)
                stores.graph.delete_segments(user, deletions)
            if any(a == "relations" for _m, a in rows):
                stores.graph.set_relations(user, [(r["src"], r["dst"], r["kind"], r["score"]) for r in table.relations(user)])
        except StoreUnavailable as exc:
            log.warning("lifecycle writes for a user wait: %s", exc)
            continue
        done += [(user, m, a) for m, a in rows]
        counts.update(a for _m, a in rows)
    table.settle(done)
    return dict(counts)


def _payload(row: dict) -> dict[str, Any]:
    return {"level": int(row["level"]), "retention": round(float(row["retention"]), 4), "protected": bool(row["protected"])}


def run_lifecycle(services, *, now: float, user_id: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Every due day for every due user (or ``user_id``), oldest first. The report: days run, level moves
    (4×5 table, from level 1–4 to 1–4 or deleted), reinforced, revived, deleted, links added, writes applied."""
    table = services.stores.archive.memories
    owed_before = apply_owed(services)
    compressor = compressor_for(services)
    today = today_of(services, now)
    due = table.due_users(today, None if user_id is None else [user_id])
    next_day = {u: (today if last is None else last + 1) for u, last in due.items()}
    total_days = sum(today - d + 1 for d in next_day.values())
    moves = np.zeros((4, 5), dtype=np.int64)
    totals: Counter = Counter()
    days_run, done = 0, 0
    while next_day:
        day = min(next_day.values())
        users = sorted(u for u, d in next_day.items() if d == day)
        out = run_day(services, users, day, now, compressor)
        moves += out["transitions"]
        totals.update({k: out[k] for k in ("reinforced", "revived", "deleted", "links_added")})
        days_run += 1
        done += len(users)
        for u in users:
            next_day[u] = day + 1
        next_day = {u: d for u, d in next_day.items() if d <= today}
        if progress is not None:
            progress(done, total_days)
    applied = apply_owed(services)
    report = {"today": today, "days": days_run, "compression": compressor.paths, "user_days": done, "transitions": moves.tolist(), **totals,
              "applied": applied, "applied_before": owed_before}
    log.info("lifecycle batch today=%s days=%s user_days=%s moved=%s", today, days_run, done,
             int(moves.sum() - np.trace(moves[:, :4])))
    return report
