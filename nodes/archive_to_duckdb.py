"""archive_to_duckdb: every turn and the segment, durably, right after the Redis copy — so no
memory is ever lost to the 24 h TTL."""

from __future__ import annotations

from contextlib import nullcontext

from stores.models import Turn

from .pending import advance, record_of


def archive_to_duckdb(state: dict, ctx, services) -> dict:
    archive = services.stores.archive

    def write(item: dict) -> None:
        record = record_of(item)
        turns = [Turn(user_id=ctx.user_id, segment_id=record.segment_id, **t) for t in item["turns"]]
        with archive.transaction() if hasattr(archive, "transaction") else nullcontext():  # one commit
            archive.put_turns(turns)
            archive.put_segment(record)

    return advance(state, "duckdb", write)
