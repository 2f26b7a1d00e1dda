"""Lumina Memory as a LangGraph ``BaseStore``: any LangGraph agent can keep its memories in our tiers.

    graph = builder.compile(store=make_store(...))   # graphs.lumina_store builds one from settings
    store.put(("memories", user_id), "m1", {"text": "Likes green tea"}, ttl=60 * 24 * 30)
    store.search(("memories", user_id), query="what does she drink?", filter={"kind": "preference"})

Persistence: every item is a row of the item table (``lumina_memory.stores.kv_duckdb``: a DuckDB file embedded, a
PostgreSQL table in server mode, where any number of processes share it), the source of truth.
Items are indexed for ``query=`` search twice: as vectors (one point per indexed text, in a dedicated
collection of the long-term vector engine — qdrant-edge embedded, Qdrant by ``QDRANT_URL``) and as tokens
in their row (keyword channel).

``score`` means what it means in LangGraph's stores: the cosine similarity between the query's embedding
and the item's best-matching indexed text (in [-1, 1]; None for an item with nothing indexed), so
thresholds tuned on InMemoryStore, SqliteStore or PostgresStore carry over. The *order* of the results is
our relevance, which fuses that cosine with keyword coverage (the IDF-weighted share of the query's terms
the item contains):

    relevance = dense_weight · max(0, cosine) + (1 − dense_weight) · keyword coverage

so an item holding the query's exact terms (a name, a Japanese word the embedder blurs) may come before
one with a slightly higher cosine. Every returned item's cosine is exact (an item found by its keywords
alone has its vectors scored too).

Semantics follow LangGraph's stores, whose own test suites run against this one
(tests/upstream_store): namespaces are isolated (a search sees only its prefix); ``filter`` compares JSON
values or uses ``$eq $ne $gt $gte $lt $lte``, and a dotted key addresses a nested field
(``lumina_memory.stores.lgstore_filters``); a put with ``value=None`` deletes; ``index=False`` keeps an item out of the
search index (it is still listed and found by ``get``); a query search that finds fewer scored items than
asked fills up with the remaining matches unscored (score None). ``index`` is LangGraph's IndexConfig:
``fields`` (or SqliteStore's ``text_fields``) pick the texts to embed (default: every string of the
value), ``embed``/``dims`` choose the embedding model (``lumina_memory.stores.lgstore_embed``). ``ttl`` is LangGraph's
TTLConfig and a put's ``ttl=`` is in minutes (``lumina_memory.stores.lgstore_ttl``): reads refresh, ``sweep_ttl`` deletes
what expired, ``start_ttl_sweeper`` does so every ``sweep_interval_minutes``. The async API runs the
work on a worker thread, concurrent calls of a loop in one batch (``lumina_memory.stores.lgstore_async``).

``stores`` imports nothing from ``nodes``: the embedder and the tokenizer are constructor arguments.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    tokenize_path,
    validate_op_namespace,
)

from . import lgstore_filters as filters
from .errors import InvalidInput
from .kv_duckdb import Row
from .lgstore_async import LoopBatcher
from .lgstore_embed import StoreEmbedding, from_embedder
from .lgstore_ids import item_id, legacy_rows
from .lgstore_search import ITEM_FIELD, MAX_ID_FILTER, NS_FIELD, QuerySearch  # noqa: F401 - stores.places reads the fields here
from .lgstore_ttl import DEFAULT_SWEEP_MINUTES, Sweeper, check_config, check_minutes
from .lgstore_users import USER_ROOTS
from .lgstore_values import (  # noqa: F401 - importers read the limits here
    MAX_KEY_CHARS, MAX_QUERY_CHARS, MAX_VALUE_BYTES, _check_key, _check_labels, _default_tokenize, _is_utf8,
    _ns_match, _ts, _value_json,
)
from .lgstore_writes import ItemWrites
from .protocols_files import ItemTable
from .lgstore_users import check_op as check_user_labels
from .vector_filters import Match, VectorStoreBase, batched

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]
Tokenize = Callable[[str], list[str]]

class LuminaStore(ItemWrites, QuerySearch, BaseStore):
    """``BaseStore`` on the item table and a vector collection (see the module docstring).

    ``items``, ``vectors``: opened adapters, owned (closed) by this store. ``embed``: a StoreEmbedding
    (stores.lgstore_embed), or texts → vectors of the collection's dimension. ``index``: LangGraph's
    IndexConfig (``fields``; ``embed``/``dims`` are resolved by the caller into ``embed``). ``ttl``:
    LangGraph's TTLConfig. ``tokenize``: text → terms for the keyword channel. ``dense_weight``: share of
    the cosine in the ranking. ``on_close``: called last by ``close()``. ``max_query_chars``,
    ``max_value_bytes``: a longer search query, a larger value (its JSON in UTF-8) is refused
    (InvalidInput naming ``query`` / ``value``) before anything is embedded or written. ``user_roots``: the
    first labels after which the next one names a user and must be a valid user id (stores.lgstore_users).
    """

    supports_ttl = True

    __slots__ = ("items", "vectors", "embedding", "tokenize", "fields", "dense_weight", "_on_close", "_lock",
                 "_closed", "max_query_chars", "max_value_bytes", "index_config", "embeddings", "ttl_config",
                 "_sweeper", "_batcher", "user_roots")

    def __init__(
        self,
        items: ItemTable,
        vectors: VectorStoreBase,
        embed: StoreEmbedding | Embed,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        tokenize: Tokenize | None = None,
        dense_weight: float = 0.7,
        on_close: Callable[[], None] | None = None,
        max_query_chars: int = MAX_QUERY_CHARS,
        max_value_bytes: int = MAX_VALUE_BYTES,
        user_roots: Sequence[str] = USER_ROOTS,
    ) -> None:
        self.items, self.vectors = items, vectors
        self._on_close = on_close  # e.g. release the data-directory lock the factory took
        self._lock = threading.RLock()  # one batch at a time keeps the table and the vectors in step
        self._closed = False
        self._sweeper = Sweeper(self._sweep_expired)  # not sweep_ttl: a subclass may make that one async
        self._batcher = LoopBatcher(self._execute)
        self.user_roots = tuple(user_roots)
        try:  # from here on, a failure closes what this store was given: the caller gets no store to close
            if not 0.0 <= dense_weight <= 1.0:
                raise InvalidInput("dense_weight", "must be within [0, 1]")
            index = dict(index or {})
            self.embedding = embed if isinstance(embed, StoreEmbedding) else from_embedder(
                vectors.embedder_name, vectors.dim, embed, index)
            if self.embedding.dims != vectors.dim:
                raise InvalidInput("index.dims", f"is {self.embedding.dims} but the vector collection "
                                   f"{vectors.collection!r} holds {vectors.dim}-d vectors")
            self.embeddings = self.embedding.embeddings
            fields = index.get("fields") or index.get("text_fields")  # text_fields: SqliteStore's name
            fields = [fields] if isinstance(fields, str) else fields
            self.fields = None if not fields else [(f, f if f == "$" else tokenize_path(f)) for f in fields]
            self.index_config: IndexConfig = {**index, "dims": self.embedding.dims,  # type: ignore[typeddict-item]
                                              "embed": index.get("embed", self.embeddings)}
            self.ttl_config = check_config(ttl)
            self.tokenize = tokenize or _default_tokenize
            self.dense_weight = dense_weight
            self.max_query_chars, self.max_value_bytes = max_query_chars, max_value_bytes
            self._rekey_legacy()
            self._restamp_terms()
        except BaseException:
            self.close()
            raise

    def _rekey_legacy(self) -> None:
        """Move items written under the first id scheme with a '|' in a label or key to their current id
        (stores.lgstore_ids): their row and vector points go under the new id, re-indexed with the store's
        index fields; created_at becomes now. Nothing to do (one scan) for every other item."""
        legacy = legacy_rows(self.items)
        if not legacy:
            return
        with self._lock:
            self._apply({item_id(r.namespace, r.key): PutOp(r.namespace, r.key, r.value, None if r.index_hash else False,
                                                              ttl=r.ttl_minutes)
                         for r in legacy})
            old = [r.item_id for r in legacy]
            for chunk in batched(old, MAX_ID_FILTER):
                self.vectors.delete_where([Match(ITEM_FIELD, tuple(chunk))])
            self.items.write([], old)

    def _restamp_terms(self) -> None:
        """Re-tokenise indexed items whose keyword terms an earlier tokenizer version wrote (a tokenizer with a
        ``stamp`` puts it among every text's terms; nodes.text.transliterate.CrossTerms does), so the keyword
        channel never mixes two versions' terms. The texts are read again with the store's index fields."""
        stamp = getattr(self.tokenize, "stamp", None)
        if not stamp:
            return
        with self._lock:
            while rows := self.items.unstamped(stamp, MAX_ID_FILTER):
                tokens = {}
                for r in rows:
                    texts = self._texts(PutOp(r.namespace, r.key, r.value))
                    tokens[r.item_id] = sorted({t for _, text in texts for t in self.tokenize(text)} | {stamp})
                self.items.set_tokens(tokens)

    # --- the required core -----------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:  # before anything runs: a bad op in a batch changes nothing
            self._check_op(op)
        return self._execute(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:  # checked before joining other calls' batch: a bad call fails alone
            self._check_op(op)
        return await self._batcher.run(ops)  # on a worker thread, with the loop's concurrent calls

    def _execute(self, ops: list[Op]) -> list[Result]:
        """Run checked ops (the batcher's calls of a loop, or one ``batch``) in order, one batch at a time."""
        ops = [self._prepare(op) for op in ops]
        with self._lock:
            return self._run(ops)

    def _prepare(self, op: Op) -> Op:
        """What is stored or searched for ``op`` once it passed the checks (a subclass redacts PII here,
        after the size limits, so an oversized value is refused before any work is done on it)."""
        return op

    def _check_op(self, op: Op) -> None:
        validate_op_namespace(op)
        if isinstance(op, (GetOp, PutOp)):
            _check_key(op.key)
            _check_labels(op.namespace)
            if isinstance(op, PutOp) and op.value is not None:
                self._check_size(op.value)
                if op.ttl is not None:
                    check_minutes(op.ttl)
        elif isinstance(op, SearchOp):
            _check_labels(op.namespace_prefix, "namespace_prefix")
            filters.check(op.filter)
            if op.query is not None and (not isinstance(op.query, str) or len(op.query) > self.max_query_chars):
                raise InvalidInput("query", f"must be a string of at most {self.max_query_chars:,} characters "
                                   "(LUMINA_MAX_QUERY_CHARS)")
            if op.query and not _is_utf8(op.query):
                raise InvalidInput("query", "is not valid UTF-8 text (a lone surrogate)")
        elif not isinstance(op, ListNamespacesOp):
            raise ValueError(f"Unknown operation type: {type(op)}")
        check_user_labels(op, self.user_roots)  # after the checks of any label: the id rule on user labels

    def _check_size(self, value: Any) -> None:
        size = len(_value_json(value).encode("utf-8"))
        if size > self.max_value_bytes:
            raise InvalidInput("value", f"has {size:,} bytes as JSON; the limit is {self.max_value_bytes:,} "
                               "(LUMINA_MAX_STORE_VALUE_BYTES)")

    def close(self) -> None:
        self._sweeper.stop()  # first, outside the lock: a sweep in progress needs it to finish
        with self._lock:
            if not self._closed:
                self._closed = True
                try:
                    self.vectors.close()
                finally:
                    try:
                        self.items.close()
                    finally:
                        if self._on_close is not None:
                            self._on_close()

    def __enter__(self) -> "LuminaStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- time to live ------------------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Delete every item whose TTL ran out (its row and its vectors); the number deleted."""
        return self._sweep_expired()

    def _sweep_expired(self) -> int:
        swept = 0
        with self._lock:
            while not self._closed:
                expired = self.items.expired(time.time(), MAX_ID_FILTER)
                if not expired:
                    break
                self._apply({r.item_id: PutOp(r.namespace, r.key, None) for r in expired})
                swept += len(expired)
        return swept

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Sweep every ``sweep_interval_minutes`` (default: the TTL config's, else 5) on a daemon thread
        until ``stop_ttl_sweeper()`` or ``close()``; the future ends when it stops, cancelling it stops it."""
        interval = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or DEFAULT_SWEEP_MINUTES
        return self._sweeper.start(float(interval))

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper; True once stopped (or not running), False if ``timeout`` (seconds) ran out."""
        return self._sweeper.stop(timeout)

    def _alive_at(self, now: float) -> float | None:
        """Reads hide items expired at ``now`` only when the TTL config says omit_expired."""
        return now if self.ttl_config and self.ttl_config.get("omit_expired") else None

    def _refresh(self, rows: Iterable[Row], asked: bool, now: float) -> None:
        # As LangGraph's SqliteStore: a read refreshes when it asks to and the config has refresh_on_read.
        # Only rows with a TTL are written to: reading items that never expire costs no transaction.
        if asked and self.ttl_config and self.ttl_config.get("refresh_on_read"):
            self.items.refresh([r.item_id for r in rows if r.ttl_minutes is not None], now, self._alive_at(now))

    # --- execution ---------------------------------------------------------------------------------------
    def _run(self, ops: list[Op]) -> list[Result]:
        # Ops run in order, puts grouped between reads: a get after a put in one batch sees the put.
        results: list[Result] = []
        pending: dict[str, PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                pending[item_id(op.namespace, op.key)] = op  # the last put of a key wins
                results.append(None)
                continue
            if pending:
                self._apply(pending)
                pending = {}
            now = time.time()
            if isinstance(op, GetOp):
                iid = item_id(op.namespace, op.key)
                row = self.items.get([iid], self._alive_at(now)).get(iid)
                if row is not None:
                    self._refresh([row], op.refresh_ttl, now)
                results.append(None if row is None else self._item(row))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, now))
            else:
                results.append(self._list_namespaces(op, now))
        if pending:
            self._apply(pending)
        return results

    @staticmethod
    def _item(row: Row) -> Item:
        return Item(value=row.value, key=row.key, namespace=row.namespace,
                    created_at=_ts(row.created_at), updated_at=_ts(row.updated_at))

    # --- search ------------------------------------------------------------------------------------------
    def _search(self, op: SearchOp, now: float) -> list[SearchItem]:
        if op.limit <= 0 or op.offset < 0:
            return []
        prefix, alive_at = tuple(op.namespace_prefix), self._alive_at(now)
        if op.query:
            ranked = self._ranked(op, prefix, alive_at)[op.offset : op.offset + op.limit]
        elif op.filter:
            rows = [r for r in self.items.under(prefix, alive_at=alive_at) if filters.keeps(r.value, op.filter)]
            ranked = [(r, None) for r in rows[op.offset : op.offset + op.limit]]
        else:
            ranked = [(r, None) for r in self.items.under(prefix, op.limit, op.offset, alive_at)]
        self._refresh([r for r, _ in ranked], op.refresh_ttl, now)
        return [SearchItem(r.namespace, r.key, r.value, _ts(r.created_at), _ts(r.updated_at), score=s)
                for r, s in ranked]

    # --- namespaces ------------------------------------------------------------------------------------
    def _list_namespaces(self, op: ListNamespacesOp, now: float) -> list[tuple[str, ...]]:
        namespaces = self.items.namespaces(self._alive_at(now))
        if op.match_conditions:
            namespaces = [ns for ns in namespaces if all(_ns_match(c, ns) for c in op.match_conditions)]
        if op.max_depth is not None:
            namespaces = list({ns[: op.max_depth] for ns in namespaces})
        return sorted(namespaces)[op.offset : op.offset + op.limit]
