"""A session transcript's rows into one user's memory, one memory per exchange or segmented as a conversation is
(``transcript_memory_unit``); shared by `lumina-memory ingest` (graphs.ingest_file) and graphs.ingest_session."""

from __future__ import annotations


def exchanges(rows: list[dict]) -> list[list[dict]]:
    """A user message and the turns that answer it, up to the next user message."""
    out: list[list[dict]] = []
    for row in rows:
        if row["speaker"] == "user" or not out:
            out.append([])
        out[-1].append(row)
    return out


def replay_session(graph, user_id: str, rows: list[dict], progress=None) -> int:
    """A session transcript's turns into ``user_id``'s memory as ``transcript_memory_unit`` says: ``turn``, one
    memory per exchange (the notes: a user message and its reply closed as a segment of their own), or
    ``segment``, turns as spoken with the boundary detector closing segments. Returns the turns sent."""
    from .idle_segments import writing_thread
    from .replay import replay

    services = graph.lumina_services()
    if not rows:
        return 0
    per_turn = services.settings.transcript_memory_unit == "turn"
    sent = 0
    with writing_thread(services, user_id, "an import into the thread"):  # one writer at a time
        for part in (exchanges(rows) if per_turn else [rows]):
            sent += replay(graph, user_id, part, progress=progress)  # replay closes its last segment
    return sent
