"""The values the graph adapters take and give, checked once: ids, limits, scores, concept names, typed
relations and knowledge nodes (a caller's bad input is a named InvalidInput before any statement runs)."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from . import cypher, ids
from .errors import InvalidInput
from .records import KnowledgeNode

CONCEPT_FAN = 50  # segments read per query concept at most (see cypher.SEGMENTS_FOR_CONCEPT)

Params = dict[str, Any]
Step = tuple[str, Params]
Rows = list[dict[str, Any]]


def _finite(value: object, field: str) -> float:
    # NaN/inf would poison ORDER BY and are not storable on every backend (FalkorDB rejects inf).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(field, f"must be a finite number, got {value!r}")
    return float(value)


_NO_USER = "lumina-prepare-no-such-user"  # valid as a user and a segment id; never created


def _fan(limit: int) -> int:
    """Segments read per query concept for a lookup of ``limit`` segments (see cypher.SEGMENTS_FOR_CONCEPT)."""
    return max(CONCEPT_FAN, 10 * limit)


def _limit(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput("limit", f"must be a non-negative integer, got {value!r}")
    return value


def _segment_ids(values: Sequence[str], field: str = "segment_ids") -> list[str]:
    if isinstance(values, str):  # a bare string is a Sequence too; iterating it would yield letters
        raise InvalidInput(field, "must be a list of segment ids, not a single string")
    return list(dict.fromkeys(ids.validate_id(v, field) for v in values))


def _concept_names(values: Sequence[str]) -> list[str]:
    if isinstance(values, str):
        raise InvalidInput("concepts", "must be a list of names, not a single string")
    names: list[str] = []
    for name in values:
        if not isinstance(name, str):
            raise InvalidInput("concepts", f"names must be strings, got {type(name).__name__}")
        if name.strip():  # kept verbatim; only blank names are meaningless and skipped
            try:
                name.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate: no engine stores it, and ids hash its bytes
                raise InvalidInput("concepts", f"{name!r} is not valid UTF-8 text ({exc.reason})") from None
            names.append(name)
    return list(dict.fromkeys(names))


def _relation_rows(relations: Sequence[tuple[str, str, str, float]]) -> dict[tuple[str, str, str], float]:
    """Validated relations keyed by (src, dst, kind); a relation listed twice or a memory related to
    itself is a caller's bug in the set it mirrors, and refused."""
    if isinstance(relations, (str, Mapping)):
        raise InvalidInput("relations", "must be a list of (src, dst, kind, score) tuples")
    rows: dict[tuple[str, str, str], float] = {}
    for item in relations:
        if not isinstance(item, (tuple, list)) or len(item) != 4:
            raise InvalidInput("relations", f"items must be (src, dst, kind, score), got {str(item)[:80]!r}")
        src = ids.validate_id(item[0], "relations.src")
        dst = ids.validate_id(item[1], "relations.dst")
        kind = item[2]
        if not isinstance(kind, str) or kind not in cypher.RELATION_EDGES:
            raise InvalidInput("relations.kind", f"{str(kind)[:40]!r}: expected one of {list(cypher.RELATION_KINDS)}")
        if src == dst:
            raise InvalidInput("relations", f"{src!r} cannot be related to itself")
        key = (src, dst, kind)
        if key in rows:
            raise InvalidInput("relations", f"{key!r} is listed twice")
        rows[key] = _finite(item[3], "relations.score")
    return rows


def _single_count(rows: Rows) -> int:
    return int(rows[0]["n"]) if rows else 0


def _knowledge_rows(nodes: Sequence[KnowledgeNode]) -> list[KnowledgeNode]:
    if isinstance(nodes, (str, Mapping)):
        raise InvalidInput("items", "must be a list of knowledge items")
    checked: dict[str, KnowledgeNode] = {}
    for node in nodes:
        if not isinstance(node, KnowledgeNode):
            raise InvalidInput("items", f"items must be KnowledgeNode, got {type(node).__name__}")
        item_id = ids.validate_id(node.item_id, "item_id")
        for field in ("subject", "attribute", "value", "polarity", "status"):
            value = getattr(node, field)
            if not isinstance(value, str) or not value:
                raise InvalidInput(field, "must be a non-empty string")
        if item_id in checked:
            raise InvalidInput("items", f"{item_id!r} is listed twice")
        checked[item_id] = node._replace(episode_ids=_segment_ids(node.episode_ids, "episode_ids"))
    return list(checked.values())


def _properties(node: KnowledgeNode) -> Params:
    return {"id": node.item_id, "subject": node.subject, "attribute": node.attribute, "value": node.value,
            "polarity": node.polarity, "status": node.status}
