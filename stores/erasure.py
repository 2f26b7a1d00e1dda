"""Erasure (L11): confirmation tokens, the plan (what would go, per place) and the erase-then-scrub walk.

A token is bound to one user, expires, and works once: ``<expiry epoch>.<nonce><HMAC(secret,
user|expiry|nonce)>`` (16 + 32 hex digits) with the data directory's secret, so a token shown for "alice" cannot erase
"alice2", an old one cannot be replayed, and one that erased is refused the next time: the memory's shared
state (stores.shared_state) keeps a record of each used token (its signature, never the user) until well after
its expiry.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import Sequence

from .errors import InvalidInput
from .ids import validate_id
from .shared_state import SharedState, as_shared_state

# One claim per used token, keyed <expiry>.<signature> (an empty file created with O_EXCL in the data dir, a
# primary-key row in the server mode): of two processes or threads presenting the same token at once exactly one
# gets to erase.
USED_TOKENS_DIR = "erase-tokens-used"
# Records are kept this long past their token's expiry (a clock set back a little must not revive a token).
USED_TOKEN_KEEP_SECONDS = 86_400


_NONCE_HEX = 16
_TOKEN_TAIL = re.compile(r"[0-9a-f]{48}")  # the nonce, then the signature


def _signature(key: bytes, user_id: str, expiry: int, nonce: str) -> str:
    return hmac.new(key, f"erase|{user_id}|{expiry}|{nonce}".encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def make_token(key: bytes, user_id: str, ttl_seconds: int, now: float | None = None) -> tuple[str, int]:
    expiry = int((now if now is not None else time.time()) + ttl_seconds)
    nonce = secrets.token_hex(8)  # two plans in the same second give two tokens, each usable once
    return f"{expiry}.{nonce}{_signature(key, user_id, expiry, nonce)}", expiry


def check_token(key: bytes, user_id: str, token: object, now: float | None = None, *,
                consume_in: SharedState | str | os.PathLike[str] | None = None) -> None:
    """Raises InvalidInput('token', ...) unless ``token`` was made for ``user_id`` and has not expired.
    With ``consume_in`` (the memory's SharedState, or a data dir), the token is also used up there: refused if
    it was used before, by this process or any other."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 2 or not _TOKEN_TAIL.fullmatch(parts[1]):
        raise InvalidInput("token", "is not an erase confirmation token; run `erase --user ID` first")
    expiry_text, nonce, signature = parts[0], parts[1][:_NONCE_HEX], parts[1][_NONCE_HEX:]
    if not expiry_text.isdigit() or not hmac.compare_digest(signature, _signature(key, user_id, int(expiry_text), nonce)):
        raise InvalidInput("token", f"was not issued for user {user_id!r} by this data directory")
    current = now if now is not None else time.time()
    if int(expiry_text) < current:
        raise InvalidInput("token", "has expired; run `erase --user ID` again for a new one")
    if consume_in is not None:
        _use_up(consume_in, int(expiry_text), signature, current)


def _use_up(where, expiry: int, signature: str, now: float) -> None:
    state = as_shared_state(where)
    if not state.claim(USED_TOKENS_DIR, f"{expiry}.{signature}"):
        raise InvalidInput("token", "was already used to erase: a token works once; run `erase --user ID` "
                           "again for a new one")
    state.drop_claims(USED_TOKENS_DIR, [
        name for name in state.claims(USED_TOKENS_DIR)
        if name.split(".", 1)[0].isdigit() and int(name.split(".", 1)[0]) + USED_TOKEN_KEEP_SECONDS < now])


def plan(places: Sequence, user_id: str) -> dict[str, int]:
    """What erasing the user would remove, per place."""
    validate_id(user_id, "user_id")
    return {p.name: int(p.count(user_id)) for p in places}


def _erase_in(place, users: list[str]) -> int:
    """One place's erasure of these users: in one pass where the place offers it (``erase_many``, see
    stores.user_data), else user by user."""
    many = getattr(place, "erase_many", None)
    if many is not None and len(users) > 1:
        return int(many(users))
    return sum(int(place.erase(u)) for u in users)


def erase_places(places: Sequence, user_id: str, *more: str) -> dict[str, int]:
    """Erase the user (and ``more`` users) in every place, then scrub every place once (so freed bytes go too;
    a place that rewrites its files does it once for all of them); removed per place, summed over the users."""
    users = [validate_id(u, "user_id") for u in (user_id, *more)]
    removed = {p.name: _erase_in(p, users) for p in places}
    for place in places:
        place.scrub()
    return removed


# An erasure in progress, by clear id: an erasure killed half-way (kill -9, power) must be finished before
# the user's id is used again, or a flush of the thread's open turns would archive them anew. The document lives
# only while an erasure runs; the ids in it are about to be erased anyway, and it is private (a 0600 file, or a
# row of the server mode's shared state that every process's input guard reads).
IN_PROGRESS_FILE = "erasures-in-progress.json"


def erasures_in_progress(where) -> list[str]:
    """The users whose erasure is unfinished; ``where`` the memory's SharedState or a data dir."""
    return sorted(as_shared_state(where).read(IN_PROGRESS_FILE) or [])


def mark_erasure_started(where, user_id: str) -> None:
    as_shared_state(where).update(IN_PROGRESS_FILE, lambda users: sorted({*(users or []), user_id}))


def mark_erasure_finished(where, user_id: str) -> None:
    """Clear the mark; the storage is scrubbed so the id's bytes leave it with the rest of the user's data."""
    state = as_shared_state(where)
    state.update(IN_PROGRESS_FILE, lambda users: sorted(set(users or []) - {user_id}) or None)
    state.scrub()


def refuse_while_erasing(where, user_id: object) -> None:
    """InvalidInput('user_id') while an erasure of the user is unfinished."""
    if isinstance(user_id, str) and user_id in erasures_in_progress(where):
        raise InvalidInput(
            "user_id", f"{user_id!r} is being erased (an erasure was interrupted): it is finished when the memory "
            "next opens (or run `lumina-memory erase --user ID` again); nothing is ingested for this id until then"
        )
