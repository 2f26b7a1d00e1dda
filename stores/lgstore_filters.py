"""``filter=`` of the LangGraph store (stores.langgraph_store): which item values a search keeps.

The semantics of LangGraph's stores: each filter key names a field, its condition is a value compared as
JSON (nested dicts field by field, lists element by element) or operators ``$eq $ne $gt $gte $lt $lte``;
every key must hold. A dotted key addresses a nested field (``{"user.role": "admin"}`` reads
``value["user"]["role"]``), as the SQLite and Postgres stores do; a field whose own name has a dot is still
found by that name first. Comparisons order two numbers, or two strings; anything else (a missing field, a
number against a string) satisfies no comparison. Filters are evaluated here, in Python, on the decoded
values — no key or value ever becomes query text, so any key is safe to pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import InvalidInput

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_MISSING = object()


def field(value: Mapping[str, Any], key: str) -> Any:
    """The field ``key`` of ``value``: itself if present, else the nested path of its dotted parts
    (None when absent — a missing field equals None, as in LangGraph's InMemoryStore)."""
    found = value.get(key, _MISSING)
    if found is not _MISSING:
        return found
    if "." not in key:
        return None
    node: Any = value
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def keeps(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """Whether an item whose value is ``value`` passes ``flt`` (None or {}: every item does)."""
    return not flt or all(matches(field(value, key), condition) for key, condition in flt.items())


def check(flt: Any) -> None:
    """InvalidInput naming ``filter`` for a filter that is not a mapping or uses an unknown operator."""
    if flt is None:
        return
    if not isinstance(flt, Mapping):
        raise InvalidInput("filter", f"must be a mapping of field names to conditions, got {type(flt).__name__}")
    for key, condition in flt.items():
        if not isinstance(key, str):
            raise InvalidInput("filter", f"keys must be field names (strings), got {key!r}")
        _check_condition(condition)


def _check_condition(condition: Any) -> None:
    if isinstance(condition, Mapping):
        operators = [k for k in condition if isinstance(k, str) and k.startswith("$")]
        for op in operators:
            if op not in OPERATORS:
                raise InvalidInput("filter", f"unsupported operator {op!r}; use {' '.join(OPERATORS)}")
        if operators and len(operators) != len(condition):
            raise InvalidInput("filter", f"a condition mixes operators and field names: {sorted(map(str, condition))}")
        if not operators:
            for nested in condition.values():
                _check_condition(nested)


def matches(value: Any, condition: Any) -> bool:
    if isinstance(condition, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in condition):
            return all(_compare(value, op, target) for op, target in condition.items())
        return isinstance(value, Mapping) and all(matches(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(condition)
            and all(matches(a, b) for a, b in zip(value, condition))
        )
    return value == condition


def _compare(value: Any, op: str, target: Any) -> bool:
    if op == "$eq":
        return matches(value, target)
    if op == "$ne":
        return not matches(value, target)
    if _is_number(value) and _is_number(target):
        a, b = float(value), float(target)
    elif isinstance(value, str) and isinstance(target, str):
        a, b = value, target
    else:
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)
