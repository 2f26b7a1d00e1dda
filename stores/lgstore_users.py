"""Which labels of a LangGraph-store namespace name a user, and their check: the product's id rule
(stores.ids.validate_id), so the store takes no user id the rest of the product refuses.

LangGraph's convention files a user's memories as ``("memories", user_id, ...)`` (the README's example, the
test suites', langmem's): under a root of ``USER_ROOTS`` the label after the root names a user. There
``"alice\\n"``, a Cyrillic ``"аlice"``, ``"' OR 1=1 --"``, ``"alice|b"``, ``"*"`` or ``"../x"`` would be a second
namespace beside ``("memories", "alice")`` that erasing alice does not reach (erasure finds a user's items by a
label *equal* to the id: stores.places.lgstore_place), so a put, get or search naming one is refused.

Labels elsewhere stay LangGraph's free text: its own store suites (tests/upstream_store) use ``"a%b"``,
``"star*"`` or ``("users", "alice\\n")`` as plain labels. A store built with other ``user_roots`` checks those.
A delete is let through: an item written before this check must stay removable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langgraph.store.base import GetOp, Op, PutOp, SearchOp

from .errors import InvalidInput
from .ids import validate_id

USER_ROOTS: tuple[str, ...] = ("memories",)
"""First labels after which the next label is a user id."""


def user_label(namespace: Sequence[str], roots: Iterable[str] = USER_ROOTS) -> str | None:
    """The label of ``namespace`` that names a user, or None when it names none."""
    if len(namespace) >= 2 and namespace[0] in tuple(roots):
        return namespace[1]
    return None


def check_user_label(namespace: Sequence[str], field: str, roots: Iterable[str] = USER_ROOTS) -> None:
    """InvalidInput naming ``field`` when the label naming a user is not a valid user id."""
    label = user_label(namespace, roots)
    if label is None:
        return
    try:
        validate_id(label, field)
    except InvalidInput as exc:
        raise InvalidInput(field, f"its second label names a user under {namespace[0]!r} and {exc.problem}") from None


def check_op(op: Op, roots: Iterable[str] = USER_ROOTS) -> None:
    """The check for one store operation (listing namespaces names no user: its paths may hold wildcards)."""
    if isinstance(op, PutOp) and op.value is not None or isinstance(op, GetOp):
        check_user_label(op.namespace, "namespace", roots)
    elif isinstance(op, SearchOp):
        check_user_label(op.namespace_prefix, "namespace_prefix", roots)
