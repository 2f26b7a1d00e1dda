"""S8: the OpenAI-compatible models, built in one place from the settings, and their failures to answer named.

A service that refuses the connection, times out, refuses the key or does not serve the model raises
``ModelUnavailable`` naming the kind of model, the model, the address and the offline setting — not the client
library's traceback. Steps with an offline method (summaries, emotion readings, knowledge extraction) catch it, run
that method, and say so in their path and log; steps without one (embeddings, replies) let it reach the caller.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import openai
from langchain_openai import ChatOpenAI

from lumina_memory.stores.errors import ModelUnavailable
from lumina_memory.stores.settings import LuminaSettings

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
_UNANSWERED = (openai.APIConnectionError, openai.AuthenticationError, openai.PermissionDeniedError,
               openai.NotFoundError)
_T = TypeVar("_T")


def service_url(settings: LuminaSettings) -> str:
    return settings.openai_base_url or OPENAI_DEFAULT_URL


def api_key(settings: LuminaSettings) -> str:
    # A local OpenAI-compatible server often takes any key; the client library insists on one.
    return settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused"


def _detail(exc: BaseException) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "no answer in time (LUMINA_OPENAI_TIMEOUT_SECONDS)"
    if isinstance(exc, openai.APIConnectionError):
        root: BaseException = exc
        while (root.__cause__ or root.__context__) is not None:  # the socket's own words: "Connection refused"
            root = root.__cause__ or root.__context__  # type: ignore[assignment]
        return f"cannot connect ({type(root).__name__}: {root})"
    if isinstance(exc, openai.AuthenticationError):
        return "the API key was refused (401)"
    if isinstance(exc, openai.PermissionDeniedError):
        return "the API key may not use this model (403)"
    return "the service does not serve this model or path (404)"


def named(exc: BaseException, kind: str, model: str, where: str) -> ModelUnavailable | None:
    """``exc`` as ModelUnavailable when it says the service did not answer; None for any other failure."""
    return ModelUnavailable(kind, model, where, _detail(exc)) if isinstance(exc, _UNANSWERED) else None


def answered(call: Callable[[], _T], kind: str, model: str, where: str) -> _T:
    """``call()``, its unanswered-service errors raised as ModelUnavailable."""
    try:
        return call()
    except _UNANSWERED as exc:
        raise named(exc, kind, model, where) from exc  # type: ignore[misc]


class NamedChatOpenAI(ChatOpenAI):
    """ChatOpenAI whose every call (invoke, stream, tools, structured output, async) raises ModelUnavailable when the
    service does not answer."""

    service_where: str = OPENAI_DEFAULT_URL

    def _unavailable(self, exc: BaseException) -> ModelUnavailable:
        return ModelUnavailable("chat model", self.model_name, self.service_where, _detail(exc))

    def _generate(self, *args: Any, **kwargs: Any):
        try:
            return super()._generate(*args, **kwargs)
        except _UNANSWERED as exc:
            raise self._unavailable(exc) from exc

    async def _agenerate(self, *args: Any, **kwargs: Any):
        try:
            return await super()._agenerate(*args, **kwargs)
        except _UNANSWERED as exc:
            raise self._unavailable(exc) from exc

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator:
        try:
            yield from super()._stream(*args, **kwargs)
        except _UNANSWERED as exc:
            raise self._unavailable(exc) from exc

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator:
        try:
            async for chunk in super()._astream(*args, **kwargs):
                yield chunk
        except _UNANSWERED as exc:
            raise self._unavailable(exc) from exc


def chat_model(settings: LuminaSettings, **options: Any) -> NamedChatOpenAI:
    """The chat model of the settings (``options``: temperature and the like for one use)."""
    return NamedChatOpenAI(
        model=settings.openai_chat_model, api_key=api_key(settings), base_url=settings.openai_base_url,
        timeout=settings.openai_timeout_seconds, max_retries=settings.openai_max_retries,
        service_where=service_url(settings), **options,
    )


def embeddings_client(settings: LuminaSettings):
    from langchain_openai import OpenAIEmbeddings

    return OpenAIEmbeddings(
        model=settings.openai_embedding_model, api_key=api_key(settings), base_url=settings.openai_base_url,
        timeout=settings.openai_timeout_seconds, max_retries=settings.openai_max_retries,
        # Its length check tokenises with tiktoken, whose vocabulary file is downloaded on first use: offline that
        # failed before any request, and an OpenAI-compatible server has its own tokenizer. Texts are sent whole;
        # a message longer than long_message_chunk_tokens is already chunked (S3), far under the API's 8,191.
        check_embedding_ctx_length=False,
    )
