"""Turn reads kept in the archive and in index snapshots are loaded as current while their reader key
(turn_reads.reader: READ_VERSION, tokeniser, passage window) matches. A change to how long turns are cut into
passages must change READ_VERSION too: otherwise reads cut the old way load as current, the passage channel ranks
passages the code no longer cuts, and the packer reads every long candidate's passages itself on each query."""

from __future__ import annotations

import hashlib

from lumina_memory.nodes.retrieval.turn_reads import READ_VERSION
from lumina_memory.nodes.text.passages import passage_spans
from lumina_memory.stores.settings import LuminaSettings

CUTS = {6: "4aeec7f5"}
"""READ_VERSION -> the first hex digits of the digest of ``_cut()``: when the cut changes, raise READ_VERSION and
record the new digest under it."""


def _cut() -> str:
    settings = LuminaSettings()
    paragraph = " ".join(f"Step {k} moves the staging port to {k}0 and restarts the service." for k in range(12))
    text = ("Assistant: " + "\n\n".join([paragraph, "Note: ports below 1024 need root.", paragraph])
            + "\n```bash\nmake deploy && make check\n```\n" + paragraph)
    spans = passage_spans(text, settings.recall_passage_tokens, settings.recall_passage_min_tokens)
    return hashlib.sha256(repr(spans).encode()).hexdigest()[:8]


def test_the_passage_cut_belongs_to_the_reads_version():
    assert CUTS.get(READ_VERSION) == _cut(), (
        f"passages are cut differently than under READ_VERSION {READ_VERSION}: raise READ_VERSION "
        f"(nodes/retrieval/turn_reads.py) and record {_cut()!r} under it in CUTS")
