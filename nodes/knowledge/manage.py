"""What a user (or an operator for them) reads of their knowledge: current facts, or the whole history.

The ``--json`` fields of `lumina-memory knowledge` are fixed (scripts depend on them): ``JSON_FIELDS``, plus
``polarity`` (a negative item records that something is no longer so), ``episode_ids``, ``event_date`` and
``importance`` (P3, nodes.knowledge.importance), ``forgotten_at`` (None: remembered; a forgotten item is
listed with ``--all`` only: the record keeps it, recall no longer finds it, nodes.knowledge.forgetting),
``note`` (why it is merged, coexisting, superseded or under review), ``derived_from`` (the items it rests on)
and ``contradicts`` (the items it contradicted when said; which won: their ``superseded_by``), F6.
Times are epoch seconds, as in `lumina-memory memories`.
"""

from __future__ import annotations

from typing import Any

from lumina_memory.stores.ids import validate_id

from .importance import knowledge_importance

JSON_FIELDS = ("item_id", "subject", "attribute", "value", "text", "status", "valid_from", "valid_to",
               "superseded_by", "confidence", "source_ids", "source_turn_ids", "method")
EXTRA_FIELDS = ("polarity", "episode_ids", "event_date", "importance", "forgotten_at", "note", "derived_from",
                "contradicts")


def list_knowledge(services, user_id: str, *, history: bool = False) -> list[dict[str, Any]]:
    """The user's current knowledge items (``history``: superseded and merged ones too), oldest first."""
    rows = services.stores.archive.knowledge.items(validate_id(user_id, "user_id"), history=history)
    out = []
    for r in rows:
        item = {k: r[k] for k in JSON_FIELDS}
        item.update(source_ids=list(r["source_ids"] or []), source_turn_ids=list(r["source_turn_ids"] or []),
                    polarity=r["polarity"], episode_ids=list(r["episode_ids"] or []),
                    event_date=r["event_date"].isoformat() if r["event_date"] else None,
                    importance=knowledge_importance(r["attribute"], r["value"], r["text"]),
                    forgotten_at=r["forgotten_at"], note=r["note"] or "", derived_from=list(r["derived_from"] or []),
                    contradicts=list(r["contradicts"] or []))
        out.append(item)
    return out
