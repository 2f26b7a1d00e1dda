"""Issue 49: what each write and each recall costs — the time of each stage and, on a model path, the model calls and
tokens — in one ``lumina.costs`` log line per operation and one record kept in the archive (stores.costs_sql) that
``stats`` and ``lumina-memory report`` summarise (nodes.costs_summary).

An operation is ``write`` (a turn's way into the short-term tier), ``flush`` (a closed segment's way down the tiers:
summary, emotion, knowledge, lifecycle encoding), ``recall`` (one query), ``prime`` (a reply's primed context),
``reply`` or ``maintain`` (a maintenance run). ``operation(name, services)`` opens one; ``stage(name)`` times a
named part of it; a stage that raises is kept with its time and the operation's ``error`` names it
(``"stage: ErrorType"``). Code deeper down times a part of the stage running with ``part(name)`` (kept as
``<stage>.<name>``: ``archive_to_duckdb.encode``) without holding the operation. While an operation is the current
one, every LangChain model call made in its context (threads that copy the context included, as LangChain's own
executors do) is counted by ``ModelUsage``: one call per model start, tokens from each answer's ``usage_metadata``.
One configure hook carries it, registered once (``get_usage_metadata_callback`` registers a new hook on every call,
a list that would grow with every operation of a long-running process). Embeddings through OpenAIEmbeddings report no
usage to LangChain's callbacks: their time shows in the stage that embeds.

The record's ``path`` is the model path the services' steps take (``model_path``: ``offline`` or ``llm``): an offline
operation says ``offline`` and 0 calls; a step that falls back to its offline method after a failed call keeps
``llm``, its calls counted, and says so in its own log and stats. A record holds no user id and no text.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from contextvars import ContextVar
from typing import Any, Callable

from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook

log = logging.getLogger("lumina.costs")
DAY = 86_400.0


class ModelUsage(UsageMetadataCallbackHandler):
    """Model calls and tokens of one operation, per model (``by_model``: name -> calls, input/output tokens) and per
    stage or part that made them (``by_stage``; ``where()`` names the one running). A call made while another
    operation is the current one (one run inside this one) is that operation's alone."""

    def __init__(self, where: Callable[[], str] = lambda: "") -> None:
        super().__init__()
        self.where = where
        self.by_model: dict[str, dict[str, int]] = {}
        self.by_stage: dict[str, dict[str, int]] = {}
        self._model_of: dict[uuid.UUID, tuple[str, str]] = {}

    def _started(self, serialized: dict[str, Any] | None, run_id: uuid.UUID, kwargs: dict[str, Any]) -> None:
        current = _USAGE.get()
        if current is not None and current is not self:
            return  # an operation inside this one made the call (a flush inside maintenance): it counts it
        params = kwargs.get("invocation_params") or {}
        name = str(params.get("model") or params.get("model_name") or (serialized or {}).get("name") or "unnamed")
        stage = self.where()
        with self._lock:
            self._model_of[run_id] = (name, stage)
            for entry in self._entries(name, stage):
                entry["calls"] += 1

    def _entries(self, name: str, stage: str) -> list[dict[str, int]]:
        empty = {"calls": 0, "input_tokens": 0, "output_tokens": 0}
        return [self.by_model.setdefault(name, dict(empty)), self.by_stage.setdefault(stage or "(none)", dict(empty))]

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs) -> None:
        self._started(serialized, run_id, kwargs)

    def on_llm_start(self, serialized, prompts, *, run_id, **kwargs) -> None:
        self._started(serialized, run_id, kwargs)

    def on_llm_end(self, response: LLMResult, *, run_id=None, **kwargs) -> None:
        with self._lock:
            started = self._model_of.pop(run_id, None)
        if started is None:
            return  # a call this operation did not count at its start
        super().on_llm_end(response, **kwargs)  # LangChain's own per-model usage_metadata, kept as it counts
        used_in = used_out = 0
        for generation in (g for batch in response.generations for g in batch):
            message = generation.message if isinstance(generation, ChatGeneration) else None
            usage = message.usage_metadata if isinstance(message, AIMessage) else None
            if usage:
                used_in += int(usage.get("input_tokens") or 0)
                used_out += int(usage.get("output_tokens") or 0)
        with self._lock:
            for entry in self._entries(*started):
                entry["input_tokens"] += used_in
                entry["output_tokens"] += used_out

    def on_llm_error(self, error: BaseException, *, run_id=None, **kwargs) -> None:
        with self._lock:
            self._model_of.pop(run_id, None)

    def totals(self) -> tuple[int, int, int]:
        """(calls, input tokens, output tokens) over every model."""
        with self._lock:
            values = list(self.by_model.values())
        return (sum(v["calls"] for v in values), sum(v["input_tokens"] for v in values),
                sum(v["output_tokens"] for v in values))


_USAGE: ContextVar[ModelUsage | None] = ContextVar("lumina_costs_usage", default=None)
register_configure_hook(_USAGE, inheritable=True)
_OPERATION: ContextVar["Operation | None"] = ContextVar("lumina_costs_operation", default=None)


class _Stage:
    """Times one stage of an operation (``Operation.stage``)."""

    __slots__ = ("operation", "name", "started")

    def __init__(self, operation: "Operation", name: str):
        self.operation, self.name = operation, name

    def __enter__(self) -> "_Stage":
        self.operation.current = self.name
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self.operation.add_stage(self.name, (time.perf_counter() - self.started) * 1000)
        if kind is not None and not self.operation.error:
            self.operation.error = f"{self.name}: {kind.__name__}"


class Operation:
    """One operation being recorded: its stages so far, its model usage, its error."""

    def __init__(self, op: str, services: Any):
        self.op, self.services = op, services
        self.ts, self.started = time.time(), time.perf_counter()
        self.stages: dict[str, float] = {}
        self.error = ""
        self.current = ""  # the stage running (parts are named after it)
        self.usage = ModelUsage(lambda: self.current)

    def stage(self, name: str) -> _Stage:
        return _Stage(self, name)

    def add_stage(self, name: str, ms: float) -> None:
        """A stage's milliseconds (added to what the stage took before in this operation)."""
        self.stages[name] = round(self.stages.get(name, 0.0) + ms, 3)

    def active(self) -> "_Active":
        """While entered, model calls made in this context count for this operation."""
        return _Active(self)

    def record(self) -> dict[str, Any]:
        calls, used_in, used_out = self.usage.totals()
        return {"ts": self.ts, "op": self.op, "path": model_path(self.services),
                "ms": round((time.perf_counter() - self.started) * 1000, 3), "stages": dict(self.stages),
                "error": self.error, "calls": calls, "input_tokens": used_in, "output_tokens": used_out,
                "models": {k: dict(v) for k, v in self.usage.by_model.items()},
                "stage_calls": {k: dict(v) for k, v in self.usage.by_stage.items()}}

    def finish(self) -> dict[str, Any]:
        """Log the operation's line and keep its record (a store that is down loses the record, never the work)."""
        record = self.record()
        log.info("op=%s path=%s ms=%.1f calls=%d input_tokens=%d output_tokens=%d stages=%s%s", record["op"],
                 record["path"], record["ms"], record["calls"], record["input_tokens"], record["output_tokens"],
                 ",".join(f"{k}:{v:.1f}" for k, v in record["stages"].items()),
                 f" error={record['error'].replace(' ', '')}" if record["error"] else "")  # key=value pairs, no spaces
        keep(self.services, record)
        return record


class _Active:
    __slots__ = ("operation", "tokens")

    def __init__(self, operation: Operation):
        self.operation = operation

    def __enter__(self) -> None:
        self.tokens = (_USAGE.set(self.operation.usage), _OPERATION.set(self.operation))

    def __exit__(self, *exc) -> None:
        _USAGE.reset(self.tokens[0])
        _OPERATION.reset(self.tokens[1])


class part:
    """``with part("summary"):`` times a part of the stage running now, kept as the stage ``<stage>.summary`` (added
    up when the part runs once per segment); outside a recorded operation it does nothing."""

    __slots__ = ("operation", "name", "outer", "started")

    def __init__(self, name: str):
        self.operation, self.name = _OPERATION.get(), name

    def __enter__(self) -> "part":
        if self.operation is not None:  # model calls made inside count for the part
            self.outer = self.operation.current
            self.name = f"{self.outer}.{self.name}" if self.outer else self.name
            self.operation.current = self.name
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if self.operation is not None:
            self.operation.add_stage(self.name, (time.perf_counter() - self.started) * 1000)
            self.operation.current = self.outer


class _Off:
    """What an operation is when costs_record is off: every part of it does nothing."""

    stages: dict[str, float] = {}

    def stage(self, name: str) -> "_Off":
        return self

    def add_stage(self, name: str, ms: float) -> None:
        pass

    def __enter__(self) -> "_Off":
        return self

    def __exit__(self, *exc) -> None:
        pass


OFF = _Off()


def model_path(services: Any) -> str:
    """``llm`` when the services' steps call a chat model (one given, or an OpenAI-compatible service set), else
    ``offline`` — what summaries, emotion, knowledge and replies choose by (nodes.services, nodes.respond)."""
    settings = services.settings
    chat_model = getattr(services, "chat_model", None)
    return "llm" if chat_model is not None or (settings.use_openai and settings.llm != "offline") else "offline"


def recording(services: Any) -> bool:
    settings = getattr(services, "settings", None)
    return bool(getattr(settings, "costs_record", False))


class operation:
    """``with operation("recall", services) as op: with op.stage("rank"): ...`` — one operation recorded when the
    block ends, with the error that ended it named. costs_record off: ``op`` does nothing."""

    def __init__(self, op: str, services: Any):
        self.current: Operation | _Off = Operation(op, services) if recording(services) else OFF
        self._active: _Active | None = None

    def __enter__(self) -> Operation | _Off:
        if isinstance(self.current, Operation):
            self._active = self.current.active()
            self._active.__enter__()
        return self.current

    def __exit__(self, kind, exc, tb) -> None:
        current = self.current
        if not isinstance(current, Operation):
            return
        self._active.__exit__(kind, exc, tb)
        if kind is not None and not current.error:
            current.error = kind.__name__
        current.finish()


def recorded(op: str, stages: Callable[[Any], dict[str, float]] | None = None):
    """Decorator: the call (whose first argument is the services) is one operation; ``stages(result)`` gives the
    stages the function timed itself (priming's ``timings``), else the call is one stage named after it."""

    def wrap(fn):
        @functools.wraps(fn)
        def call(services, *args, **kwargs):
            with operation(op, services) as current:
                with current.stage(fn.__name__):
                    result = fn(services, *args, **kwargs)
                if stages is not None:  # the function's own stages stand for the whole call's
                    current.stages.pop(fn.__name__, None)
                    for name, ms in stages(result).items():
                        current.add_stage(name, ms)
                return result

        return call

    return wrap


def keep(services: Any, record: dict[str, Any]) -> None:
    """Keep ``record`` in the archive's cost table, batched; a written batch also removes what is past
    costs_keep_days."""
    settings = services.settings
    try:
        services.stores.archive.op_costs().add(record, settings.costs_batch_rows, settings.costs_batch_seconds,
                                               settings.costs_keep_days)
    except Exception as exc:  # noqa: BLE001 - a figure about the work never fails the work; the line says so
        log.warning("cost record of op=%s not kept (%s: %s)", record["op"], type(exc).__name__, exc)
