"""Settings of what the memory keeps and removes: erasure, backups, privacy, retention, the storage policy and
store upkeep (a group of LuminaSettings, read from the environment with it: ``LUMINA_BACKUP_KEEP`` …)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, Field


class TrustSettings(BaseModel):
    # --- trust: erasure, audit, backups (L10, L11) -----------------------------------------
    erase_token_ttl_seconds: int = Field(
        default=600, ge=10, le=86_400, description="L11: how long an erase confirmation token stays valid."
    )
    backup_location: str | None = Field(
        default=None,
        description="L10: where `backup` and the maintenance graph write snapshots: a folder or s3://bucket/prefix "
        "(unset: <data_dir>/../<data_dir name>-backups).",
    )
    backup_redis_seconds: int = Field(default=1_800, ge=60, description="L10: Redis snapshot every 30 min.")
    backup_archive_seconds: int = Field(default=86_400, ge=60, description="L10: archive tables exported daily.")
    backup_vectors_seconds: int = Field(default=604_800, ge=60, description="L10: vectors fully backed up weekly.")
    backup_keep: int = Field(default=7, ge=1, le=10_000, description="Snapshots kept per location; older ones are pruned.")
    s3_region: str = Field(default="us-east-1", validation_alias=AliasChoices("LUMINA_S3_REGION", "AWS_DEFAULT_REGION"),
                           description="Region of the S3 endpoint.")
    s3_multipart_mb: int = Field(default=8, ge=5, le=5_000, description="Files above this go up in multipart parts.")

    # --- trust: privacy and retention (S7, L9) ---------------------------------------------
    pii_redaction: bool = Field(default=True, description="S7: redact PII before anything is stored or embedded.")
    pii_kinds: tuple[str, ...] = Field(
        default=("email", "phone", "card", "my_number", "ip", "secret"),
        description="S7: which kinds of PII are redacted (email, phone, card, my_number, ip, secret).",
    )
    retention_raw_turns_days: int | None = Field(
        default=30, ge=1,
        description="L3/S7: the conversation log (raw turns) stays in the archive this long (the notes: 7-30 days; "
        "conversations 30); then storage_policy says what leaves: nothing (keep), the turns (A) or the turns to the "
        "cold log (B). None: never considered.",
    )
    retention_segments_days: int | None = Field(default=None, ge=1, description="Segments kept this long (None: forever).")
    retention_knowledge_days: int | None = Field(default=None, ge=1, description="Knowledge items kept this long (None: forever).")
    retention_procedures_days: int | None = Field(
        default=None, ge=1,
        description="A procedure neither recalled, reported on nor taught again this long leaves with all its versions, "
        "unless tagged [IMPORTANT] or taught by a protected memory (None: forever; procedures' own forgetting applies).",
    )
    retention_strategies_days: int | None = Field(
        default=90, ge=1,
        description="S5/S7: the agent's task decompositions and failure patterns (the notes' decomposition patterns: 90 "
        "days) not learnt again or counted on this long leave (None: forever).",
    )
    retention_logs_days: int = Field(default=90, ge=1, description="Activity-log events kept this long (a journal file goes when its reply completes or is recovered).")
    retention_backups_days: int = Field(default=30, ge=1, description="Backups older than this are pruned.")
    storage_policy: Literal["keep", "A", "B"] = Field(
        default="keep",
        description="L9 after the raw-turn retention: 'keep' raw turns; 'A' keeps only summaries in vector search; "
        "'B' moves raw turns to Parquet files (storage_policy_b_location) that deliberate recall reads through DuckDB. "
        "'keep', not the notes' A, by measurement: at 30 days LoCoMo deliberate recall@1024 went from 0.926 to 0.197 "
        "(A) or 0.253 (B, quoting its cold log) and answer@1024 from 0.360 to 0.118 / 0.146 (88 % of the evidence "
        "is older; bench.storage_policy).",
    )
    storage_policy_b_location: str | None = Field(
        default=None, description="L9 policy B: a folder or s3://bucket/prefix for the Parquet logs (unset: <data_dir>/logs)."
    )
    storage_policy_b_recall_items: int = Field(
        default=3, ge=0, le=50,
        description="L9 policy B: a deliberate question also quotes up to this many turns of the cold log (those "
        "sharing most of its terms) in the budget the memories leave; 0: the cold log is read only by cold_turns().",
    )
    upkeep_compact_free_share: float = Field(
        default=0.5, gt=0, le=1,
        description="Maintenance (store_upkeep): the embedded archive file is rewritten whole when, after its CHECKPOINT, "
        "more than this share of it is reclaimable (free blocks, or row slots of deleted rows; DuckDB's VACUUM reclaims "
        "nothing); 1: never rewritten.",
    )
    upkeep_interval_seconds: int = Field(
        default=86_400, ge=0,
        description="Maintenance (store_upkeep) runs at most this often (daily; it reads the whole graph); 0: every run.",
    )
    upkeep_repair_graph: bool = Field(
        default=True,
        description="Maintenance (store_upkeep): graph Segment nodes the archive no longer holds are removed with their "
        "edges (knowledge items stay), and edges joining two users' nodes are removed (a leak); each repair is "
        "recorded in the audit trail and the users' activity logs; off: only reported.",
    )
