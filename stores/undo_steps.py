"""The undo log's vocabulary (issue 49), shared by its adapter (stores.memory_undo) and its callers."""

from __future__ import annotations

STEPS = ("compress", "archive", "delete", "knowledge", "merge", "procedure")
# Keys of a memory's undo entry (``prior``) that are no column: a merged survivor's folded ids, a folded memory's
# survivor; a restore acts on them besides setting the row.
FOLDED, MERGED_INTO = "folded", "merged_into"
