"""The daily batch on the stores (F9): catch-up one day at a time, each day one archive transaction.

    report = run_lifecycle(services, now=time.time())            # every user due
    report = run_lifecycle(services, now=ts, user_id="alice")    # one user

A user's days run from the day after their last completed one up to today's batch day (``schedule_hour`` in
``LUMINA_TIMEZONE``; before 03:00 it is still yesterday's). A user never batched starts today. Each day
(``run_day``): load the users' columns → ``daily_batch`` (the notes' steps, nodes.lifecycle.batch) → texts for
the levels reached (nodes.lifecycle.compress: the notes' prompts with a model, else the summary and keywords) →
auto-link (same_topic at cosine ≥ threshold over the segments' embeddings, matrix products, a few users at a
time) → one transaction writes the day, its derived writes owed (re-embedding, payloads, graph relations,
deletions) and the day's completion mark. A batch killed before that commit left nothing of the day; killed
after it, the owed writes are applied by the store-side phases (nodes.lifecycle.phases), or the next run's. So
no day is applied twice, and ten missed days are ten days of decay.

``run_lifecycle`` runs the phases in the maintenance graph's order (graphs.maintenance_lifecycle runs them as
one node each): owed → days (``run_days``) → reembed → relations → deletions → summary.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import numpy as np

from lumina_memory.stores.errors import DayAlreadyApplied
from lumina_memory.stores.records import WRITTEN_BY_BATCH

from .autolink import auto_link
from .batch import daily_batch, level_transitions
from .clock import batch_day
from .compress import Compressor, compressor_for
from .columns import RELATION_KINDS, MemoryColumns, Relations
from .formulas import compression_work
from .params import LifecycleParams
from .phases import STORE_PHASES, Progress, apply_owed, apply_phase, level_counts, summarise
from .undo_steps import undo_steps

log = logging.getLogger("lumina.lifecycle")

LINK_CHUNK_ROWS = 50_000
"""Rows whose embeddings are held at once for auto-link and texts (× 384 float32 ≈ 77 MB); a user larger
than this is one chunk of their own, so memory is bounded by the largest user, not the population."""
DAY_COUNTS = ("reinforced", "revived", "deleted", "links_added")


def today_of(services, now: float) -> int:
    params = services.settings.lifecycle
    return batch_day(datetime.fromtimestamp(now, UTC), params.schedule_hour, params.timezone)


def _relations_of(rows, index: dict[str, int]) -> Relations:
    kept = [(index[s], index[d], RELATION_KINDS.index(k)) for _u, s, d, k, _score in rows if s in index and d in index]
    if not kept:
        return Relations.empty()
    src, dst, kind = zip(*kept)
    return Relations.of(np.array(src), np.array(dst), np.array(kind))


def user_chunks(group: np.ndarray, wanted: np.ndarray, max_rows: int = LINK_CHUNK_ROWS) -> Iterator[np.ndarray]:
    """Every row of the users (groups) having a ``wanted`` row, whole users packed up to ``max_rows`` rows a
    chunk (a larger user alone); each chunk's rows ascending, chunks in ascending user order."""
    groups = np.unique(group[wanted])
    if not len(groups):
        return
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], groups, "left")
    ends = np.searchsorted(group[order], groups, "right")
    chunk: list[np.ndarray] = []
    size = 0
    for start, end in zip(starts, ends):
        if chunk and size + (end - start) > max_rows:
            yield np.sort(np.concatenate(chunk))
            chunk, size = [], 0
        chunk.append(order[start:end])
        size += end - start
    yield np.sort(np.concatenate(chunk))


def relations_within(relations: Relations, rows: np.ndarray, size: int) -> Relations:
    """The relations between ``rows`` (ascending), renumbered to positions in ``rows``."""
    local = np.full(size, -1, np.int64)
    local[rows] = np.arange(len(rows))
    keep = (local[relations.src] >= 0) & (local[relations.dst] >= 0)
    return Relations(local[relations.src[keep]], local[relations.dst[keep]], relations.kind[keep])


def link_chunk(vectors: np.ndarray, rows: np.ndarray, new: np.ndarray, columns: MemoryColumns, relations: Relations,
               params: LifecycleParams) -> tuple[Relations, np.ndarray]:
    """``auto_link`` over whole users' ``rows`` only (``vectors``: one per row of ``rows``); links in the
    full rows' numbering, with their cosines. Users never link across each other, so the union over chunks
    is what one call over every row finds."""
    found, sims = auto_link(vectors, new[rows], columns.take(rows), relations_within(relations, rows, len(columns)),
                            params)
    return Relations(rows[found.src], rows[found.dst], found.kind), sims


def merge_links(parts: list[tuple[Relations, np.ndarray]]) -> Relations:
    """Chunks' links in ``auto_link``'s own order (source row, cosine descending, target row)."""
    if not parts:
        return Relations.empty()
    src = np.concatenate([p[0].src for p in parts])
    dst = np.concatenate([p[0].dst for p in parts])
    kind = np.concatenate([p[0].kind for p in parts])
    sims = np.concatenate([p[1] for p in parts])
    order = np.lexsort((dst, -sims, src))
    return Relations(src[order], dst[order], kind[order])


def run_day(services, users: list[str], day: int, now: float, compressor: Compressor | None = None,
            chunk_rows: int = LINK_CHUNK_ROWS) -> dict[str, Any]:
    """One batch day for ``users`` (all of them due on ``day``), committed in one transaction."""
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
    linking = outcome.link_candidates & bool(params.enable_auto_linking)
    user_of = np.asarray(users, dtype=object)[arrays["group"]] if len(ids) else np.array([], dtype=object)
    tags = dict(table.rows_tags([ids[i] for i in np.flatnonzero(changed)])) if changed.any() else {}
    texts: dict[int, str | None] = {}
    sides: dict[int, tuple[str | None, str | None]] = {}
    outbox: list[tuple[str, str, str]] = []
    links: list[tuple[Relations, np.ndarray]] = []
    # A few users at a time: their segments (texts, embeddings) are read once per day and dropped after.
    for rows in user_chunks(after.group, changed | linking, chunk_rows):
        records = {r.segment_id: r for user in sorted(set(user_of[rows])) for r in archive.segments(user)}
        for i in rows[changed[rows]]:
            record = records.get(ids[i])
            if record is None:
                continue
            if work["revive"][i]:  # back from the archive at level 3: its text is already level 3's
                outbox.append((user_of[i], ids[i], "payload"))
                continue
            compressed = compressor.compress(record, tags.get(ids[i], []), int(after.level[i]))
            texts[int(seqs[i])] = compressed.text
            sides[int(seqs[i])] = (compressed.trigger, compressed.content)  # F2: rewritten with the text
            outbox.append((user_of[i], ids[i], "reembed"))
        if linking[rows].any():  # F6 over the segments' embeddings (the conversation's meaning, not its compressed text)
            vectors = np.zeros((len(rows), services.embedder.dim), dtype=np.float32)
            for k, i in enumerate(rows):
                record = records.get(ids[i])
                if record is not None and record.embedding:
                    vectors[k] = np.asarray(record.embedding, dtype=np.float32)
            links.append(link_chunk(vectors, rows, linking, after, outcome.relations, params))
    added = merge_links(links)
    links_added = len(added)
    # Step 8's deletions take their relations with them (either end; an archived memory keeps the ones it points from).
    gone = outcome.deleted[outcome.relations.src] | outcome.deleted[outcome.relations.dst]
    relations_after = outcome.relations.take(~gone).concat(added)
    # Relations go back as the users' full set when anything about them moved.
    moved = links_added or gone.any() or outcome.relations_removed or outcome.relations_flipped
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
    undo = undo_steps(seqs, outcome.level_before, after.level, outcome.deleted)  # their prior rows, same transaction
    table.write_day(users, day, seqs, values, texts, new_relations, outbox, seqs[deleted], now, undo=undo,
                    sides=sides)
    moves = level_transitions(outcome.level_before, after.level, outcome.deleted)
    return {"day": day, "users": len(users), "memories": len(ids), "transitions": moves,
            "reinforced": int(outcome.reinforced.sum()), "revived": int(outcome.revived.sum()),
            "deleted": len(deleted), "links_added": links_added}


def run_days(services, *, now: float, user_id: str | None = None, progress: Progress | None = None,
             compressor: Compressor | None = None) -> dict[str, Any]:
    """Every due day for every due user (or ``user_id``), oldest first, one transaction per day. The report
    (small, JSON values): today, days run, user_days, taken_by_others (days another worker applied first), the
    4×5 level moves (from level 1–4 to 1–4 or deleted),
    reinforced, revived, deleted, links_added, and which compression path made the texts."""
    table = services.stores.archive.memories
    compressor = compressor or compressor_for(services)
    today = today_of(services, now)
    due = table.due_users(today, None if user_id is None else [user_id])
    next_day = {u: (today if last is None else last + 1) for u, last in due.items()}
    total_days = sum(today - d + 1 for d in next_day.values())
    moves = np.zeros((4, 5), dtype=np.int64)
    totals: Counter = Counter(dict.fromkeys(DAY_COUNTS, 0))
    days_run, done, taken = 0, 0, 0
    if progress is not None:
        progress(0, total_days)
    while next_day:
        day = min(next_day.values())
        users = sorted(u for u, d in next_day.items() if d == day)
        try:
            out = run_day(services, users, day, now, compressor)
        except DayAlreadyApplied as exc:  # another worker applied it first: read the due users again
            log.info("lifecycle day %d taken by another worker: %s", day, exc)
            taken += 1
            due = table.due_users(today, None if user_id is None else [user_id])
            next_day = {u: (today if last is None else last + 1) for u, last in due.items()}
            continue
        moves += out["transitions"]
        totals.update({k: out[k] for k in DAY_COUNTS})
        days_run += 1
        done += len(users)
        for u in users:
            next_day[u] = day + 1
        next_day = {u: d for u, d in next_day.items() if d <= today}
        if progress is not None:
            progress(done, total_days)
    # Undo entries out of their window go with the run that would have made new ones (issue 49).
    purged = table.undo.purge(now - services.settings.lifecycle.undo_window_days * 86_400.0)
    return {"today": today, "days": days_run, "user_days": done, "taken_by_others": taken,
            "transitions": moves.tolist(),
            **{k: int(v) for k, v in totals.items()}, "compression": dict(compressor.paths), "undo_purged": purged}


def run_lifecycle(services, *, now: float, user_id: str | None = None,
                  progress: Progress | None = None) -> dict[str, Any]:
    """The whole batch in one call, phase by phase as the maintenance graph runs it; ``progress`` follows the
    days (done, total user-days). The report: ``run_days``' counts, writes ``applied`` after the days and
    ``applied_before`` them (owed by an earlier run), and how many still wait (a store was down)."""
    owed_before = apply_owed(services)
    days = run_days(services, now=now, user_id=user_id, progress=progress)
    phases = {name: apply_phase(services, name) for name in STORE_PHASES}
    return summarise(days, owed_before, phases, level_counts(services, user_id))
