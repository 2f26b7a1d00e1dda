"""archive_to_duckdb: every turn and the segment, durably, right after the Redis copy — so no
memory is ever lost to the 24 h TTL.

The same transaction queues, in the archive's outbox, the derived writes each segment still owes
(long-term and turn vectors, the graph, and mid-term when Redis was down) with the promotion verdict
made at flush. The archive is then never the only witness: a process killed after this commit, or a
store that is down, leaves rows that nodes.recovery completes from the archive."""

from __future__ import annotations

from contextlib import nullcontext

from lumina_memory.stores.models import Turn

from .costs import part
from .knowledge.learn import learn_segments
from .knowledge.procedures import learn_procedures
from .lifecycle.encode import encode_segments
from .pending import advance, owed, record_of


def archive_to_duckdb(state: dict, ctx, services) -> dict:
    archive = services.stores.archive

    def write_all(items: list[dict]) -> list[None]:
        records = [record_of(item) for item in items]
        turns = [
            Turn(user_id=ctx.user_id, segment_id=record.segment_id, **t)
            for item, record in zip(items, records)
            for t in item["turns"]
        ]
        with archive.transaction() if hasattr(archive, "transaction") else nullcontext():  # one commit
            archive.put_turns(turns)
            if hasattr(archive, "put_segments"):  # one statement for the batch
                archive.put_segments(records)
            else:
                for record in records:
                    archive.put_segment(record)
            if hasattr(archive, "memories"):  # F1/F2/F6: the segment becomes a memory in the same commit
                with part("encode"):  # issue 49: timed as archive_to_duckdb.encode
                    encode_segments(services, ctx.user_id, [(r, item["turns"]) for item, r in zip(items, records)])
            if hasattr(archive, "knowledge"):  # A6/A7: what the segment taught, committed with it
                with part("learn"):
                    learn_segments(services, ctx.user_id, [(r, item["turns"]) for item, r in zip(items, records)])
                with part("procedures"):
                    learn_procedures(services, ctx.user_id, [(r, item["turns"]) for item, r in zip(items, records)])  # A8
            if hasattr(archive, "put_outbox"):
                archive.put_outbox([(ctx.user_id, item["segment_id"], owed(item), item.get("promotion") or "")
                                    for item in items])
        return [None] * len(items)

    return advance(state, "duckdb", write_all=write_all)
