"""Turn-level vectors: every archived turn as one point, for fine-grained recall (issue 3).

The long-term collection holds one centroid per *segment* (promoted ones only); answering "what did
Caroline say about the support group" needs the single turn. This is a second collection of the same
engine (``lumina_turns_<embedder>_<dim>``), written by ``upsert_long_term`` for every closed segment,
with payload ``user_id, turn_id, segment_id, source_id, speaker, characters, text, ts, end_ts``. It reuses the
vector adapters (validation, per-user filter on every read, batching), so isolation works the same way:
point ids are uuid5(user, "turn:"+turn_id) and every search filters on user_id.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import ids
from .models import VectorHit
from .vector_filters import TENANT_FIELD, PreparedPoint, check_id_list, check_vector, user_conditions
from .records import passage_point_id, turn_point_id  # noqa: F401 - their home is records
from .vectors_edge import EdgeVectorStore, _edge_filter

TURN_KIND = "turns"


class TurnPointsMixin:
    """Adds ``upsert_turns`` to a VectorStoreBase adapter, and ``delete`` by turn instead of by segment."""

    def delete(self, user_id: str, turn_ids: Sequence[str]) -> int:  # type: ignore[override]
        """Remove these turns' points of this user; returns how many there were (0 for ids that are
        missing or another user's, so a second call returns 0)."""
        self._require_open()  # type: ignore[attr-defined]
        user = ids.validate_id(user_id, "user_id")
        return self._delete_matching(user, "turn_id", check_id_list(turn_ids, "turn_ids"))  # type: ignore[attr-defined]

    def _point_search(self, user_id: str, vector: Sequence[float], limit: int) -> tuple[list, list[float]] | None:
        """(conditions, query) of ``search_point_ids``, both checked; None when ``limit`` asks for nothing."""
        self._require_open()  # type: ignore[attr-defined]
        conditions = user_conditions(user_id)
        query = check_vector(vector, self.dim, "vector")  # type: ignore[attr-defined]
        return (conditions, query) if limit > 0 else None

    def upsert_turns(self, user_id: str, turns: Sequence[Any], vectors: Sequence[Sequence[float]]) -> int:
        """``turns``: objects or dicts with turn_id, source_id, speaker, text, ts, segment_id; a dict with
        ``passage`` (its number) and ``text`` the passage's is a passage point of that turn."""
        self._require_open()  # type: ignore[attr-defined]
        user_id = ids.validate_id(user_id, "user_id")
        if len(turns) != len(vectors):
            raise ValueError("one vector per turn")
        points: dict[str, PreparedPoint] = {}
        for i, (turn, vector) in enumerate(zip(turns, vectors)):
            get = turn.get if isinstance(turn, dict) else (lambda k, t=turn: getattr(t, k))
            turn_id = ids.validate_id(get("turn_id"), f"turns[{i}].turn_id")
            passage = turn.get("passage") if isinstance(turn, dict) else None
            pid = turn_point_id(user_id, turn_id) if passage is None else passage_point_id(user_id, turn_id, int(passage))
            payload = {
                "user_id": user_id,
                "turn_id": turn_id,
                "segment_id": get("segment_id") or "",
                "source_id": get("source_id"),
                "speaker": get("speaker"),
                "characters": [get("speaker")],
                "text": get("text"),
                "ts": float(get("ts")),
                "end_ts": float(get("ts")),
            }
            if passage is not None:
                payload["passage"] = int(passage)
            points[pid] = PreparedPoint(pid, check_vector(vector, self.dim, f"vectors[{i}]"), payload)  # type: ignore[attr-defined]
        self._write_all(list(points.values()))  # type: ignore[attr-defined]
        return len(points)


class EdgeTurnVectors(TurnPointsMixin, EdgeVectorStore):
    """Turn points on qdrant-edge."""

    def search_point_ids(self, user_id: str, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """This user's nearest turn points as (point id, score), best first, without payloads: the caller
        maps ids back through ``turn_point_id`` of its own turns, so a foreign id could never match."""
        import qdrant_edge as qe

        scope = self._point_search(user_id, vector, limit)
        if scope is None:
            return []
        conditions, query = scope
        request = qe.QueryRequest(
            limit=limit, query=qe.Query.Nearest(query), filter=_edge_filter(conditions), with_payload=False,
            with_vector=False,
        )
        return [(str(p.id), float(p.score)) for p in self._shard.query(request)]

    def vectors_of(self, user_id: str, turn_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of this user's turns as one float32 array each (missing ones left out)."""
        self._require_open()
        ids.validate_id(user_id, "user_id")
        wanted = {turn_point_id(user_id, t): t for t in dict.fromkeys(turn_ids)}
        out: dict[str, np.ndarray] = {}
        points = list(wanted)
        for start in range(0, len(points), _RETRIEVE_BATCH):
            records = self._shard.retrieve(points[start : start + _RETRIEVE_BATCH], with_payload=[TENANT_FIELD], with_vector=True)
            _collect_own(records, user_id, wanted, out)
        return out


_RETRIEVE_BATCH = 1000


def _collect_own(records, user_id: str, wanted: dict[str, str], out: dict[str, np.ndarray]) -> None:
    """Each retrieved point's vector under its turn id, if the point is this user's (ids are uuid5 of the
    user, so another user's point here would mean a collision; the payload check makes it impossible)."""
    for record in records:
        if (record.payload or {}).get(TENANT_FIELD) != user_id:
            continue
        vec = record.vector
        if isinstance(vec, dict):
            vec = next(iter(vec.values()), None)
        if vec:
            out[wanted[str(record.id)]] = np.asarray(vec, dtype=np.float32)


def client_turn_vectors():
    from qdrant_client import models

    from .vectors_client import ClientVectorStore, _client_filter

    class ClientTurnVectors(TurnPointsMixin, ClientVectorStore):
        def search_point_ids(self, user_id, vector, limit):
            scope = self._point_search(user_id, vector, limit)
            if scope is None:
                return []
            conditions, query = scope
            with self._guard("search"):
                result = self._client.query_points(
                    self.collection, query=query, query_filter=_client_filter(conditions), limit=limit,
                    with_payload=False, with_vectors=False,
                )
            return [(str(p.id), float(p.score)) for p in result.points]

        def vectors_of(self, user_id, turn_ids):
            self._require_open()
            ids.validate_id(user_id, "user_id")
            wanted = {turn_point_id(user_id, t): t for t in dict.fromkeys(turn_ids)}
            out: dict[str, np.ndarray] = {}
            points = list(wanted)
            for start in range(0, len(points), _RETRIEVE_BATCH):
                with self._guard("get"):
                    records = self._client.retrieve(
                        self.collection, ids=points[start : start + _RETRIEVE_BATCH],
                        with_payload=models.PayloadSelectorInclude(include=[TENANT_FIELD]), with_vectors=True,
                    )
                _collect_own(records, user_id, wanted, out)
            return out

    return ClientTurnVectors


def pg_turn_vectors():
    """The pgvector class (imported on demand: the embedded default never loads psycopg)."""
    from .vectors_pg import PgVectorStore

    class PgTurnVectors(TurnPointsMixin, PgVectorStore):
        """Turn points in a pgvector table."""

        def search_point_ids(self, user_id, vector, limit):
            scope = self._point_search(user_id, vector, limit)
            if scope is None:
                return []
            conditions, query = scope
            return [(pid, score) for pid, score, _ in self._query(query, conditions, limit, [TENANT_FIELD])]

        def vectors_of(self, user_id, turn_ids):
            wanted = {turn_point_id(user_id, t): t for t in dict.fromkeys(turn_ids)}
            return {wanted[pid]: vec for pid, vec in self.vectors_by_id(user_id, list(wanted)).items()}

    return PgTurnVectors
