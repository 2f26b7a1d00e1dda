"""The CLI's help epilogue: where data lives and which variables select production backends."""

from __future__ import annotations

from lumina_memory.stores.settings import LuminaSettings

# What each production variable reaches; the variable's name is read from LuminaSettings (its first alias).
_PRODUCTION_VARIABLES = {
    "redis_url": "mid-term tier on Redis/Valkey (redis://, rediss:// for TLS, Redis Cluster)",
    "qdrant_url": "long-term vectors on a Qdrant server", "qdrant_api_key": "its API key",
    "neo4j_uri": "associative graph on Neo4j/Aura", "neo4j_user": "its user", "neo4j_password": "its password",
    "openai_api_key": "an LLM for summaries, extraction and replies (unset: offline methods)",
    "openai_base_url": "an OpenAI-compatible endpoint", "s3_endpoint_url": "S3 endpoint for s3:// backups",
    "database_url": "server mode on PostgreSQL (pgvector): many processes share one memory",
}


def help_epilog() -> str:
    """Where data lives and which variables select production backends, from the settings themselves."""
    fields = LuminaSettings.model_fields
    rows = [(fields[name].validation_alias.choices[0], what) for name, what in _PRODUCTION_VARIABLES.items()]
    width = max(len(env) for env, _ in rows)
    return "\n".join([
        f"data directory: LUMINA_DATA_DIR (default: ./{fields['data_dir'].default}, relative to the working directory)",
        "  holds the embedded engines' files; any setting is LUMINA_<NAME> in the environment or .env.",
        "production backends (each unset: the embedded default; check them with `lumina-memory doctor`):",
        *(f"  {env:<{width}}  {what}" for env, what in rows),
    ])
