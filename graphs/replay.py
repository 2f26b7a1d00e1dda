"""Feed a transcript through the memory graph turn by turn, as it was spoken."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from stores.errors import InvalidInput

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


def replay(graph, user_id: str, turns: Iterable[dict[str, Any]], *, flush: bool = True, progress=None) -> int:
    """Ingest each turn without replies (the transcript already has them); close the last segment
    when ``flush`` so everything reaches every tier. Returns the number of turns sent."""
    config = thread_config(user_id)
    context = {"user_id": user_id, "respond": False}
    sent = 0
    for row in turns:
        turn = {k: row[k] for k in ("speaker", "text", "ts", "source_id") if k in row}
        graph.invoke({"turn": turn}, config, context=context)
        sent += 1
        if progress is not None:
            progress(1)
    if flush:
        graph.invoke({"flush": True}, config, context=context)
    return sent
