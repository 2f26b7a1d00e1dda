"""The part of a user's memory one recall may reach (S4): a character's and a session's memories.

A memory is a segment (a topic's stretch of a conversation). It is **a character's** when that character spoke in it
(the segment's ``characters``: its speakers other than the user, as stores.models.SegmentRecord builds them); it
belongs to **a session** when it lies in that run of the user's conversation with no idle gap longer than
``boundary_idle_seconds`` (A5's session boundary, 10 minutes) between its segments. A session is named by its first
segment's id (``sessions``), so an item's ``segment_id`` leads to its session through ``session_of``.

Recall narrows every channel to the scope (nodes.retrieval.recall_stages): the turn channels' rankings, the segment
channels' scores (keyword, graph, mid-term, relations), the fused relevance (so no neighbour's share crosses it) and
the segments a reply's dense search reads. What the index does not hold (a mid-term segment not yet archived) is
outside any narrowed scope: it cannot be shown to be in it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lumina_memory.stores.errors import InvalidInput


@dataclass(frozen=True)
class Session:
    """One session of a user's conversation: its id (its first segment's), its time span and its segments."""

    session_id: str
    start_ts: float
    end_ts: float
    segment_ids: tuple[str, ...]


@dataclass(frozen=True)
class Scope:
    """What one recall may reach: ``turns`` (a mask over the index's turns) and ``segments`` (their ids); None for
    the whole of the user's memory."""

    turns: np.ndarray
    segments: frozenset[str]

    def keep_turns(self, ranking: list[int]) -> list[int]:
        return [i for i in ranking if self.turns[i]]

    def keeps_segment(self, segment_id: str) -> bool:
        return segment_id in self.segments


def segment_characters(index) -> dict[str, frozenset[str]]:
    """segment_id -> the characters who spoke in it (its turns' speakers other than the user), from the index."""
    speakers = index.turns.column("speaker")
    return {seg: frozenset(speakers[i] for i in members if speakers[i] != "user")
            for seg, members in index.members.items()}


def sessions(index, idle_seconds: float) -> list[Session]:
    """The user's sessions in conversation order: a new one starts where a segment begins more than
    ``idle_seconds`` after the one before it ended."""
    spans = []
    for seg in index.segment_ids:
        members = index.members[seg]
        times = index.ts[list(members)]
        spans.append((seg, float(times.min()), float(times.max())))
    spans.sort(key=lambda s: (s[1], index.segment_code[s[0]]))
    out: list[Session] = []
    current: list[tuple[str, float, float]] = []
    for span in spans:
        if current and span[1] - max(c[2] for c in current) > idle_seconds:
            out.append(_session(current))
            current = []
        current.append(span)
    if current:
        out.append(_session(current))
    return out


def _session(spans: list[tuple[str, float, float]]) -> Session:
    return Session(spans[0][0], spans[0][1], max(s[2] for s in spans), tuple(s[0] for s in spans))


def session_of(index, segment_id: str, idle_seconds: float) -> str | None:
    """The id of the session ``segment_id`` belongs to; None when the index does not hold that segment."""
    for session in sessions(index, idle_seconds):
        if segment_id in session.segment_ids:
            return session.session_id
    return None


def scope_of(index, character: str | None, session: str | None, idle_seconds: float) -> Scope | None:
    """The scope of a recall narrowed to ``character`` and/or ``session`` (None: not narrowed). A session id the
    index does not hold is a clear error (InvalidInput("session")), never an empty recall that looks like
    "nothing remembered"."""
    if character is None and session is None:
        return None
    allowed = set(index.segment_ids)
    if character is not None:
        by_segment = segment_characters(index)
        allowed = {seg for seg in allowed if character in by_segment[seg]}
    if session is not None:
        found = next((s for s in sessions(index, idle_seconds) if s.session_id == session), None)
        if found is None:
            raise InvalidInput("session", f"{session!r} is no session of this user (sessions are named by their "
                                          "first segment's id)")
        allowed &= set(found.segment_ids)
    mask = np.zeros(len(index.turns), dtype=bool)
    for seg in allowed:
        mask[list(index.members[seg])] = True
    return Scope(mask, frozenset(allowed))
