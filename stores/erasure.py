"""Erasure (L11): confirmation tokens, the plan (what would go, per place) and the erase-then-scrub walk.

A token is bound to one user and expires: ``<expiry epoch>.<HMAC(secret, user|expiry)>`` with the data
directory's secret, so a token shown for "alice" cannot erase "alice2", and an old one cannot be replayed.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Sequence

from .errors import InvalidInput
from .ids import validate_id


def _signature(key: bytes, user_id: str, expiry: int) -> str:
    return hmac.new(key, f"erase|{user_id}|{expiry}".encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def make_token(key: bytes, user_id: str, ttl_seconds: int, now: float | None = None) -> tuple[str, int]:
    expiry = int((now if now is not None else time.time()) + ttl_seconds)
    return f"{expiry}.{_signature(key, user_id, expiry)}", expiry


def check_token(key: bytes, user_id: str, token: object, now: float | None = None) -> None:
    """Raises InvalidInput('token', ...) unless ``token`` was made for ``user_id`` and has not expired."""
    if not isinstance(token, str) or token.count(".") != 1:
        raise InvalidInput("token", "is not an erase confirmation token; run `erase --user ID` first")
    expiry_text, signature = token.split(".")
    if not expiry_text.isdigit() or not hmac.compare_digest(signature, _signature(key, user_id, int(expiry_text))):
        raise InvalidInput("token", f"was not issued for user {user_id!r} by this data directory")
    if int(expiry_text) < (now if now is not None else time.time()):
        raise InvalidInput("token", "has expired; run `erase --user ID` again for a new one")


def plan(places: Sequence, user_id: str) -> dict[str, int]:
    """What erasing the user would remove, per place."""
    validate_id(user_id, "user_id")
    return {p.name: int(p.count(user_id)) for p in places}


def erase_places(places: Sequence, user_id: str) -> dict[str, int]:
    """Erase the user in every place, then scrub every place (so freed bytes go too); removed per place."""
    validate_id(user_id, "user_id")
    removed = {p.name: int(p.erase(user_id)) for p in places}
    for place in places:
        place.scrub()
    return removed
