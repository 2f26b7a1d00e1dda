"""Mid-term tier on Redis/Valkey: one hash per segment plus a per-user sorted set of recent segment ids.

Only hashes, sorted sets, TTLs, SCAN and MULTI/WATCH are used, and all of a user's keys share one hash
tag, so the same code runs on the embedded server, a managed Redis, Valkey and Redis Cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

from urllib.parse import urlsplit

import redis
import redis.cluster
from redis.backoff import NoBackoff
from redis.retry import Retry
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from . import ids
from .errors import InvalidInput, StoreUnavailable
from .midterm_records import SIGNAL_FIELDS, decode_segment, decode_signal, encode_segment, redact_url, text as _text
from .models import SegmentRecord
from .records import RecentSignal
from .redis_server import ensure_server
from .redis_tls import tls_failure, tls_options
from .settings import LuminaSettings, default_settings

TIER = "mid-term"
_CONN_ERRORS = (redis.ConnectionError, redis.TimeoutError)
_SCAN_COUNT = 1000
_DELETE_CHUNK = 500
_T = TypeVar("_T")


def _cluster_enabled(url: str, options: dict[str, Any]) -> bool:
    """Whether the server at REDIS_URL runs in cluster mode (one INFO on a connection of its own when the
    store opens). Unreachable now: a plain client, and the first call says the server is unavailable."""
    probe = redis.Redis.from_url(url, **options)
    try:
        return int(probe.info("cluster").get("cluster_enabled", 0)) == 1
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
        return False
    finally:
        probe.close()


def _describe(client: redis.Redis) -> str:
    kwargs = client.connection_pool.connection_kwargs
    if kwargs.get("path"):
        return f"unix://{kwargs['path']}"
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"


class RedisMidTerm:
    """``MidTermStore`` over a ``redis.Redis`` client."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        backend: str = "redis",
        revive: Callable[[], object] | None = None,
        where: str | None = None,
    ) -> None:
        self._client = client
        self.backend = backend
        self._revive = revive
        self._where = where or _describe(client)
        self.on_reconnect: Callable[[], object] | None = None
        """Called once a call succeeded after connection errors (a restarted server may have lost
        records: the caller compares with the archive and re-puts them)."""
        self._reconnecting = False
        self._in_hook = False
        # redis-py reconnects a pooled connection silently when the server went away between two calls
        # (a restart): count connections, and treat every one after the first as a reconnect to check.
        self._connects = 0
        kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", None)
        if isinstance(kwargs, dict) and "redis_connect_func" not in kwargs:
            kwargs["redis_connect_func"] = self._connected

    @classmethod
    def from_settings(cls, settings: LuminaSettings | None = None) -> RedisMidTerm:
        settings = settings or default_settings()
        # Retries are ours (tenacity, below); redis-py's default backoff would hide an outage for seconds.
        common: dict[str, Any] = {
            "socket_timeout": 5.0, "socket_connect_timeout": 5.0, "retry": Retry(NoBackoff(), 0),
        }
        if settings.redis_url:
            url = settings.redis_url
            if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
                raise InvalidInput("redis_url", f"{redact_url(url)!r}: use redis://, rediss:// or unix://")
            common.update(tls_options(settings, url))
            try:
                client = redis.Redis.from_url(url, **common)
            except ValueError as exc:
                raise InvalidInput("redis_url", f"{redact_url(url)!r}: {exc}") from exc
            if _cluster_enabled(url, common):
                # A Redis Cluster: a cluster-aware client (slots, MOVED/ASK). Every key of a user carries
                # the user's hash tag, so each transaction stays in one slot. Its own retries are ours too.
                client.close()
                client = redis.cluster.RedisCluster.from_url(url, **common)
                return cls(client, backend="redis-cluster", where=redact_url(url))
            return cls(client, backend="redis", where=redact_url(url))
        socket = ensure_server(settings)
        client = redis.Redis(unix_socket_path=socket, **common)
        # A restart by another process or a crash should heal on the next call, as "start on demand" promises.
        return cls(client, backend="redis-embedded", revive=lambda: ensure_server(settings), where=f"unix://{socket}")

    # --- plumbing ------------------------------------------------------------------------------------

    def _connected(self, connection) -> None:
        connection.on_connect()  # what redis-py does when no connect function is given
        self._connects += 1
        if self._connects > 1:
            self._reconnecting = True

    def _before_retry(self, state: RetryCallState) -> None:
        self._reconnecting = True
        if self._revive is not None:
            self._revive()  # its StoreUnavailable (binary missing, start failed) says more than ours

    def _run(self, what: str, call: Callable[[], _T]) -> _T:
        retrying = Retrying(
            stop=stop_after_attempt(3),
            wait=wait_exponential(multiplier=0.05, max=0.5),
            retry=retry_if_exception_type(_CONN_ERRORS),
            before_sleep=self._before_retry,
            reraise=True,
        )
        try:
            result = retrying(call)
        except _CONN_ERRORS as exc:
            self._reconnecting = True  # the next call that gets through checks what the server kept
            tls = tls_failure(exc)
            if tls is not None:
                raise StoreUnavailable(TIER, f"{what} failed on {self._where}: {tls} ({exc})") from exc
            raise StoreUnavailable(
                TIER, f"{what} failed on {self._where} ({type(exc).__name__}: {exc}); "
                "check that the server runs, or REDIS_URL"
            ) from exc
        if self._reconnecting and self.on_reconnect is not None and not self._in_hook:
            self._reconnecting = False
            self._in_hook = True  # the hook's own calls must not re-enter it
            try:
                self.on_reconnect()
            finally:
                self._in_hook = False
        return result

    def _scan(self, pattern: str) -> set[str]:
        # SCAN may return a key twice while the keyspace rehashes; the set makes counts exact.
        return {_text(k) for k in self._client.scan_iter(match=pattern, count=_SCAN_COUNT)}

    # --- MidTermStore --------------------------------------------------------------------------------

    def put_segment(self, record: SegmentRecord, ttl_seconds: int) -> None:
        self.put_segments([record], ttl_seconds)

    def put_segments(self, records: Sequence[SegmentRecord], ttl_seconds: int) -> None:
        """``put_segment`` for many (the segments one transcript batch closed): every record is checked
        before anything is written, then one transaction per user — a user's keys share a hash slot, so
        this also holds on Redis Cluster."""
        if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int) or ttl_seconds < 1:
            raise InvalidInput("ttl_seconds", f"{ttl_seconds!r}: must be a whole number of seconds >= 1")
        by_recent_key: dict[str, list[tuple[str, str, dict, float]]] = {}
        for record in records:
            user = ids.validate_id(record.user_id, "user_id")
            segment = ids.validate_id(record.segment_id, "segment_id")
            by_recent_key.setdefault(ids.redis_recent_key(user), []).append(
                (segment, ids.redis_segment_key(user, segment), encode_segment(record), record.end_ts))
        for recent_key, rows in by_recent_key.items():

            def transaction(pipe: redis.client.Pipeline, recent_key=recent_key, rows=rows) -> None:
                # The index must outlive every hash it points to, so a short TTL never shortens it.
                remaining = int(pipe.ttl(recent_key))
                pipe.multi()
                for _segment, seg_key, fields, _end in rows:
                    pipe.delete(seg_key)  # exact replacement: no fields left over from an older schema
                    pipe.hset(seg_key, mapping=cast(Mapping[Any, Any], fields))
                    pipe.expire(seg_key, ttl_seconds)
                pipe.zadd(recent_key, {segment: end for segment, _k, _f, end in rows})
                pipe.expire(recent_key, max(ttl_seconds, remaining))

            self._run("put_segment", lambda: self._client.transaction(transaction, recent_key))

    def get_segment(self, user_id: str, segment_id: str) -> SegmentRecord | None:
        key = ids.redis_segment_key(ids.validate_id(user_id, "user_id"), ids.validate_id(segment_id, "segment_id"))
        raw = self._run("get_segment", lambda: self._client.hgetall(key))
        return decode_segment(raw) if raw else None

    def recent_segments(self, user_id: str, limit: int) -> list[SegmentRecord]:
        user = ids.validate_id(user_id, "user_id")
        if limit <= 0:
            return []

        def fetch(pipe, key: str) -> None:
            pipe.hgetall(key)

        return self._run("recent_segments", lambda: self._recent(user, limit, fetch, lambda raw: decode_segment(raw) if raw else None))

    def recent_signals(self, user_id: str, limit: int) -> list[RecentSignal]:
        """The most recent segments' id, importance and embedding only: what recall ranks them by,
        without reading and validating their texts and id lists (a third of a query's time on this tier)."""
        user = ids.validate_id(user_id, "user_id")
        if limit <= 0:
            return []
        wanted = SIGNAL_FIELDS

        def fetch(pipe, key: str) -> None:
            pipe.hmget(key, wanted)

        return self._run("recent_signals", lambda: self._recent(user, limit, fetch, decode_signal))

    def _recent(self, user: str, limit: int, fetch, decode) -> list:
        recent_key = ids.redis_recent_key(user)
        found: list = []
        expired: list[str] = []
        start = 0
        while len(found) < limit:
            # Read in pages so hashes that expired under the index don't shrink the answer below limit.
            page = cast(list[bytes | str], self._client.zrevrange(recent_key, start, start + limit - 1))
            members = [_text(m) for m in page]
            if not members:
                break
            pipe = self._client.pipeline(transaction=False)
            for member in members:
                fetch(pipe, ids.redis_segment_key(user, member))
            for member, raw in zip(members, pipe.execute(), strict=True):
                record = decode(raw)
                if record is not None:
                    found.append(record)
                else:
                    expired.append(member)
            start += len(members)
        if expired:
            self._client.zrem(recent_key, *expired)
        return found[:limit]

    def ttl(self, user_id: str, segment_id: str) -> int:
        key = ids.redis_segment_key(ids.validate_id(user_id, "user_id"), ids.validate_id(segment_id, "segment_id"))
        return int(self._run("ttl", lambda: self._client.ttl(key)))

    def count(self, user_id: str | None = None) -> int:
        # The "*" placeholders turn the key builders into SCAN patterns; braces are literal in Redis globs,
        # so "{*}" can't match into a neighbour like "{ann:x}" when counting "ann".
        user = "*" if user_id is None else ids.validate_id(user_id, "user_id")
        pattern = ids.redis_segment_key(user, "*")
        return self._run("count", lambda: len(self._scan(pattern)))

    def missing(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """The (user_id, segment_id) pairs without a record here, in the order given (pipelined EXISTS;
        on Redis Cluster the pipeline is split per node)."""
        wanted = [(ids.validate_id(u, "user_id"), ids.validate_id(s, "segment_id")) for u, s in pairs]

        def check() -> list[tuple[str, str]]:
            out: list[tuple[str, str]] = []
            for start in range(0, len(wanted), _SCAN_COUNT):
                chunk = wanted[start : start + _SCAN_COUNT]
                pipe = self._client.pipeline(transaction=False)
                for user, segment in chunk:
                    pipe.exists(ids.redis_segment_key(user, segment))
                out += [pair for pair, found in zip(chunk, pipe.execute()) if not found]
            return out

        return self._run("missing", check) if wanted else []

    def delete_user(self, user_id: str) -> int:
        """Removes every key of the user; returns how many segment records were removed."""
        user = ids.validate_id(user_id, "user_id")
        return self._run("delete_user", lambda: self._delete_user(user))

    def _delete_user(self, user: str) -> int:
        keys = self._scan(ids.redis_user_pattern(user))
        seg_prefix = ids.redis_segment_key(user, "")
        segments = sorted(k for k in keys if k.startswith(seg_prefix))
        removed = sum(self._delete(chunk) for chunk in _chunks(segments, _DELETE_CHUNK))
        for chunk in _chunks(sorted(keys.difference(segments)), _DELETE_CHUNK):
            self._delete(chunk)
        return removed

    def _delete(self, keys: list[str]) -> int:
        return int(self._client.delete(*keys))

    def delete_segments(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Remove these segments of this user (their records and their places in the recent index);
        returns how many records were removed. Another user's ids name other keys, so they stay."""
        user = ids.validate_id(user_id, "user_id")
        if isinstance(segment_ids, str):  # a bare string is a Sequence too; iterating it would yield letters
            raise InvalidInput("segment_ids", "must be a list of segment ids, not a single string")
        wanted = sorted({ids.validate_id(s, "segment_ids[]") for s in segment_ids})
        recent_key = ids.redis_recent_key(user)

        def delete(chunk: list[str]) -> int:
            # One MULTI per chunk: a record and its index entry go together (all one slot on a cluster).
            pipe = self._client.pipeline(transaction=True)
            pipe.delete(*(ids.redis_segment_key(user, s) for s in chunk))
            pipe.zrem(recent_key, *chunk)
            return int(pipe.execute()[0])

        return self._run("delete_segments", lambda: sum(delete(c) for c in _chunks(wanted, _DELETE_CHUNK)))

    def vector_cache(self, namespace: str):
        """The embedding cache's Redis tier (stores.redis_vector_cache) on this store's server and connections."""
        from .redis_vector_cache import RedisVectorCache

        return RedisVectorCache(self._client, self._once, namespace)

    def _once(self, what: str, call: Callable[[], _T]) -> _T:
        """One attempt, no revival: a cache that does not answer is skipped at once, not waited for (its caller
        computes the value); the mid-term tier's own calls still retry and revive the server."""
        try:
            return call()
        except _CONN_ERRORS as exc:
            raise StoreUnavailable(TIER, f"{what} failed on {self._where} ({type(exc).__name__}: {exc})") from exc

    def ping(self) -> str:
        """"redis 8.2.3" or "valkey 9.1.0" (Valkey also reports a redis_version for compatibility)."""
        info = self._run("ping", lambda: self._client.info("server"))
        if "valkey_version" in info:
            return f"valkey {info['valkey_version']}"
        return f"{info.get('server_name', 'redis')} {info['redis_version']}"

    def close(self) -> None:
        self._client.close()

    # --- backups and erasure (L10, L11) --------------------------------------------------------------
    def dump_keys(self) -> list[dict[str, Any]]:
        """Every key of ours with its type, value and remaining TTL in ms (-1: none): a backup's records."""
        def dump() -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            for key in sorted(self._scan(f"{ids.REDIS_PREFIX}:*")):
                kind = _text(self._client.type(key))
                if kind == "hash":
                    value: Any = {_text(k): _text(v) for k, v in self._client.hgetall(key).items()}
                elif kind == "zset":
                    value = [[_text(m), float(s)] for m, s in self._client.zrange(key, 0, -1, withscores=True)]
                else:
                    continue  # gone meanwhile, or not a type this tier writes
                out.append({"key": key, "type": kind, "value": value, "pttl": int(self._client.pttl(key))})
            return out

        return self._run("dump_keys", dump)

    def load_keys(self, records: Sequence[Mapping[str, Any]]) -> int:
        """Write records of ``dump_keys`` back (replacing those keys), with their TTLs."""
        def load() -> int:
            for r in records:
                pipe = self._client.pipeline(transaction=True)
                pipe.delete(r["key"])
                if r["type"] == "hash":
                    pipe.hset(r["key"], mapping=dict(r["value"]))
                else:
                    pipe.zadd(r["key"], {m: s for m, s in r["value"]})
                if int(r["pttl"]) > 0:
                    pipe.pexpire(r["key"], int(r["pttl"]))
                pipe.execute()
            return len(records)

        return self._run("load_keys", load)

    def save_snapshot(self) -> str:
        """Write the snapshot now so erased keys leave the RDB file too (embedded server: SAVE; a
        production server: BGSAVE, where the provider allows it)."""
        def save() -> str:
            if self.backend == "redis-embedded":
                self._client.save()
                return "saved"
            try:
                self._client.bgsave()
                return "background save started"
            except redis.ResponseError as exc:  # managed services often refuse it
                return f"not allowed here ({exc})"

        return self._run("save_snapshot", save)


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
