"""Knowledge vectors: every knowledge item as one point, so a question finds a fact by meaning (issue 18, A4).

A third collection of the same engine (``lumina_knowledge_<embedder>_<dim>``, stores.ids.collection_name),
beside segments and turns. Cue words only find a fact when the question uses them; a vector finds 「紅茶にした」
for "what does she drink now?" across languages. The archive's knowledge table stays the truth; these points
mirror it (nodes.knowledge.tiers writes them after the archive commits). Payload: ``user_id, item_id, subject,
attribute, value, polarity, status, valid_from, valid_to, episode_ids`` (polarity "negative": the user said it is
no longer so).

It reuses the vector adapters (validation, per-user filter on every read, batching, backups, rewrite), so
isolation works as for segments and turns: point ids are uuid5(user, "knowledge:"+item_id) and every search
filters on user_id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import ids
from .errors import InvalidInput
from .vector_filters import TENANT_FIELD, Patch, PreparedPoint, batched, check_fields, check_id_list, check_vector
from .vectors_edge import EdgeVectorStore

KNOWLEDGE_KIND = "knowledge"
ITEM_FIELD = "item_id"
PAYLOAD_FIELDS = ("item_id", "subject", "attribute", "value", "polarity", "status", "valid_from", "valid_to",
                  "episode_ids")


def knowledge_point_id(user_id: str, item_id: str) -> str:
    return ids.point_id(user_id, f"knowledge:{item_id}")


def _payload(user_id: str, item: Mapping[str, Any], where: str) -> dict[str, Any]:
    item_id = ids.validate_id(item.get("item_id"), f"{where}.item_id")
    episodes = item.get("episode_ids") or []
    if isinstance(episodes, str):
        raise InvalidInput(f"{where}.episode_ids", "must be a list of ids, not a single string")
    valid_to = item.get("valid_to")
    payload = {
        "user_id": user_id,
        "item_id": item_id,
        "subject": item.get("subject"),
        "attribute": item.get("attribute"),
        "value": item.get("value"),
        "polarity": item.get("polarity", "positive"),
        "status": item.get("status"),
        "valid_from": float(item["valid_from"]),
        "valid_to": None if valid_to is None else float(valid_to),
        "episode_ids": [ids.validate_id(e, f"{where}.episode_ids[]") for e in episodes],
    }
    for field in ("subject", "attribute", "value", "polarity", "status"):
        if not isinstance(payload[field], str) or not payload[field]:
            raise InvalidInput(f"{where}.{field}", "must be a non-empty string")
    return payload


class KnowledgePointsMixin:
    """Adds item-level writes and reads to a VectorStoreBase adapter; ``delete`` goes by item, not segment."""

    def upsert_items(self, user_id: str, items: Sequence[Mapping[str, Any]], vectors: Sequence[Sequence[float]]) -> int:
        """``items``: knowledge rows (item_id, subject, attribute, value, polarity, status, valid_from, valid_to,
        episode_ids), one vector each. Every item is checked before anything is written. Returns points written."""
        self._require_open()  # type: ignore[attr-defined]
        user_id = ids.validate_id(user_id, "user_id")
        if len(items) != len(vectors):
            raise InvalidInput("vectors", "one vector per item")
        points: dict[str, PreparedPoint] = {}
        for i, (item, vector) in enumerate(zip(items, vectors)):
            payload = _payload(user_id, item, f"items[{i}]")
            pid = knowledge_point_id(user_id, payload["item_id"])
            points[pid] = PreparedPoint(pid, check_vector(vector, self.dim, f"vectors[{i}]"), payload)  # type: ignore[attr-defined]
        self._write_all(list(points.values()))  # type: ignore[attr-defined]
        return len(points)

    def delete(self, user_id: str, item_ids: Sequence[str]) -> int:  # type: ignore[override]
        """Remove these items' points of this user; returns how many there were (0 for ids that are missing
        or another user's, so a second call returns 0)."""
        self._require_open()  # type: ignore[attr-defined]
        user = ids.validate_id(user_id, "user_id")
        return self._delete_matching(user, ITEM_FIELD, check_id_list(item_ids, "item_ids"))  # type: ignore[attr-defined]

    def set_episodes(self, user_id: str, episodes_by_item: Mapping[str, Sequence[str]]) -> int:
        """New ``episode_ids`` for this user's existing item points (a source episode was forgotten), the
        rest of the payload kept; returns points changed (missing or foreign items: skipped)."""
        self._require_open()  # type: ignore[attr-defined]
        user = ids.validate_id(user_id, "user_id")
        if not isinstance(episodes_by_item, Mapping):
            raise InvalidInput("episodes_by_item", "must be a mapping of item id to episode ids")
        wanted = {knowledge_point_id(user, ids.validate_id(item, "episodes_by_item key")):
                  check_fields({"episode_ids": check_id_list(episodes, "episode_ids")}, "episodes_by_item")
                  for item, episodes in episodes_by_item.items()}
        patches = []
        for chunk in batched(list(wanted), 1_000):
            for pid, payload in self._retrieve(list(chunk), [TENANT_FIELD]):  # type: ignore[attr-defined]
                if payload.get(TENANT_FIELD) == user and pid in wanted:
                    patches.append(Patch(pid, None, wanted[pid]))
        for batch in batched(patches, self.batch_size):  # type: ignore[attr-defined]
            self._patch(batch)  # type: ignore[attr-defined]
        return len(patches)

    def search_items(self, user_id: str, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """This user's nearest items as (item_id, cosine), best first."""
        hits = self.search(user_id, vector, limit, fields=(ITEM_FIELD,))  # type: ignore[attr-defined]
        return [(str(h.payload[ITEM_FIELD]), float(h.score)) for h in hits if h.payload.get(ITEM_FIELD)]

    def items_of(self, user_id: str, item_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Stored payloads of this user's items (missing ones left out), keyed by item id."""
        self._require_open()  # type: ignore[attr-defined]
        user = ids.validate_id(user_id, "user_id")
        wanted = {knowledge_point_id(user, i): i for i in check_id_list(item_ids, "item_ids")}
        out: dict[str, dict[str, Any]] = {}
        for chunk in batched(list(wanted), 1_000):
            for pid, payload in self._retrieve(list(chunk)):  # type: ignore[attr-defined]
                if payload.get(TENANT_FIELD) == user and pid in wanted:
                    out[wanted[pid]] = payload
        return out


class EdgeKnowledgeVectors(KnowledgePointsMixin, EdgeVectorStore):
    """Knowledge points on qdrant-edge."""


def client_knowledge_vectors():
    """The qdrant-client class (imported on demand, as for turn vectors: the embedded default never loads it)."""
    from .vectors_client import ClientVectorStore

    class ClientKnowledgeVectors(KnowledgePointsMixin, ClientVectorStore):
        """Knowledge points on a Qdrant server (or qdrant-client's local mode)."""

    return ClientKnowledgeVectors


def pg_knowledge_vectors():
    """The pgvector class (imported on demand: the embedded default never loads psycopg)."""
    from .vectors_pg import PgVectorStore

    class PgKnowledgeVectors(KnowledgePointsMixin, PgVectorStore):
        """Knowledge points in a pgvector table."""

    return PgKnowledgeVectors
