"""Priming (A1): what a character already remembers when it starts to answer.

Four channels — the user's profile, recent activity, related knowledge and episodes (with the knowledge bases),
matching procedures — and their items are fitted into the budget the message type gets (settings.recall_budgets),
split between the channels as the notes split it (assemble.py). The message's embedding is made once, while the
profile, recent activity, procedures and knowledge bases are read in parallel; every channel that needs it waits
for that one vector. Recall comes last and fills the room the others leave, packed as the episodes section
shows it (a time header over a segment's lines of a day), so its own packing decides what fits; a profile fact
whose messages it quotes whole is then left out, its room recall's (it would say those messages twice). A recall
already made for the turn (``recalled``) is reused: no second recall.

Threads are enough here: the stores' clients, the embedder and numpy release the GIL while they work.
"""

from __future__ import annotations

import atexit
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Sequence

from lumina_memory.nodes.costs import recorded
from lumina_memory.nodes.text.token_count import count_tokens
from lumina_memory.nodes.retrieval.packing import Refunds
from lumina_memory.nodes.retrieval.recall_run import check_query
from lumina_memory.stores.ids import validate_id

from . import channels
from .assemble import assemble, episodes_room, redundant_facts
from .budgets import total_budget
from .message_type import resolve_message_type
from .models import Primed
from .presets import preset_named

_POOL = ThreadPoolExecutor(max_workers=6, thread_name_prefix="priming")
atexit.register(_POOL.shutdown, wait=False)


class _Serial:
    """The executor interface run in the caller's thread (to measure what the threads buy)."""

    def submit(self, fn: Callable, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


def _timed(timings: dict[str, float], name: str, fn: Callable, *args, **kwargs) -> Any:
    started = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        timings[name] = round((time.perf_counter() - started) * 1000, 3)


@recorded("prime", stages=lambda primed: {k: v for k, v in primed.timings.items() if k != "total"})  # issue 49
def prime(services, user_id: str, message: str, *, message_type: str | None = None, character: str | None = None,
          now_ts: float | None = None, open_turns: Sequence[dict] | None = None, preset: str = "default",
          recalled: Sequence[dict] | None = None, purpose: str | None = None, budget: int | None = None,
          query_vector: Sequence[float] | None = None, parallel: bool = True) -> Primed:
    """The primed context for ``message`` from ``user_id``'s memory (never another user's).

    ``message_type``: greeting, question, request, heartbeat or default; None detects it (message_type.py).
    ``recalled``: recall's items for this message, when the caller already has them (retrieve_context).
    ``purpose``: recall's P6 preset when priming recalls itself (default: "question" for a question, else
    "talking"). ``budget``: overrides the message type's budget. ``open_turns``: the conversation in progress;
    it is in the prompt already, so it is not primed again (accepted for the interface's sake).
    """
    del open_turns
    started = time.perf_counter()
    validate_id(user_id, "user_id")
    check_query(message, services.settings.max_query_chars)
    kind = resolve_message_type(message, message_type)
    chosen = preset_named(preset)
    total = int(budget) if budget is not None else total_budget(services.settings, kind)
    purpose = purpose or ("question" if kind == "question" else "talking")
    pool = _POOL if parallel else _Serial()
    timings: dict[str, float] = {}

    if query_vector is not None:
        qvec: Future = Future()
        qvec.set_result(query_vector)
    else:
        qvec = pool.submit(_timed, timings, "embed", lambda: services.embedder.embed([message])[0] if message.strip() else None)
    futures = {
        "profile": pool.submit(_timed, timings, "profile", channels.profile_channel, services, user_id, message, kind, character),
        "recent": pool.submit(_timed, timings, "recent", channels.recent_channel, services, user_id, message, kind, chosen, qvec),
        "procedures": pool.submit(_timed, timings, "procedures", channels.procedure_channel, services, user_id, message, chosen),
        "kb": pool.submit(_timed, timings, "kb", channels.kb_channel, services, user_id, message, chosen, qvec),
    }
    found = {name: f.result() for name, f in futures.items()}
    if recalled is None:
        # Recall fills exactly the room the other sections leave, paying each line's pointer: its own packing
        # (merged turns, excerpts, what fits) then decides, and nothing it packs is dropped for want of room.
        # A profile fact whose messages recall packs would say them twice: it is left out, and recall packs
        # into its room as it goes (packing.Refunds). The other channels are cheap beside recall, which is the
        # critical path either way.
        room, shown, offers = episodes_room(total, found)
        shown_facts = {pointer.split(":", 1)[1] for pointer in shown if pointer.startswith("fact:")}
        refunds = Refunds(offers)
        recalled = (_timed(timings, "recall", channels.recall_items, services, user_id, message, purpose=purpose,
                           budget=room, character=character, now_ts=now_ts, query_vector=qvec,
                           shown_facts=shown_facts, refunds=refunds)
                    if message.strip() and room > 0 else [])  # a bare heartbeat asks nothing to rank by
    episodes, recalled_procedures = _timed(timings, "episodes", channels.episode_channel, services, user_id,
                                           list(recalled), chosen, qvec)
    found["episodes"] = episodes
    found["procedures"] = found["procedures"] + recalled_procedures
    sections, text = assemble(total, found, chosen, left_out=redundant_facts(found["profile"], episodes),
                             zone=services.settings.timezone)
    timings["total"] = round((time.perf_counter() - started) * 1000, 3)
    return Primed(message_type=kind, budget=total, preset=chosen.name, sections=sections, text=text,
                  tokens=count_tokens(text), timings=timings)
