"""What a portable export holds: one record kind per archive table of a user's memory, and what it leaves out.

The archive is the base every derived tier is rebuilt from (docs/architecture.md), so an export is the user's rows
of the archive's memory tables; the derived tiers (vectors, graph, mid-term) are rebuilt from them on import.
"""

from __future__ import annotations

from lumina_memory.stores.ids import AUDIT_TABLE, OUTBOX_TABLE, SEGMENTS_TABLE, TURNS_TABLE

FORMAT = "lumina-memory-export"
VERSION = 1

# kind -> archive table, in the order an import writes them (turns before the segments that list them).
TABLE_OF_KIND: dict[str, str] = {
    "turn": TURNS_TABLE,
    "segment": SEGMENTS_TABLE,
    "memory": "memories",
    "relation": "memory_relations",
    "forgotten": "memory_forgotten",
    "lifecycle_day": "lifecycle_days",
    "fact": "knowledge_items",
    "procedure": "procedures",
    "semantic": "semantic_memories",
    "strategy": "strategies",
}
KIND_OF_TABLE = {table: kind for kind, table in TABLE_OF_KIND.items()}

PROFILE = "profile"
"""The profile is computed from the records above (nodes.knowledge.profile): exported for readers, recomputed on
import, never written."""

# User tables of the archive an export leaves out, and why (tests/test_portable_kinds.py checks that every user
# table of the archive is either exported or named here).
LEFT_OUT_TABLES: dict[str, str] = {
    OUTBOX_TABLE: "derived writes owed; an import re-derives every tier",
    "lifecycle_outbox": "the lifecycle's owed vector writes; an import re-derives every tier",
    "turn_reads": "recall's reading of each turn, read again at the first recall",
    AUDIT_TABLE: "the audit log records what happened to the data; the importing memory writes its own",
    "memory_undo": "the undo log of forgetting: a short window to undo this memory's own forgetting steps",
    "kb_bases": "knowledge bases are documents, added again with `lumina-memory kb add`",
    "kb_documents": "knowledge bases are documents, added again with `lumina-memory kb add`",
    "kb_chunks": "knowledge bases are documents, added again with `lumina-memory kb add`",
}

# Columns an export leaves out: bookkeeping the importing memory sets itself.
LEFT_OUT_COLUMNS: dict[str, frozenset[str]] = {
    "knowledge_items": frozenset({"tiers_synced"}),  # false on import: the knowledge tiers are derived again
    "memories": frozenset({"seq"}),  # a global arrival number; import order keeps the relative order
}
ARRIVAL_COLUMN = {TURNS_TABLE: "ingest_seq"}
"""A global arrival number an import renumbers after the target's largest, keeping the file's order."""

ORDER_BY: dict[str, str] = {TURNS_TABLE: "ingest_seq", "memories": "seq"}
"""Columns that order a table's records in the file (others: their key, else every column)."""

KEY_OF_KIND: dict[str, str] = {"turn": "turn_id", "segment": "segment_id", "memory": "memory_id",
                               "fact": "item_id", "procedure": "procedure_id", "semantic": "semantic_id",
                               "strategy": "strategy_id"}
"""Each keyed kind's id: unique in a file, and given a new id when the file is imported under another user."""

COLUMN_ALIASES = {"kind": "type"}
"""A table's column written under another name in a record: ``kind`` is the record's own (a relation's and a
strategy's kind column are written as ``type``)."""
FIELD_COLUMNS = {alias: column for column, alias in COLUMN_ALIASES.items()}

LONG_TERM = "long_term"
"""A segment record's field that is no column: whether long-term memory held the segment (its promotion verdict)."""
