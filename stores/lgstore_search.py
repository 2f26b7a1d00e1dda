"""Query search of the LangGraph store (stores.langgraph_store): candidates, exact cosines, the order.

Candidates come from two channels under the search's namespace prefix (and its filter): the nearest vector
points, asking for more until enough items are scored, and the items sharing the query's terms. Every
candidate gets its exact cosine — its best-matching indexed text, as LangGraph's stores pool an item's
vectors — which is the result's ``score``. The order fuses it with keyword coverage:

    relevance = dense_weight · max(0, cosine) + (1 − dense_weight) · keyword coverage

A point whose text hash is not its item's current one (an update interrupted between the vectors and the
row) is never counted. Mixed into LuminaStore, whose items, vectors, embedding, tokenizer and weight it uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from langgraph.store.base import SearchOp

from . import lgstore_filters as filters
from .kv_duckdb import Row, ns_path
from .lgstore_embed import StoreEmbedding
from .protocols_files import ItemTable
from .vector_filters import Match, VectorStoreBase, batched, check_vector

ITEM_FIELD, NS_FIELD, HASH_FIELD = "lg_item", "lg_ns", "lg_hash"  # payload of the store's vector points
MAX_ID_FILTER = 2_000  # a filtered search restricts the vector query to at most this many candidate ids


class QuerySearch:
    __slots__ = ()
    items: ItemTable
    vectors: VectorStoreBase
    embedding: StoreEmbedding
    tokenize: Callable[[str], list[str]]
    dense_weight: float

    def _ranked(self, op: SearchOp, prefix: tuple[str, ...], alive_at: float | None) -> list[tuple[Row, float | None]]:
        """The matching items in result order with their cosine, through offset + limit at least."""
        want = op.offset + op.limit
        allowed: dict[str, Row] | None = None
        if op.filter:
            allowed = {r.item_id: r for r in self.items.under(prefix, alive_at=alive_at)
                       if filters.keeps(r.value, op.filter)}
            if not allowed:
                return []
        qvec = check_vector(self.embedding.embed_query(op.query), self.vectors.dim, "query embedding")
        cosine, rows = self._dense(qvec, prefix, allowed, want, alive_at)
        keyword = self._keyword(op.query, prefix, allowed, max(50, 4 * want), alive_at)
        missing = {iid: row for iid, (row, _) in keyword.items() if iid not in cosine}
        rows.update(missing)
        cosine.update(self._cosine_of(qvec, missing))
        relevance = {iid: self.dense_weight * max(0.0, cos) + (1 - self.dense_weight) * keyword.get(iid, (None, 0.0))[1]
                     for iid, cos in cosine.items()}
        order = sorted(cosine, key=lambda iid: (-relevance[iid], -cosine[iid], -rows[iid].updated_at, rows[iid].key))
        ranked: list[tuple[Row, float | None]] = [(rows[iid], cosine[iid]) for iid in order]
        if len(ranked) < want:
            # InMemoryStore's corner case: fill up with matching items that have no vector to score.
            rest = allowed.values() if allowed is not None else self.items.under(prefix, want + len(ranked), 0, alive_at)
            ranked += [(r, None) for r in rest if r.item_id not in cosine][: want - len(ranked)]
        return ranked

    def _dense(self, qvec: list[float], prefix: tuple[str, ...], allowed: dict[str, Row] | None, want: int,
               alive_at: float | None) -> tuple[dict[str, float], dict[str, Row]]:
        """Each item's best cosine among the nearest points under ``prefix`` (restricted to ``allowed``),
        asking for more points until ``want`` items are scored or every point was seen."""
        conditions = [Match(NS_FIELD, (ns_path(prefix),))] if prefix else []
        if allowed is not None and len(allowed) <= MAX_ID_FILTER:
            conditions.append(Match(ITEM_FIELD, tuple(allowed)))
        limit = max(50, 4 * want)
        rows: dict[str, Row] = dict(allowed or {})
        while True:
            hits = self.vectors.search_where(qvec, conditions, limit)
            found = (p.get(ITEM_FIELD) for _, _, p in hits)
            unseen = list(dict.fromkeys(iid for iid in found if iid and iid not in rows))
            if allowed is None:
                rows.update(self.items.get(unseen, alive_at))
            best = self._best(hits, rows, allowed)
            if len(best) >= want or len(hits) < limit:
                return best, rows
            limit *= 4

    def _cosine_of(self, qvec: list[float], rows: Mapping[str, Row]) -> dict[str, float]:
        """The exact best cosine of each item of ``rows`` (items found by their keywords alone)."""
        best: dict[str, float] = {}
        for chunk in batched(list(rows), MAX_ID_FILTER):
            conditions = [Match(ITEM_FIELD, tuple(chunk))]
            count = self.vectors.count_where(conditions)
            if count:
                best.update(self._best(self.vectors.search_where(qvec, conditions, count), rows, None))
        return best

    @staticmethod
    def _best(hits: list[tuple[str, float, dict]], rows: Mapping[str, Row], allowed: Mapping[str, Row] | None) -> dict[str, float]:
        best: dict[str, float] = {}
        for _pid, score, payload in hits:
            iid = payload.get(ITEM_FIELD)
            row = rows.get(iid)
            if row is None or (allowed is not None and iid not in allowed):
                continue
            if payload.get(HASH_FIELD, "") != row.index_hash:
                continue  # a point of an older value of this item (an interrupted update): not its score
            if score > best.get(iid, -math.inf):
                best[iid] = float(score)  # the item's best-matching text, as LangGraph's stores pool
        return best

    def _keyword(self, query: str, prefix: tuple[str, ...], allowed: Mapping[str, Row] | None, pool: int,
                 alive_at: float | None) -> dict[str, tuple[Row, float]]:
        """Items sharing terms with ``query``, each with its IDF-weighted coverage of the query's terms.

        A tokenizer with ``split_query`` (nodes.text.transliterate.CrossTerms) also gives keys standing for
        query terms in the other script (「ボブ」 for "Bob"): an item holding a term or any of its keys covers
        that term once, at the rarer of the two's IDF, and the coverage is over the query's own terms, so
        keys that match nothing change no score."""
        split = getattr(self.tokenize, "split_query", None)
        terms, alias = split(query) if split is not None else (list(dict.fromkeys(self.tokenize(query))), {})
        hits, df, total = self.items.keyword(prefix, [*terms, *alias], pool, alive_at)
        idf = {t: math.log(1 + (total - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in [*terms, *alias]}
        norm = sum(idf[t] for t in terms) or 1.0
        out: dict[str, tuple[Row, float]] = {}
        for row, has in hits:
            if allowed is not None and row.item_id not in allowed:
                continue
            covered: dict[str, float] = {}
            for t in has:
                source = alias.get(t, t)
                if source in idf:
                    covered[source] = max(covered.get(source, 0.0), min(idf[t], idf[source]) if t != source else idf[t])
            out[row.item_id] = (row, sum(covered.values()) / norm)
        return out
