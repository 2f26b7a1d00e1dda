"""The server mode's LangGraph checkpoints are bounded like every other PostgreSQL session (stores.pg_watchdog and
the server's statement_timeout): with every process of a private server SIGSTOPped, opening the checkpointer,
reading a thread, writing one and the checkpoints place's own sessions fail as the named StoreUnavailable within
their bound (the observation window is ten times the timeout), and once the server runs again the same objects
answer. The paused server is this test process's own (tests.test_server_bounds' ``server``), so pausing it stops
nobody else."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from lumina_memory.stores.places.checkpoints_pg import CheckpointsPgPlace, PgCheckpoints

from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from .test_server_bounds import TIMEOUT, _fails_by_name, _paused_outcome, server, uri  # noqa: F401 - fixtures

TIER = "checkpoints"


class _State(TypedDict):
    turns: Annotated[list[str], operator.add]


def _graph(saver):
    """A one-node graph whose every run appends its turn to the thread's state, checkpointed by ``saver``."""
    builder = StateGraph(_State)
    builder.add_node("keep", lambda state: {})
    builder.add_edge(START, "keep")
    builder.add_edge("keep", END)
    return builder.compile(checkpointer=saver)


def _config(user: str) -> dict:
    return {"configurable": {"thread_id": f"user:{user}"}}


def test_opening_the_checkpoints_on_a_paused_server_fails_by_name_within_its_bound(server, uri):
    PgCheckpoints(uri, TIMEOUT).close()  # the saver's tables exist: only the connection itself is tried below
    _fails_by_name(_paused_outcome(server, uri, lambda: PgCheckpoints(uri, TIMEOUT)), TIER)
    opened = PgCheckpoints(uri, TIMEOUT)
    try:
        assert opened.threads() == []
    finally:
        opened.close()


def test_reading_and_writing_a_thread_fail_by_name_within_their_bound_and_recover(server, uri):
    checkpoints = PgCheckpoints(uri, TIMEOUT)
    graph = _graph(checkpoints.saver)
    try:
        graph.invoke({"turns": ["mio: first"]}, _config("mio"))
        _fails_by_name(_paused_outcome(server, uri, lambda: graph.get_state(_config("mio"))), TIER)
        _fails_by_name(_paused_outcome(server, uri, lambda: graph.invoke({"turns": ["mio: lost"]}, _config("mio"))),
                       TIER)
        _fails_by_name(_paused_outcome(server, uri, checkpoints.threads), TIER)
        # The same checkpointer connects anew: nothing written during the pause, the next turn kept.
        assert graph.get_state(_config("mio")).values["turns"] == ["mio: first"]
        graph.invoke({"turns": ["mio: second"]}, _config("mio"))
        assert graph.get_state(_config("mio")).values["turns"] == ["mio: first", "mio: second"]
        assert checkpoints.threads() == ["user:mio"]
    finally:
        checkpoints.close()


def test_the_checkpoints_place_fails_by_name_within_its_bound_and_recovers(server, uri):
    checkpoints = PgCheckpoints(uri, TIMEOUT)
    try:
        for user in ("mio", "ren"):
            _graph(checkpoints.saver).invoke({"turns": [f"{user}: hello"]}, _config(user))
    finally:
        checkpoints.close()
    place = CheckpointsPgPlace(uri, TIMEOUT)
    _fails_by_name(_paused_outcome(server, uri, lambda: place.count("mio")), TIER)
    _fails_by_name(_paused_outcome(server, uri, lambda: place.erase("mio")), TIER)
    assert place.count("mio") == 1  # the paused erasure deleted nothing
    assert place.erase("mio") == 1
    assert (place.count("mio"), place.count("ren")) == (0, 1)  # the other user's thread is untouched
