"""Lumina Memory as a LangGraph ``BaseStore``: any LangGraph agent can keep its memories in our tiers.

    graph = builder.compile(store=make_store(...))   # graphs.lumina_store builds one from settings
    store.put(("memories", user_id), "m1", {"text": "Likes green tea"})
    store.search(("memories", user_id), query="what does she drink?", filter={"kind": "preference"})

Persistence: every item is a row of the DuckDB item table (``stores.kv_duckdb``), the source of truth.
Items are indexed for ``query=`` search twice: as vectors (one point per indexed text, in a dedicated
collection of the long-term vector engine — qdrant-edge embedded, Qdrant by ``QDRANT_URL``) and as tokens
in their row (keyword channel). A search fuses both:

    score = dense_weight · max(0, cosine) + (1 − dense_weight) · keyword coverage

where keyword coverage is the IDF-weighted share of the query's terms the item contains. Both parts are
absolute (not rescaled per query), so scores compare across searches as LangGraph's stores' do.

Semantics follow LangGraph's ``InMemoryStore`` (its tests are ported in tests/test_langgraph_store.py):
namespaces are isolated (a search sees only its prefix), ``filter`` is exact JSON equality or
``$eq/$ne/$gt/$gte/$lt/$lte``, a put with ``value=None`` deletes, ``index=False`` keeps an item out of the
search index (it is still listed and found by ``get``), and a query search that finds fewer scored items
than asked fills up with the remaining matches unscored (score None).

``stores`` imports nothing from ``nodes``: the embedder and the tokenizer are constructor arguments.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from . import ids
from .errors import InvalidInput
from .kv_duckdb import DuckDBItems, NewRow, Row, ns_path
from .lgstore_ids import item_id, legacy_rows
from .vector_filters import Match, PreparedPoint, VectorStoreBase, batched, check_vector

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]
Tokenize = Callable[[str], list[str]]

MAX_KEY_CHARS = 1024
ITEM_FIELD, NS_FIELD, HASH_FIELD = "lg_item", "lg_ns", "lg_hash"
MAX_ID_FILTER = 2_000  # a filtered search restricts the vector query to at most this many candidate ids
# Defaults of settings.max_query_chars / max_store_value_bytes (graphs.lumina_store passes the settings'):
# an unbounded query or value costs minutes of tokenising and embedding before anything is refused.
MAX_QUERY_CHARS, MAX_VALUE_BYTES = 2_000, 256_000


def _default_tokenize(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidInput("key", "must be a non-empty string")
    if len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise InvalidInput("key", f"must be at most {MAX_KEY_CHARS} characters without NUL bytes")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("key", "is not valid UTF-8 text") from None
    return key


def _check_labels(namespace: Sequence[str], field: str = "namespace") -> None:
    for label in namespace:
        if len(label) > MAX_KEY_CHARS or "\x00" in label:
            raise InvalidInput(field, f"labels must be at most {MAX_KEY_CHARS} characters without NUL bytes")
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(field, f"label {label[:40]!r} is not valid UTF-8 text") from None


def _prefixes(namespace: Sequence[str]) -> list[str]:
    return [ns_path(namespace[: i + 1]) for i in range(len(namespace))]


# --- filters: the JSONB-like semantics of LangGraph's stores -------------------------------------------
def _op(value: Any, op: str, target: Any) -> bool:
    if op == "$eq":
        return value == target
    if op == "$ne":
        return value != target
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise InvalidInput("filter", f"unsupported operator {op!r}; use $eq $ne $gt $gte $lt $lte")
    try:
        a, b = float(value), float(target)
    except (TypeError, ValueError):
        return False  # a missing or non-numeric field does not satisfy a comparison
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def matches(value: Any, condition: Any) -> bool:
    if isinstance(condition, dict):
        if any(k.startswith("$") for k in condition):
            return all(_op(value, k, v) for k, v in condition.items())
        return isinstance(value, dict) and all(matches(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(condition)
            and all(matches(a, b) for a, b in zip(value, condition))
        )
    return value == condition


def _ns_match(cond: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = cond.path
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if cond.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)


def _ts(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


class LuminaStore(BaseStore):
    """``BaseStore`` on the DuckDB item table and a vector collection (see the module docstring).

    ``items``, ``vectors``: opened adapters, owned (closed) by this store. ``embed``: texts → vectors of the
    collection's dimension. ``index``: LangGraph's IndexConfig ``fields`` (JSON paths; "$" is the whole
    value); default: every string in the value. ``tokenize``: text → terms for the keyword channel.
    ``dense_weight``: share of the cosine in the fused score. ``on_close``: called last by ``close()``.
    ``max_query_chars``, ``max_value_bytes``: a longer search query, a larger value (its JSON in UTF-8)
    is refused (InvalidInput naming ``query`` / ``value``) before anything is embedded or written.
    """

    __slots__ = ("items", "vectors", "embed", "tokenize", "fields", "dense_weight", "_on_close", "_lock", "_closed",
                 "max_query_chars", "max_value_bytes")

    def __init__(
        self,
        items: DuckDBItems,
        vectors: VectorStoreBase,
        embed: Embed,
        *,
        index: IndexConfig | None = None,
        tokenize: Tokenize | None = None,
        dense_weight: float = 0.7,
        on_close: Callable[[], None] | None = None,
        max_query_chars: int = MAX_QUERY_CHARS,
        max_value_bytes: int = MAX_VALUE_BYTES,
    ) -> None:
        if not 0.0 <= dense_weight <= 1.0:
            raise InvalidInput("dense_weight", "must be within [0, 1]")
        self.items, self.vectors, self.embed = items, vectors, embed
        self.tokenize = tokenize or _default_tokenize
        fields = (index or {}).get("fields")
        self.fields = None if fields is None else [(f, f if f == "$" else tokenize_path(f)) for f in fields]
        self.dense_weight = dense_weight
        self._on_close = on_close  # e.g. release the data-directory lock the factory took
        self._lock = threading.RLock()  # one batch at a time keeps the table and the vectors in step
        self._closed = False
        self.max_query_chars, self.max_value_bytes = max_query_chars, max_value_bytes
        try:
            self._rekey_legacy()
        except BaseException:
            self.close()  # the caller gets no store to close
            raise

    def _rekey_legacy(self) -> None:
        """Move items written under the first id scheme with a '|' in a label or key to their current id
        (stores.lgstore_ids): their row and vector points go under the new id, re-indexed with the store's
        index fields; created_at becomes now. Nothing to do (one scan) for every other item."""
        legacy = legacy_rows(self.items)
        if not legacy:
            return
        with self._lock:
            self._apply({item_id(r.namespace, r.key): PutOp(r.namespace, r.key, r.value, None if r.index_hash else False)
                         for r in legacy})
            old = [r.item_id for r in legacy]
            for chunk in batched(old, MAX_ID_FILTER):
                self.vectors._delete([Match(ITEM_FIELD, tuple(chunk))])
            self.items.write([], old)

    # --- the required core -----------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:  # before anything runs: a bad op in a batch changes nothing
            self._check_op(op)
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
        elif isinstance(op, SearchOp):
            _check_labels(op.namespace_prefix, "namespace_prefix")
            if op.query is not None and (not isinstance(op.query, str) or len(op.query) > self.max_query_chars):
                raise InvalidInput("query", f"must be a string of at most {self.max_query_chars:,} characters "
                                   "(LUMINA_MAX_QUERY_CHARS)")
            if op.query and not _is_utf8(op.query):
                raise InvalidInput("query", "is not valid UTF-8 text (a lone surrogate)")
        elif not isinstance(op, ListNamespacesOp):
            raise ValueError(f"Unknown operation type: {type(op)}")

    def _check_size(self, value: Any) -> None:
        size = len(_value_json(value).encode("utf-8"))
        if size > self.max_value_bytes:
            raise InvalidInput("value", f"has {size:,} bytes as JSON; the limit is {self.max_value_bytes:,} "
                               "(LUMINA_MAX_STORE_VALUE_BYTES)")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # DuckDB and the vector engine block: keep them off the event loop (LangGraph server forbids it).
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    def close(self) -> None:
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
            if isinstance(op, GetOp):
                row = self.items.get([item_id(op.namespace, op.key)]).get(item_id(op.namespace, op.key))
                results.append(None if row is None else self._item(row))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            else:
                results.append(self._list_namespaces(op))
        if pending:
            self._apply(pending)
        return results

    def _texts(self, op: PutOp) -> list[tuple[str, str]]:
        """(path, text) pairs to index for a put; [] when not indexed."""
        if op.index is False or op.value is None:
            return []
        paths = self.fields if op.index is None else [(f, f if f == "$" else tokenize_path(f)) for f in op.index]
        if paths is None:
            strings: list[str] = []
            _strings(op.value, strings)
            joined = " ".join(s for s in strings if s.strip())
            return [("*", joined)] if joined else []
        out = []
        for path, tokens in paths:
            texts = [t for t in get_text_at_path(op.value, tokens) if t and t.strip()]
            out += [(path if len(texts) == 1 else f"{path}.{i}", t) for i, t in enumerate(texts)]
        return out

    def _apply(self, puts: dict[str, PutOp]) -> None:
        rows: list[NewRow] = []
        points: list[PreparedPoint] = []
        deletes: list[str] = []
        texts_of: list[tuple[str, tuple[str, ...], str, str, str]] = []  # item, ns, path, text, hash
        for iid, op in puts.items():
            if op.value is None:
                deletes.append(iid)
                continue
            value_json = _value_json(op.value)
            texts = self._texts(op)
            digest = hashlib.sha1("\x1f".join(f"{p}\x1e{t}" for p, t in texts).encode("utf-8", "surrogatepass")).hexdigest()
            terms = sorted({t for _, text in texts for t in self.tokenize(text)})
            rows.append(NewRow(iid, tuple(op.namespace), op.key, value_json, terms, digest if texts else ""))
            texts_of += [(iid, tuple(op.namespace), path, text, digest) for path, text in texts]
        if texts_of:
            # Embed before any write: a failing embedder leaves the store as it was.
            vectors = self.embed([t[3] for t in texts_of])
            for (iid, ns, path, _text, digest), vector in zip(texts_of, vectors, strict=True):
                points.append(
                    PreparedPoint(
                        str(uuid.uuid5(ids.NAMESPACE, f"lgstore-point|{iid}|{path}")),
                        check_vector(vector, self.vectors.dim, "embedding"),
                        {ITEM_FIELD: iid, NS_FIELD: _prefixes(ns), HASH_FIELD: digest, "path": path},
                    )
                )
        # Old points of every touched item go first (a shorter value may have fewer texts), then the new ones,
        # then the rows. A crash in between leaves points whose hash no row has: search ignores those.
        touched = list(puts)
        for chunk in batched(touched, MAX_ID_FILTER):
            self.vectors._delete([Match(ITEM_FIELD, tuple(chunk))])
        for chunk in batched(points, self.vectors.batch_size):
            self.vectors._write(chunk)
        self.items.write(rows, deletes)

    @staticmethod
    def _item(row: Row) -> Item:
        return Item(value=row.value, key=row.key, namespace=row.namespace,
                    created_at=_ts(row.created_at), updated_at=_ts(row.updated_at))

    # --- search ------------------------------------------------------------------------------------------
    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit <= 0 or op.offset < 0:
            return []
        prefix = tuple(op.namespace_prefix)
        if not op.query:
            if not op.filter:
                rows = self.items.under(prefix, op.limit, op.offset)
            else:
                rows = [r for r in self.items.under(prefix) if matches(r.value, op.filter)][op.offset : op.offset + op.limit]
            return [SearchItem(r.namespace, r.key, r.value, _ts(r.created_at), _ts(r.updated_at)) for r in rows]
        want = op.offset + op.limit
        pool_size = max(50, 4 * want)
        allowed: dict[str, Row] | None = None
        if op.filter:
            allowed = {r.item_id: r for r in self.items.under(prefix) if matches(r.value, op.filter)}
            if not allowed:
                return []
        scored = self._score(op.query, prefix, allowed, pool_size)
        ranked = sorted(scored.values(), key=lambda sr: (-sr[1], -sr[0].updated_at, sr[0].key))
        if len(ranked) < want:
            # InMemoryStore's corner case: fill up with matching items that have no score.
            seen = set(scored)
            rest = allowed.values() if allowed is not None else self.items.under(prefix, want + len(seen))
            ranked += [(r, None) for r in rest if r.item_id not in seen][: want - len(ranked)]
        return [
            SearchItem(r.namespace, r.key, r.value, _ts(r.created_at), _ts(r.updated_at), score=s)
            for r, s in ranked[op.offset : want]
        ]

    def _score(self, query: str, prefix: tuple[str, ...], allowed: dict[str, Row] | None, pool: int) -> dict[str, tuple[Row, float]]:
        """Dense and keyword candidates under ``prefix`` (restricted to ``allowed`` when given), fused."""
        qvec = check_vector(self.embed([query])[0], self.vectors.dim, "query embedding")
        conditions = [Match(NS_FIELD, (ns_path(prefix),))] if prefix else []
        if allowed is not None and len(allowed) <= MAX_ID_FILTER:
            conditions.append(Match(ITEM_FIELD, tuple(allowed)))
            pool = max(pool, len(allowed))
        dense: dict[str, tuple[float, str]] = {}
        for _pid, score, payload in self.vectors._query(qvec, conditions, pool):
            iid = payload.get(ITEM_FIELD)
            if iid and score > dense.get(iid, (-2.0, ""))[0]:
                dense[iid] = (score, payload.get(HASH_FIELD, ""))  # max over an item's texts
        terms = list(dict.fromkeys(self.tokenize(query)))
        hits, df, total = self.items.keyword(prefix, terms, pool)
        idf = {t: math.log(1 + (total - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms}
        norm = sum(idf.values()) or 1.0
        keyword = {row.item_id: (row, sum(idf[t] for t in has) / norm) for row, has in hits}
        rows = {iid: row for iid, (row, _) in keyword.items()}
        missing = [iid for iid in dense if iid not in rows]
        rows.update(allowed if allowed is not None else self.items.get(missing))
        out: dict[str, tuple[Row, float]] = {}
        for iid in dict.fromkeys([*dense, *keyword]):
            row = rows.get(iid)
            if row is None or (allowed is not None and iid not in allowed):
                continue
            cos, digest = dense.get(iid, (0.0, ""))
            if digest != row.index_hash:
                cos = 0.0  # a point of an older value of this item (interrupted update): not its score
            kw = keyword[iid][1] if iid in keyword else 0.0
            out[iid] = (row, self.dense_weight * max(0.0, min(1.0, cos)) + (1 - self.dense_weight) * kw)
        return out

    # --- namespaces ------------------------------------------------------------------------------------
    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = self.items.namespaces()
        if op.match_conditions:
            namespaces = [ns for ns in namespaces if all(_ns_match(c, ns) for c in op.match_conditions)]
        if op.max_depth is not None:
            namespaces = list({ns[: op.max_depth] for ns in namespaces})
        return sorted(namespaces)[op.offset : op.offset + op.limit]


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _value_json(value: Any) -> str:
    """The value as stored, or InvalidInput before anything is written."""
    if not isinstance(value, Mapping):
        raise InvalidInput("value", f"must be a dict (JSON object), got {type(value).__name__}")
    try:
        text = json.dumps(dict(value), ensure_ascii=False, sort_keys=True, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise InvalidInput("value", f"must be JSON-serialisable UTF-8 text without NaN ({exc})") from None
    return text


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings(v, out)
