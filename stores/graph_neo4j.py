"""GraphStore on a Neo4j server (or anything speaking Bolt + Cypher) through the official driver.

Reads run as auto-commit queries in READ sessions (a cluster may route them to a follower); writes run
in one explicit transaction, so a failure leaves nothing half-written on Neo4j. No automatic retries
here (the driver's ``execute_*`` would retry a dead server for 30 s): an unreachable server becomes
:class:`StoreUnavailable` at once and the caller decides whether to retry.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Iterator, LiteralString, Mapping, Sequence, cast

import neo4j
from neo4j.exceptions import ConfigurationError, Neo4jError, ServiceUnavailable, SessionExpired

from . import cypher
from .errors import InvalidInput, LuminaError, StoreUnavailable
from .graph_base import CypherGraph, Rows, Step
from .settings import LuminaSettings

log = logging.getLogger("lumina.stores.graph")

# The one failure a schema statement may have: FalkorDB answers every statement it cannot run with
# this generic code (no message). Neo4j itself runs them all; any other error is real and raised.
SCHEMA_UNSUPPORTED_CODE = "Neo.DatabaseError.General.UnknownError"

_PROBE = "\\'"  # backslash + quote: see cypher.NEO4J_PARAM_PROBE


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

    def __init__(self, driver: neo4j.Driver, database: str | None = None, *, owns_driver: bool = False):
        """``database``: None selects the server's default. ``owns_driver``: close() closes it too."""
        self._driver = driver
        self._database = database
        self._owns_driver = owns_driver
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

    @classmethod
    def from_settings(cls, settings: LuminaSettings) -> "Neo4jGraph":
        if not settings.neo4j_uri:
            raise InvalidInput("neo4j_uri", "is not set; set NEO4J_URI, or leave it unset to use embedded ladybug")
        auth: tuple[str, str] | None = None
        if settings.neo4j_user:
            password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
            auth = (settings.neo4j_user, password)
        try:
            driver = neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=auth)
        except (ValueError, ConfigurationError) as exc:
            raise InvalidInput("neo4j_uri", f"{exc} (expected e.g. neo4j://host:7687 or bolt+s://host)") from exc
        try:
            return cls(driver, settings.neo4j_database, owns_driver=True)
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
        except (ServiceUnavailable, SessionExpired) as exc:
            raise StoreUnavailable("graph", f"Neo4j server not reachable ({exc})") from exc

    def _session(self, mode: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        return self._driver.session(database=self._database, default_access_mode=mode)

    def _params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return _escape_for_splicing(dict(params)) if self._falkordb else dict(params)

    def _read(self, query: str, params: Mapping[str, Any]) -> Rows:
        # cast: the driver types queries as LiteralString; ours are the constants of stores.cypher.
        with self._available(), self._session(self._read_mode) as session:
            return session.run(cast(LiteralString, query), self._params(params)).data()

    def _write(self, steps: Sequence[Step]) -> list[Rows]:
        with self._available(), self._session() as session:
            with session.begin_transaction() as tx:  # rolled back on any exception
                results = [tx.run(cast(LiteralString, q), self._params(p)).data() for q, p in steps]
                tx.commit()
        return results

    def _ensure_schema(self) -> None:
        rejected: list[str] = []
        with self._session() as session:
            for statement in cypher.NEO4J_SCHEMA:
                try:
                    session.run(cast(LiteralString, statement)).consume()
                except Neo4jError as exc:
                    if exc.code != SCHEMA_UNSUPPORTED_CODE:
                        raise
                    rejected.append(statement)
        if rejected:
            log.warning(
                "graph server rejected %d of %d schema statements with %s (FalkorDB does: it has no "
                "CREATE CONSTRAINT); continuing without those constraints/indexes: %s",
                len(rejected), len(cypher.NEO4J_SCHEMA), SCHEMA_UNSUPPORTED_CODE, "; ".join(rejected),
            )

    def _server_splices_strings(self) -> bool:
        # A WRITE session: on FalkorDB a READ one would be filed under a stray graph (see __init__).
        with self._session() as session:
            rows = session.run(cast(LiteralString, cypher.NEO4J_PARAM_PROBE), {"probe": _PROBE}).data()
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
        return f"Neo4jGraph(database={self._database!r}, falkordb_quirks={self._falkordb})"
