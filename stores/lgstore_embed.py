"""What embeds the LangGraph store's texts (stores.langgraph_store): LangGraph's ``IndexConfig`` honoured.

``index={"dims": 1536, "embed": ...}`` as with any LangGraph store: ``embed`` is a LangChain
``Embeddings``, a function of a list of texts (sync or async), or a ``"provider:model"`` string (needs
``langchain``); ``dims`` is required with it and every vector is checked against it. Without ``embed``
the store uses Lumina's own embedder, and a ``dims`` that is not that embedder's is refused (InvalidInput
naming ``index.dims``) — a store that silently ignored it would compare vectors of different models.

The vector collection is named after the embedder (``ids.collection_name``), so two models never share
one; a different function behind the same name would, so give it a distinct class or model name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig
from langgraph.store.base.embed import EmbeddingsLambda, ensure_embeddings

from .errors import InvalidInput

EmbedTexts = Callable[[Sequence[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True)
class StoreEmbedding:
    name: str  # names the vector collection
    dims: int
    embed_texts: EmbedTexts  # stored texts → vectors
    embed_query: Callable[[str], Sequence[float]]  # a search query → its vector
    embeddings: Embeddings  # the same, as LangChain's interface (the store's ``embeddings``)


def from_index(index: IndexConfig) -> StoreEmbedding:
    """The embedding of ``index["embed"]`` with ``index["dims"]`` (InvalidInput naming ``index.dims`` or
    ``index.embed`` when missing or unusable)."""
    dims = index.get("dims")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise InvalidInput("index.dims", f"must be the embedding's dimension (a positive integer) when index.embed "
                           f"is given, got {dims!r}")
    try:
        embeddings = ensure_embeddings(index["embed"])
    except ValueError as exc:
        raise InvalidInput("index.embed", str(exc)) from None
    return StoreEmbedding(_name(index["embed"], embeddings), dims, _sync_texts(embeddings), _sync_query(embeddings),
                          embeddings)


def from_embedder(name: str, dim: int, embed: EmbedTexts, index: IndexConfig | None = None) -> StoreEmbedding:
    """Lumina's own embedder; an ``index["dims"]`` other than ``dim`` is refused."""
    dims = (index or {}).get("dims")
    if dims is not None and dims != dim:
        raise InvalidInput("index.dims", f"is {dims!r} but the store's embedder {name} makes {dim}-d vectors; give "
                           "index['embed'] (an Embeddings or a function) to embed with another model")
    return StoreEmbedding(name, dim, embed, lambda text: embed([text])[0],
                          EmbeddingsLambda(lambda texts: [list(map(float, v)) for v in embed(texts)]))


def _name(embed: Any, embeddings: Embeddings) -> str:
    if isinstance(embed, str):
        return embed
    model = next((getattr(embeddings, a) for a in ("model", "model_name") if isinstance(getattr(embeddings, a, None), str)), "")
    inner = getattr(embeddings, "func", None) or getattr(embeddings, "afunc", None)
    base = getattr(inner, "__qualname__", None) or type(embeddings).__qualname__
    return f"{base}-{model}" if model else base


def _sync_texts(embeddings: Embeddings) -> EmbedTexts:
    if _async_only(embeddings):
        return lambda texts: _run(embeddings.aembed_documents(list(texts)))
    return lambda texts: embeddings.embed_documents(list(texts))


def _sync_query(embeddings: Embeddings) -> Callable[[str], Sequence[float]]:
    if _async_only(embeddings):
        return lambda text: _run(embeddings.aembed_query(text))
    return embeddings.embed_query


def _async_only(embeddings: Embeddings) -> bool:
    return isinstance(embeddings, EmbeddingsLambda) and getattr(embeddings, "func", None) is None


def _run(coroutine: Any) -> Any:
    # The store's work runs off the event loop (abatch hands it to a worker thread), where no loop runs.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    coroutine.close()
    raise InvalidInput("index.embed", "is an async function: call the store's async methods (aput, asearch) "
                       "from async code, or give a sync function too")
