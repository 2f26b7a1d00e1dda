"""S7 for the LangGraph store: item values and search queries are redacted before LuminaStore stores,
indexes or embeds them (``lumina_memory.graphs.lumina_store.make_store`` builds this class when ``pii_redaction`` is on).

A subclass rather than a hook inside ``stores``: ``stores`` imports nothing from ``nodes``, and every
operation — ``put``/``aput``/``search``/``abatch`` — goes through ``batch``, which checks each op
(ids, size limits) and then hands it to ``_prepare``. Keys and namespace labels are
left as they are (they are identifiers the caller reads back by, not text).
"""

from __future__ import annotations

from typing import Iterable

from langgraph.store.base import Op, PutOp, SearchOp

from lumina_memory.stores.langgraph_store import LuminaStore

from .text.redact import KINDS, redact_text, redact_value


class RedactingStore(LuminaStore):
    __slots__ = ("pii_kinds",)

    def __init__(self, *args, pii_kinds: Iterable[str] = KINDS, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.pii_kinds = tuple(pii_kinds)

    def _prepare(self, op: Op) -> Op:
        if isinstance(op, PutOp) and isinstance(op.value, dict):
            return op._replace(value=redact_value(op.value, self.pii_kinds))
        if isinstance(op, SearchOp) and isinstance(op.query, str):
            return op._replace(query=redact_text(op.query, self.pii_kinds))
        return op
