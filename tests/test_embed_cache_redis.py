"""S6: the embedding cache's Redis tier on a real private redis-server: two memories' processes (two Services, each
its own connections and process cache) share what one embedded; vectors expire; erasure empties the tier; a tier
that does not answer costs only warmth, and says so."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from lumina_memory.nodes.text.embedder import CachedEmbedder
from lumina_memory.stores.midterm_redis import RedisMidTerm
from lumina_memory.stores.redis_vector_cache import PREFIX
from lumina_memory.stores.settings import LuminaSettings

from .redis_process import start_redis, stop_redis

pytestmark = pytest.mark.slow


class CountingEmbedder:
    """A stand-in model that counts the texts it is asked to embed (the cache under test is real)."""

    name, dim, path = "counting", 8, "offline"

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += list(texts)
        rows = [np.frombuffer(t.encode("utf-8").ljust(8, b"\0")[:8], dtype=np.uint8).astype(np.float32) + 1
                for t in texts]
        return np.asarray([r / np.linalg.norm(r) for r in rows], dtype=np.float32).reshape(len(texts), self.dim)


@pytest.fixture
def redis_url(tmp_path) -> Iterator[str]:
    work = tmp_path / "redis"
    work.mkdir()
    proc = start_redis(work, work / "r.sock")
    try:
        yield f"unix://{work / 'r.sock'}"
    finally:
        stop_redis(proc)


def _midterm(tmp_path: Path, url: str) -> RedisMidTerm:
    return RedisMidTerm.from_settings(LuminaSettings(data_dir=tmp_path, REDIS_URL=url))


def _cached(midterm: RedisMidTerm, ttl: int = 3_600) -> tuple[CachedEmbedder, CountingEmbedder]:
    inner = CountingEmbedder()
    embedder = CachedEmbedder(inner, 16)
    embedder.share(midterm.vector_cache(f"{inner.name}-{inner.dim}"), ttl)
    return embedder, inner


def test_two_caches_share_what_one_embedded(tmp_path, redis_url) -> None:
    first_store, second_store = _midterm(tmp_path / "a", redis_url), _midterm(tmp_path / "b", redis_url)
    try:
        first, first_model = _cached(first_store)
        second, second_model = _cached(second_store)
        texts = ["猫の名前はモカ", "週末は映画を見た", "猫の名前はモカ"]
        mine = first.embed(texts)
        assert first_model.embedded == ["猫の名前はモカ", "週末は映画を見た"]  # a repeated text is embedded once
        theirs = second.embed(texts[:2] + ["初めての文"])
        assert second_model.embedded == ["初めての文"]  # the other two came from Redis
        assert second.shared_hits == 2 and second.misses == 1
        assert np.array_equal(theirs[:2], mine[:2])
        again = second.embed(texts[:2])  # now in the second's process cache: Redis is not asked again
        assert second.shared_hits == 2 and second.hits == 2 and np.array_equal(again, mine[:2])
        assert first.cached() == 2 + 3 and second.cached() == 3 + 3  # each process's own, plus the shared three
    finally:
        first_store.close()
        second_store.close()


def test_vectors_expire_and_hold_no_text(tmp_path, redis_url) -> None:
    store = _midterm(tmp_path, redis_url)
    try:
        embedder, _ = _cached(store, ttl=120)
        embedder.embed(["秘密の話"])
        client = store._client
        keys = [k.decode() for k in client.scan_iter(match=f"{PREFIX}:*")]
        assert len(keys) == 1 and keys[0].startswith(f"{PREFIX}:counting-8:") and "秘密" not in keys[0]
        assert 0 < client.ttl(keys[0]) <= 120
        assert store.dump_keys() == []  # backups of the mid-term tier do not carry the cache
    finally:
        store.close()


def test_erasing_empties_both_tiers(tmp_path, redis_url) -> None:
    from lumina_memory.graphs.registry import EmbedderCachePlace

    first_store, second_store = _midterm(tmp_path / "a", redis_url), _midterm(tmp_path / "b", redis_url)
    try:
        first, _ = _cached(first_store)
        second, second_model = _cached(second_store)
        first.embed(["ユーザーAの話", "ユーザーBの話"])
        place = EmbedderCachePlace(first)
        assert place.count("anyone") == 4
        assert place.erase("anyone") == 4 and place.count("anyone") == 0
        second.embed(["ユーザーAの話"])
        assert second_model.embedded == ["ユーザーAの話"]  # nothing of it was left to share
    finally:
        first_store.close()
        second_store.close()


def test_a_tier_that_does_not_answer_costs_only_warmth(tmp_path, caplog) -> None:
    work = tmp_path / "redis"
    work.mkdir()
    proc = start_redis(work, work / "r.sock")
    store = _midterm(tmp_path, f"unix://{work / 'r.sock'}")
    try:
        embedder, model = _cached(store)
        embedder.embed(["一つ目"])
        stop_redis(proc)
        with caplog.at_level(logging.WARNING, logger="lumina.embedder"):
            vectors = embedder.embed(["二つ目"])
        assert vectors.shape == (1, 8) and model.embedded == ["一つ目", "二つ目"]
        assert embedder.shared_errors == 2  # neither read nor written
        assert "embedding cache tier not read" in caplog.text
    finally:
        if proc.poll() is None:
            stop_redis(proc)
        store.close()


def test_services_share_the_tier_through_their_mid_term_redis(memory_factory, redis_url) -> None:
    first = memory_factory(REDIS_URL=redis_url)
    second = memory_factory(REDIS_URL=redis_url)
    assert first.services.paths["embedding_cache"] == second.services.paths["embedding_cache"] == "process + redis"
    question = "この試験だけの問い：カワセミの巣は何階にあったっけ？"  # no other test or start-up step embeds it
    mine = first.services.embedder.embed([question])
    assert first.services.embedder.shared_errors == 0
    misses = second.services.embedder.misses
    theirs = second.services.embedder.embed([question])
    assert second.services.embedder.shared_errors == 0
    assert (second.services.embedder.misses, second.services.embedder.shared_hits) == (misses, 1)
    assert np.array_equal(mine, theirs)
    off = memory_factory(REDIS_URL=redis_url, embedding_cache_redis=False)
    assert off.services.embedder.shared is None and off.services.paths["embedding_cache"] == "process"


def test_erasing_a_user_empties_the_redis_tier_of_their_texts(memory_factory) -> None:
    from lumina_memory.graphs.erase import erase_plan, erase_user

    mem = memory_factory()
    config = {"configurable": {"thread_id": "erase-me"}}
    ctx = {"user_id": "eve", "respond": False}
    mem.graph.invoke({"turn": {"speaker": "user", "text": "私の秘密の合言葉はカワセミです", "ts": 1_790_000_000}}, config,
                     context=ctx)
    mem.graph.invoke({"flush": True}, config, context=ctx)  # the segment closes: its turn and summary are embedded
    tier = mem.services.embedder.shared
    assert tier.count() >= 1  # what ingest embedded (the turn, in the forms it is embedded in) went to Redis
    plan = erase_plan(mem.services, "eve")
    assert plan["counts"]["cache.embedder"] >= 1
    report = erase_user(mem.services, "eve", plan["token"])
    assert report["removed"]["cache.embedder"] >= 1
    assert tier.count() == 0
