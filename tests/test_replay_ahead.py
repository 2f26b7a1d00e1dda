"""A replay embeds ahead of the graph everything the graph will embed for its turns: the turns and the passages
of the long ones (nodes.text.passages). Left to the flush, a long reply's passages are embedded in-process while
the worker processes idle: most of a real-text ingest's time (issue 46)."""

from __future__ import annotations

from types import SimpleNamespace

from bench.baselines import ingest_texts
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.text.passages import passages

USER = "paula"
T0 = 1_790_000_000.0


class InProcessEmbeds:
    """The real embedder, recording the texts embedded in this process (not those sent ahead to the workers)."""

    def __init__(self, inner):
        self._inner = inner
        self.texts: list[str] = []
        self.ahead: list[str] = []

    def embed(self, texts):
        self.texts += list(texts)
        return self._inner.embed(texts)

    def embed_async(self, texts):
        self.ahead += list(texts)
        return self._inner.embed_async(texts)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _long_reply(topic: str, n: int) -> str:
    lines = [f"Step {k} of the {topic} guide: run the {topic} check number {k} and read its report carefully, "
             f"then note what changed in the {topic} settings before you go on to the next step." for k in range(n)]
    return "\n".join(lines)


def _rows() -> list[dict]:
    rows = []
    for i, topic in enumerate(("deploy", "backup", "migration", "logging", "caching", "release")):
        ts = T0 + i * 3 * 86_400  # days apart: several segments
        rows.append({"speaker": "user", "text": f"How do I set up {topic} for the project?", "ts": ts})
        rows.append({"speaker": "lumina", "text": _long_reply(topic, 12 + i), "ts": ts + 30})
    return rows


def test_a_replay_embeds_long_replies_passages_ahead_not_at_flush(memory):
    services = memory.services
    spy = InProcessEmbeds(services.embedder.inner)
    services.embedder.inner = spy
    try:
        rows = _rows()
        replay(memory.graph, USER, rows)
    finally:
        services.embedder.inner = spy._inner
    settings = memory.settings
    wanted = [p for row in rows for p in passages(row["text"], settings.recall_passage_tokens,
                                                    settings.recall_passage_min_tokens)]
    assert len(wanted) >= 12  # the long replies do have passages
    late = [p for p in wanted if p in spy.texts]
    assert late == [], f"{len(late)} of {len(wanted)} passages were embedded in-process at flush"
    # What bench.baselines.ingest_texts says ingest embeds (the embedder-alone reference) is what went ahead.
    turns = [SimpleNamespace(dia_id=f"d{i}", **row) for i, row in enumerate(rows)]
    assert set(ingest_texts(USER, turns, settings)) == set(spy.ahead)
    # Each passage point holds its own passage's vector.
    vectors = services.embedder.inner.embed(wanted)
    for text, vector in zip(wanted, vectors):
        best = services.stores.turns.search_point_ids(USER, vector, 1)
        assert best and best[0][1] > 0.999, text[:60]
