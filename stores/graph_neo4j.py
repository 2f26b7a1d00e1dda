"""GraphStore on a Neo4j server (or anything speaking Bolt + Cypher) through the official driver.

Reads run as auto-commit queries in READ sessions (a cluster may route them to a follower); writes run
in one explicit transaction, so a failure leaves nothing half-written on Neo4j. No automatic retries
here (the driver's ``execute_*`` would retry a dead server for 30 s): an unreachable server becomes
:class:`StoreUnavailable` at once and the caller decides whether to retry.

Every call is bounded by ``graph_timeout_seconds``, also against a *frozen* server (a stopped process,
a hung host whose kernel still accepts and acknowledges): the driver bounds connecting and taking a
connection from its pool, and Neo4j bounds the transaction server-side, but the driver has no
client-side read timeout (only one a server may announce at HELLO), so a query sent to a frozen
server would wait forever. Each call therefore runs in a helper thread the caller waits for at most
the timeout; one that overruns is abandoned and its connection killed (see ``_bounded``).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, LiteralString, Mapping, Sequence, TypeVar, cast
from urllib.parse import urlsplit

import neo4j
from neo4j.exceptions import (
    ConfigurationError,
    ConnectionAcquisitionTimeoutError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from . import cypher
from .errors import InvalidInput, LuminaError, StoreUnavailable
from .graph_base import CypherGraph, Rows, Step
from .settings import LuminaSettings

log = logging.getLogger("lumina.stores.graph")

# The one failure a schema statement may have: FalkorDB answers every statement it cannot run with
# this generic code (no message). Neo4j itself runs them all; any other error is real and raised.
SCHEMA_UNSUPPORTED_CODE = "Neo.DatabaseError.General.UnknownError"

_PROBE = "\\'"  # backslash + quote: see cypher.NEO4J_PARAM_PROBE

# FalkorDB 4.16's Bolt endpoint, splicing parameters into the query text, crashes (stack smashing, the whole
# server) once that text passes ~4 KB (measured: a 4,000-byte string parameter passes, 4,500 kills it; so do
# 100 uuids in one list). Statements with lists (knowledge items, graph_base.max_params_bytes) stay well below.
FALKORDB_MAX_PARAMS_BYTES = 2_048

DEFAULT_TIMEOUT_SECONDS: float = LuminaSettings.model_fields["graph_timeout_seconds"].default
CALL_THREAD_NAME = "lumina-graph-call"  # abandoned calls can be told apart (tests look for leftovers)
_REAP_POLL_SECONDS = 0.05

T = TypeVar("T")


def _timed_out(exc: BaseException) -> bool:
    """Whether a driver error was a wait that ran out (a TimeoutError somewhere in its causes), not a refusal."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, TimeoutError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def bounded_driver_config(timeout: float) -> dict[str, float]:
    """Driver settings that keep each of the driver's own waits within ``timeout`` seconds. Only
    ``max_transaction_retry_time`` is unused here (managed transactions retry; we do not), bounded
    all the same. ``liveness_check_timeout`` stays unset: a liveness check is one more round trip per
    call and adds nothing against a frozen server, which our per-call bound already covers."""
    return {
        "connection_timeout": timeout,
        "connection_acquisition_timeout": timeout,
        "connection_write_timeout": timeout,
        "max_transaction_retry_time": timeout,
    }


def server_name(uri: str) -> str:
    """``scheme://host:port`` of a Bolt URI for messages: no credentials, no routing context."""
    parts = urlsplit(uri)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or '?'}{port}"


class _Outcome:
    """What a call's helper thread hands back: a value or the exception it raised."""

    __slots__ = ("value", "error")

    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None


def _kill_connection(session: neo4j.Session) -> None:
    """Kill the session's connection, if it holds one: no GOODBYE, the socket is shut down, which wakes
    a read blocked on it, and the driver then marks the connection defunct, so the pool drops it
    instead of handing a stuck connection to the next call. The driver has no public handle on a
    session's connection, hence the private attribute."""
    connection = getattr(session, "_connection", None)
    if connection is not None:
        connection.kill()


def _reap(session: neo4j.Session, worker: threading.Thread, patience: float) -> None:
    """Kill the abandoned call's connection until its thread ends: it may still have been taking a
    connection when abandoned (bounded by the driver's acquisition timeout) and block on it next. A call
    that completes instead hands its connection back to the pool a moment before the session forgets
    it; a kill landing just then costs the next call on that connection a StoreUnavailable (its
    writes wait in the outbox), never a wrong result."""
    deadline = time.monotonic() + patience
    while worker.is_alive():
        _kill_connection(session)
        worker.join(_REAP_POLL_SECONDS)
        if time.monotonic() > deadline:
            log.error("an abandoned graph call is still blocked after %.0f s; its thread is left behind", patience)
            return


def _escape_for_splicing(value: Any) -> Any:
    """Undo what a parameter-splicing server does to strings: it wraps them in '...' and reads
    backslash escapes, so escaping backslash and quote makes every string arrive verbatim."""
    if isinstance(value, str):
        if "\x00" in value:  # such a server cuts the query text at NUL; refuse rather than mangle
            raise InvalidInput("text", "NUL characters cannot be stored on this graph server")
        return value.replace("\\", "\\\\").replace("'", "\\'")
    if isinstance(value, list):
        return [_escape_for_splicing(v) for v in value]
    if isinstance(value, dict):
        return {k: _escape_for_splicing(v) for k, v in value.items()}
    return value


class Neo4jGraph(CypherGraph):
    backend = "neo4j"

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str | None = None,
        *,
        owns_driver: bool = False,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        server: str = "Neo4j server",
    ):
        """``database``: None selects the server's default. ``owns_driver``: close() closes it too.
        ``timeout``: the longest any one call waits (build the driver with ``bounded_driver_config``
        of the same value, as ``from_settings`` does). ``server``: how messages name the server."""
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise InvalidInput("graph_timeout_seconds", f"must be a finite number of seconds > 0, got {timeout!r}")
        self._driver = driver
        self._database = database
        self._owns_driver = owns_driver
        self._timeout = float(timeout)
        self._server = server
        self._closed = False
        self._falkordb = False
        self._read_mode = neo4j.READ_ACCESS
        with self._available():
            self._ensure_schema()
            self._falkordb = self._server_splices_strings()
        if self._falkordb:
            # FalkorDB 4.16's Bolt endpoint names the graph after the first *key* of a message's
            # extra map: a named database lands in graph "db", a READ session in graph "mode", an
            # explicit transaction in "falkordb". Only no database + WRITE sessions keep one graph.
            if database is not None:
                self._closed = True
                raise InvalidInput(
                    "neo4j_database",
                    f"{database!r} cannot be honoured by FalkorDB's Bolt endpoint (it splits named "
                    "databases across fixed graphs); leave it unset",
                )
            self._read_mode = neo4j.WRITE_ACCESS
            self.max_params_bytes = FALKORDB_MAX_PARAMS_BYTES

    @classmethod
    def from_settings(cls, settings: LuminaSettings) -> "Neo4jGraph":
        if not settings.neo4j_uri:
            raise InvalidInput("neo4j_uri", "is not set; set NEO4J_URI, or leave it unset to use embedded ladybug")
        auth: tuple[str, str] | None = None
        if settings.neo4j_user:
            password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
            auth = (settings.neo4j_user, password)
        timeout = settings.graph_timeout_seconds
        try:
            driver = neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=auth, **bounded_driver_config(timeout))
        except (ValueError, ConfigurationError) as exc:
            raise InvalidInput("neo4j_uri", f"{exc} (expected e.g. neo4j://host:7687 or bolt+s://host)") from exc
        try:
            return cls(driver, settings.neo4j_database, owns_driver=True, timeout=timeout,
                       server=server_name(settings.neo4j_uri))
        except BaseException:
            driver.close()
            raise

    @property
    def falkordb_quirks(self) -> bool:
        """True when the server splices string parameters into the query text, as FalkorDB's Bolt
        endpoint does; strings are then escaped and reads use WRITE sessions (see __init__)."""
        return self._falkordb

    # --- plumbing ----------------------------------------------------------------------------------
    @contextmanager
    def _available(self) -> Iterator[None]:
        if self._closed:
            raise StoreUnavailable("graph", "this Neo4jGraph is closed")
        try:
            yield
        except ConnectionAcquisitionTimeoutError as exc:
            raise StoreUnavailable("graph", self._overran(f"driver: {exc}")) from exc
        except (ServiceUnavailable, SessionExpired) as exc:
            if _timed_out(exc):
                # A connect whose handshake was never answered (the kernel accepted it): the server is there and
                # silent, as when frozen. The driver's connect deadline and our bound are the same timeout and
                # race, so which one fires must not decide what the caller is told.
                raise StoreUnavailable("graph", self._overran(f"driver: {exc}")) from exc
            raise StoreUnavailable("graph", f"{self._server} not reachable ({exc})") from exc

    def _overran(self, detail: str) -> str:
        return (f"{self._server} did not answer within {self._timeout:g} s (graph_timeout_seconds, "
                f"LUMINA_GRAPH_TIMEOUT_SECONDS): frozen or overloaded? ({detail})")

    def _bounded(self, work: Callable[[neo4j.Session], T], mode: str = neo4j.WRITE_ACCESS) -> T:
        """``work`` on a session of its own, in a helper thread the caller waits for at most the
        timeout (why: see the module docstring). An overrun is abandoned: its connection is killed
        (the pool never hands it out again) and StoreUnavailable raised, so the write waits in the
        outbox. Should the server still complete an abandoned write, the outbox's retry repeats it:
        every write is an idempotent MERGE."""
        session = self._driver.session(database=self._database, default_access_mode=mode)
        outcome = _Outcome()

        def call() -> None:
            try:
                with session:
                    outcome.value = work(session)
            except BaseException as exc:  # handed to the caller, who raises it
                outcome.error = exc

        worker = threading.Thread(target=call, name=CALL_THREAD_NAME, daemon=True)
        worker.start()
        worker.join(self._timeout)
        if worker.is_alive():
            _kill_connection(session)
            # The driver's own deadlines are the timeout too, so the thread ends soon; a reaper
            # makes sure no connection it takes meanwhile stays blocked.
            patience = max(60.0, 10 * self._timeout)
            threading.Thread(target=_reap, args=(session, worker, patience), name=CALL_THREAD_NAME, daemon=True).start()
            raise StoreUnavailable("graph", self._overran("call abandoned, its connection closed"))
        if outcome.error is not None:
            raise outcome.error
        return cast(T, outcome.value)

    def _tx_timeout(self) -> float | None:
        # Neo4j also ends the transaction server-side. Not sent to FalkorDB: it files a query whose
        # extra map starts with tx_timeout under a graph named "tx_timeout" (see __init__).
        return None if self._falkordb else self._timeout

    def _params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return _escape_for_splicing(dict(params)) if self._falkordb else dict(params)

    def _read(self, query: str, params: Mapping[str, Any]) -> Rows:
        # cast: the driver types queries as LiteralString; ours are the constants of stores.cypher.
        statement = neo4j.Query(cast(LiteralString, query), timeout=self._tx_timeout())
        values = self._params(params)
        with self._available():
            return self._bounded(lambda session: session.run(statement, values).data(), self._read_mode)

    def _write(self, steps: Sequence[Step]) -> list[Rows]:
        prepared = [(cast(LiteralString, q), self._params(p)) for q, p in steps]

        def transaction(session: neo4j.Session) -> list[Rows]:
            with session.begin_transaction(timeout=self._tx_timeout()) as tx:  # rolled back on any exception
                results = [tx.run(q, p).data() for q, p in prepared]
                tx.commit()
            return results

        with self._available():
            return self._bounded(transaction)

    def _ensure_schema(self) -> None:
        def is_rejected(statement: str) -> bool:
            try:
                self._bounded(lambda session: session.run(cast(LiteralString, statement)).consume())
            except Neo4jError as exc:
                if exc.code != SCHEMA_UNSUPPORTED_CODE:
                    raise
                return True
            return False

        rejected = [statement for statement in cypher.NEO4J_SCHEMA if is_rejected(statement)]
        if rejected:
            log.warning(
                "graph server rejected %d of %d schema statements with %s (FalkorDB does: it has no "
                "CREATE CONSTRAINT); continuing without those constraints/indexes: %s",
                len(rejected), len(cypher.NEO4J_SCHEMA), SCHEMA_UNSUPPORTED_CODE, "; ".join(rejected),
            )

    def _server_splices_strings(self) -> bool:
        # A WRITE session: on FalkorDB a READ one would be filed under a stray graph (see __init__).
        probe = cast(LiteralString, cypher.NEO4J_PARAM_PROBE)
        rows = self._bounded(lambda session: session.run(probe, {"probe": _PROBE}).data())
        got = rows[0].get("probe") if rows else None
        if got == _PROBE:
            return False
        if got == "'":
            log.warning(
                "graph server splices string parameters into the query text instead of binding them "
                "(FalkorDB's Bolt endpoint does); escaping every string parameter to keep values verbatim "
                "and reading through WRITE sessions"
            )
            return True
        raise LuminaError(
            f"graph server returned {got!r} for the string parameter {_PROBE!r}: it neither binds nor "
            "splices parameters the known way, so nothing is written to it"
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._owns_driver:
            self._driver.close()

    def __repr__(self) -> str:
        return (f"Neo4jGraph(server={self._server!r}, database={self._database!r}, timeout={self._timeout:g}, "
                f"falkordb_quirks={self._falkordb})")
