"""doctor's vector checks: each collection the active embedder uses, on the qdrant-edge shards of the data
directory or the Qdrant server, holds vectors of the embedder's name and dimension."""

from __future__ import annotations

import json

from lumina_memory.stores import ids
from lumina_memory.stores.factory import edge_meta_file

from .doctor_check import FAIL, OK, SKIP, TIMEOUT, WARN, Check, package_version
from .doctor_postgres import PostgresChecks
from .tier_match import distinct_per_user, edge_payloads

VECTOR_KINDS = ("segments", "turns", "knowledge")  # stores.ids.collection_name kinds; a missing one is "not created yet"


class VectorChecks(PostgresChecks):
    # --- long-term -------------------------------------------------------------------------------
    def vector_checks(self) -> list[Check]:
        if self.embedder_name is None or self.embedder_dim is None:
            return [Check("long-term", "dimension", SKIP, "embedder unavailable (see embedder row)")]
        wanted = [ids.collection_name(kind, self.embedder_name, self.embedder_dim) for kind in VECTOR_KINDS]
        if self.settings.qdrant_url:
            return self._qdrant_server(wanted)
        if self.settings.database_url:
            return self.postgres_vector_checks(wanted)
        return self._qdrant_edge(wanted)

    def _dimension_row(self, where: str, found_name: object, found_dim: object) -> Check:
        if found_dim == self.embedder_dim and found_name in (self.embedder_name, None):
            return Check("long-term", "dimension", OK, f"{where}: {found_dim}-d matches {self.embedder_name}")
        return Check("long-term", "dimension", FAIL,
                     f"{where} holds {found_name or '?'} {found_dim}-d vectors but the active embedder is "
                     f"{self.embedder_name} {self.embedder_dim}-d: re-embed into a new collection or restore "
                     "the embedder settings")

    def _qdrant_edge(self, wanted: list[str]) -> list[Check]:
        import qdrant_edge as qe

        meta_file = edge_meta_file()
        version = f"qdrant-edge {package_version('qdrant-edge-py')}"
        root = self.data_dir / "qdrant"
        present = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        others = [name for name in present if name not in wanted]
        out: list[Check] = []
        for collection in wanted:
            shard = root / collection
            if not shard.exists():
                out.append(Check("long-term", "collection", OK, f"{version}: {collection} not created yet"))
                continue
            meta_path = shard / meta_file
            if not meta_path.exists():
                out.append(Check("long-term", "collection", WARN, f"{shard} has no {meta_file}; adopted on open"))
                continue
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            out.append(self._dimension_row(collection, meta.get("lumina_embedder"), meta.get("lumina_dim")))
            if out[-1].status == FAIL:
                continue
            if self.locked_by:
                out.append(self._skip_locked("long-term", "collection"))
                continue
            config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=self.embedder_dim, distance=qe.Distance.Cosine))
            engine = qe.EdgeShard.load(str(shard), config)  # verifies size and distance against the segments
            kind = collection.split('_')[1]
            key = {"segments": "segment_id", "turns": "turn_id"}.get(kind)
            try:
                points = int(engine.count(qe.CountRequest(exact=True)))
                fields = ["user_id"] + ([key] if key else [])
                self.seen[f"per_user:{kind}"] = distinct_per_user(edge_payloads(engine, fields), key)
            finally:
                engine.close()
            self.seen[f"points:{collection.split('_')[1]}"] = points
            out.append(Check("long-term", "collection", OK, f"{version}: {collection}, {points} points"))
        if others:
            out.append(Check("long-term", "other collections", OK,
                             f"not used by {self.embedder_name}: {', '.join(others)}"))
        return out

    def _qdrant_server(self, wanted: list[str]) -> list[Check]:
        from qdrant_client import QdrantClient, models

        s = self.settings
        key = s.qdrant_api_key.get_secret_value() if s.qdrant_api_key else None
        client = QdrantClient(url=s.qdrant_url, api_key=key, timeout=int(TIMEOUT), check_compatibility=False)
        try:
            try:
                version = client.info().version
            except Exception as exc:  # noqa: BLE001 - any transport error means unreachable
                return [Check("long-term", "reachable", FAIL, f"cannot reach Qdrant at {s.qdrant_url}: {exc}")]
            out = [Check("long-term", "reachable", OK, f"qdrant {version} at {s.qdrant_url}")]
            for collection in wanted:
                if not client.collection_exists(collection):
                    out.append(Check("long-term", "collection", OK, f"{collection} not created yet"))
                    continue
                info = client.get_collection(collection)
                meta = info.config.metadata or {}
                vectors = info.config.params.vectors
                size = vectors.size if isinstance(vectors, models.VectorParams) else None
                out.append(self._dimension_row(collection, meta.get("lumina_embedder"), meta.get("lumina_dim", size)))
                if out[-1].status == OK:
                    out.append(Check("long-term", "collection", OK, f"{collection}, {info.points_count} points"))
            return out
        finally:
            client.close()
