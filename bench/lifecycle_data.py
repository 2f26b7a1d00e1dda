"""Synthetic memory populations for ``bench.lifecycle``: a year of a user's memories as the lifecycle sees them.

A population is what a store would load before a batch: ``MemoryColumns`` (one row per memory), typed relations
and one 384-d float32 embedding per row. It is built "imported, never batched" — every memory at level 1 with
``memory_days`` = its age at the coming batch — so the first batch sorts a whole year at once; each later day
adds that day's memories and flags (``next_day``), as encoding and recall would between two batches.

What is drawn, and from what in the notes (``seeds/forgetting-memory-design.ja.md``):

- ages uniform over ``history_days`` (default a year); a row order of user, then created (the store's order);
- categories casual 40 %, work 25 %, decision 10 %, emotional 25 % (our mix: chat is mostly casual);
- intensity per category, rounded to an integer as the notes store it, from their scoring table and examples
  (casual ~20 "typo fix 15–25", work ~35 "technical discussion 30–40", decision ~55 "design decision 40–50,
  important decision 61–80", emotional ~65 "personal 50–65, deep 70–85"); about 5 % above 80 ("high-intensity
  memories are a minority, 5–20 %");
- past recalls: Poisson with a mean rising with intensity (0.2 + 1.5 × intensity/100), at uniform times in the
  memory's life; each one halved ``memory_days`` so far and raised ``decay`` by 0.02 (F3), so both carry the
  history; ``idle_days`` is the time since the last one;
- pending flags: 1 % recalled since the last batch, ~0.3 % protected (at most ``max_protected_memories`` per
  user), and on later days 0.1 % of the archive asked back by deliberate recall (revival requests: ~7 a day
  for a user with 7,000 archived memories, a "do you remember?" question reaching top-k archived hits: a
  user's requests of a day share one time, as one ``mark_recalled`` call writes them);
- relations: ``continues`` to the user's previous memory (30 %), ``references`` to a random earlier one (5 %);
- embeddings: each user talks about ``per_user / 30`` topics (a random unit centre each, popularity ~ 1/rank);
  a memory is its topic's centre plus noise of norm 0.25–0.9, so some pairs of a topic pass the 0.85 auto-link
  threshold and most do not.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from lumina_memory.nodes.lifecycle import ARCHIVED, LifecycleParams, MemoryColumns, Relations, decay_coefficient
from lumina_memory.nodes.lifecycle.columns import RELATION_KINDS

DIM = 384
DAY_SECONDS = 86_400.0
BATCH_EPOCH = 1_767_204_000.0  # 2026-01-01 03:00 Asia/Tokyo: the first batch's time
CATEGORY_SHARES = (0.40, 0.25, 0.10, 0.25)  # casual, work, decision, emotional
INTENSITY_MEAN_SD = ((20.0, 8.0), (35.0, 8.0), (55.0, 12.0), (65.0, 18.0))
RECALLED_SHARE = 0.01
PROTECTED_SHARE = 0.003
REVIVAL_SHARE = 0.001
CONTINUES_SHARE, REFERENCES_SHARE = 0.30, 0.05
MEMORIES_PER_TOPIC = 30
NOISE_RANGE = (0.25, 0.9)


@dataclass
class Population:
    """The state a batch reads. ``next_day`` appends a day's memories; ``by_user`` puts rows in the store's
    order (user, then insertion)."""

    columns: MemoryColumns
    relations: Relations
    embeddings: np.ndarray  # float32 (rows, DIM)
    centres: np.ndarray  # float32 (users, topics, DIM), to draw a day's new memories from the same topics
    today: int  # the next batch's day number
    per_user_rate: float  # new memories per user per day

    @property
    def users(self) -> int:
        return len(self.centres)


def _intensity(rng: np.random.Generator, category: np.ndarray) -> np.ndarray:
    mean = np.array([m for m, _ in INTENSITY_MEAN_SD])[category]
    sd = np.array([s for _, s in INTENSITY_MEAN_SD])[category]
    return np.clip(np.round(rng.normal(mean, sd)), 0, 100)


def _topic_vectors(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    """n memories of one user: a topic by popularity ~ 1/rank, plus noise of norm 0.25–0.9."""
    topics = len(centres)
    weights = 1.0 / np.arange(1, topics + 1)
    topic = rng.choice(topics, size=n, p=weights / weights.sum())
    noise = rng.standard_normal((n, DIM), dtype=np.float32)
    noise *= (rng.uniform(*NOISE_RANGE, n) / np.sqrt(DIM)).astype(np.float32)[:, None]
    return centres[topic] + noise


def _recall_history(rng: np.random.Generator, age: np.ndarray, intensity: np.ndarray, params: LifecycleParams):
    """Past recalls at uniform times in each memory's life: (recall_count, memory_days, idle_days, boosts)."""
    count = rng.poisson(0.2 + 1.5 * intensity / 100)
    longest = int(count.max(initial=0))
    times = np.sort(np.where(np.arange(longest) < count[:, None], rng.uniform(0, 1, (len(age), longest)), np.inf), axis=1)
    days = np.zeros(len(age))
    last = np.zeros(len(age))
    for k in range(longest):  # one pass per recall number, vectorised over memories
        at = np.minimum(times[:, k], 1.0) * age
        took = k < count
        days = np.where(took, (days + at - last) * params.memory_days_reduction, days)
        last = np.where(took, at, last)
    return count, days + age - last, age - last


def _protected(rng: np.random.Generator, group: np.ndarray, params: LifecycleParams) -> np.ndarray:
    chosen = rng.random(len(group)) < PROTECTED_SHARE
    # at most max_protected_memories per user: keep each user's first ones
    order = np.flatnonzero(chosen)
    rank = np.arange(len(order)) - np.searchsorted(group[order], group[order], side="left")
    chosen[order[rank >= params.max_protected_memories]] = False
    return chosen


def _relations(rng: np.random.Generator, group: np.ndarray) -> Relations:
    rows = np.arange(len(group))
    same_user_as_previous = np.r_[False, group[1:] == group[:-1]]
    cont = rows[same_user_as_previous & (rng.random(len(rows)) < CONTINUES_SHARE)]
    first_of_user = np.searchsorted(group, group, side="left")
    ref = rows[(rows > first_of_user) & (rng.random(len(rows)) < REFERENCES_SHARE)]
    earlier = first_of_user[ref] + (rng.random(len(ref)) * (ref - first_of_user[ref])).astype(np.int64)
    kinds = [RELATION_KINDS.index("continues")] * len(cont) + [RELATION_KINDS.index("references")] * len(ref)
    return Relations.of(np.r_[cont, ref], np.r_[cont - 1, earlier], kinds)


def imported_population(
    users: int, per_user: int, seed: int, params: LifecycleParams, history_days: float = 365.0, progress=None,
) -> Population:
    """``users`` × ``per_user`` memories created over ``history_days`` before the first batch, all level 1."""
    rng = np.random.default_rng(seed)
    n = users * per_user
    group = np.repeat(np.arange(users, dtype=np.int64), per_user)
    age = np.empty(n)
    for u in range(users):  # each user's memories in created order, as the store lists them
        age[u * per_user:(u + 1) * per_user] = np.sort(rng.uniform(0.01, history_days, per_user))[::-1]
    category = rng.choice(len(CATEGORY_SHARES), size=n, p=CATEGORY_SHARES)
    intensity = _intensity(rng, category)
    recalls, memory_days, idle_days = _recall_history(rng, age, intensity, params)
    base = decay_coefficient(category, intensity, params)
    decay = np.minimum(params.max_decay_coefficient, base + params.decay_coefficient_boost * recalls)
    columns = MemoryColumns.new(
        intensity=intensity, category=category, decay=decay, memory_days=memory_days, idle_days=idle_days,
        recall_count=recalls, recalled=rng.random(n) < RECALLED_SHARE, protected=_protected(rng, group, params),
        unbatched=np.ones(n, bool), created=BATCH_EPOCH - age * DAY_SECONDS, group=group,
    )
    topics = max(8, per_user // MEMORIES_PER_TOPIC)
    centres = rng.standard_normal((users, topics, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=2, keepdims=True)
    embeddings = np.empty((n, DIM), np.float32)
    for u in range(users):
        embeddings[u * per_user:(u + 1) * per_user] = _topic_vectors(rng, centres[u], per_user)
        if progress is not None:
            progress()
    return Population(columns, _relations(rng, group), embeddings, centres, today=0,
                      per_user_rate=per_user / history_days)


def next_day(population: Population, after: MemoryColumns, relations: Relations, seed: int,
             params: LifecycleParams) -> tuple[Population, int]:
    """The state after a batch, one day on: that day's new memories appended (created during the day, so their
    first memory_days is the time to the next batch), 1 % of active memories recalled, 0.1 % of the archive asked
    back by deliberate recall. Returns the population and how many memories were new."""
    rng = np.random.default_rng(seed)
    today = population.today + 1
    users = population.users
    counts = rng.poisson(population.per_user_rate, users)
    group = np.repeat(np.arange(users, dtype=np.int64), counts)
    fresh = len(group)
    category = rng.choice(len(CATEGORY_SHARES), size=fresh, p=CATEGORY_SHARES)
    intensity = _intensity(rng, category)
    to_batch = rng.uniform(0.01, 1.0, fresh)
    batch_time = BATCH_EPOCH + today * DAY_SECONDS
    new = MemoryColumns.new(
        intensity=intensity, category=category, decay=decay_coefficient(category, intensity, params),
        memory_days=to_batch, idle_days=to_batch, unbatched=np.ones(fresh, bool),
        created=batch_time - to_batch * DAY_SECONDS, group=group,
    )
    vectors = np.vstack([_topic_vectors(rng, population.centres[u], int(c)) for u, c in enumerate(counts)] or
                        [np.empty((0, DIM), np.float32)])
    active = after.level != ARCHIVED
    recalled = active & (rng.random(len(after)) < RECALLED_SHARE)
    asked = ~active & (rng.random(len(after)) < REVIVAL_SHARE)
    # one deliberate recall per user a day reaches them: a user's requests share its time (mark_recalled's now)
    asked_at = (batch_time - rng.uniform(0, DAY_SECONDS, users))[after.group]
    flagged = after.with_(
        recalled=after.recalled | recalled,
        revival_requested=after.revival_requested | asked,
        revival_requested_at=np.where(asked & ~after.revival_requested, asked_at, after.revival_requested_at),
    )
    columns = MemoryColumns(**{f.name: np.concatenate([getattr(flagged, f.name), getattr(new, f.name)])
                               for f in fields(MemoryColumns)})
    embeddings = np.concatenate([population.embeddings, vectors])
    return Population(columns, relations, embeddings, population.centres, today, population.per_user_rate), fresh


def user_rows(group: np.ndarray, users: int) -> list[np.ndarray]:
    """Each user's row indices, in row order (one stable sort, not a mask per user)."""
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(users + 1))
    return [order[bounds[u]:bounds[u + 1]] for u in range(users)]


def user_slice(population: Population, columns: MemoryColumns, relations: Relations, rows: np.ndarray):
    """One user's columns, relations (renumbered) and embeddings; relations never cross users."""
    local = np.full(len(columns), -1, np.int64)
    local[rows] = np.arange(len(rows))
    mine = local[relations.src] >= 0
    edges = relations.take(mine)
    return (columns.take(rows), Relations(local[edges.src], local[edges.dst], edges.kind),
            population.embeddings[rows])


def by_user(population: Population, keys: np.ndarray) -> np.ndarray:
    """Put the rows in the store's order — user, then ``keys`` (insertion order, as the table's seq) — in place:
    columns, relations (renumbered) and embeddings. Returns the order (new row → old row) for aligned arrays."""
    order = np.lexsort((keys, population.columns.group))
    if np.array_equal(order, np.arange(len(order))):
        return order
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    population.columns = population.columns.take(order)
    edges = population.relations
    population.relations = Relations(position[edges.src], position[edges.dst], edges.kind)
    population.embeddings = population.embeddings[order]
    return order
