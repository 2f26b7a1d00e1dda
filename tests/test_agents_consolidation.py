"""Consolidation of an agent's events (P4) on real embeddings: complete-linkage clusters of paraphrases apart from
unrelated events, offline extractive summaries with episodic → semantic promotion, the note's prompt and JSON
through a fake chat model (valid, invalid and failing answers, each path named), and importance re-rated."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from lumina_memory.nodes.agents.consolidation import (CONSOLIDATION_PROMPT, cluster, consolidate_events, ltm_id,
                                                      rerate_importance, summarise_cluster)
from lumina_memory.nodes.text.embedder import make_embedder
from lumina_memory.stores.agent_records import AgentEvent, LtmRecord
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_agents import AgentParams

from .conftest import make_settings

P = AgentParams()
T0 = 1_790_000_000.0

MINING = ["Lila and I mined iron together in the north cave.", "Lila and I mined iron in the north cave together.",
          "Together with Lila I mined iron in the north cave.", "Lila and I mined iron together in the northern cave."]
MINING_JA = ["リラと一緒に北の洞窟で鉄を掘った。", "リラと北の洞窟で一緒に鉄を掘った。", "北の洞窟でリラと一緒に鉄を掘った。"]
OTHERS = ["The bakery sells fresh bread every morning.", "Noah argued loudly with the guard at the gate.",
          "パン屋は毎朝焼きたてのパンを売っている。", "ノアが門の衛兵と大声で口論した。"]


@pytest.fixture(scope="module")
def embed(tmp_path_factory):
    embedder = make_embedder(make_settings(tmp_path_factory.mktemp("agents-emb")))
    return lambda texts: np.asarray(embedder.embed(list(texts)), dtype=np.float32)


def _events(texts, agent="agent_001", importance=0.4, kind="action") -> list[AgentEvent]:
    return [AgentEvent(event_id=f"evt-{i:03d}", agent_id=agent, time=T0 + 10 * i, type=kind, content=t,
                       participants=[agent, "agent_042"], importance=importance) for i, t in enumerate(texts)]


class Answers(GenericFakeChatModel):
    """A chat model answering the given texts in turn and recording the prompts it was sent."""

    prompts: list = []

    def _generate(self, messages, *args, **kwargs):
        self.prompts.append(messages[-1].content)
        return super()._generate(messages, *args, **kwargs)


def _model(*texts: str) -> Answers:
    return Answers(messages=iter([AIMessage(t) for t in texts]), prompts=[])


class Down(GenericFakeChatModel):
    def _generate(self, *args, **kwargs):
        raise ConnectionError("the provider is down")


# --- clusters ----------------------------------------------------------------------------------------------------
def test_paraphrases_cluster_and_unrelated_events_stay_apart(embed):
    texts = [MINING[0], OTHERS[0], MINING_JA[0], MINING[1], OTHERS[1], MINING_JA[1], MINING[2], OTHERS[2],
             MINING_JA[2], MINING[3], OTHERS[3]]
    got = cluster(embed(texts), P.cluster_cosine)
    assert got == [[0, 3, 6, 9], [1], [2, 5, 8], [4], [7], [10]]
    assert sorted(i for c in got for i in c) == list(range(len(texts)))


def test_the_threshold_is_the_setting(embed):
    vectors = embed([MINING[0], MINING[2]])  # cosine about 0.91
    assert cluster(vectors, 0.85) == [[0, 1]]
    assert cluster(vectors, 0.95) == [[0], [1]]


def test_complete_linkage_never_chains_dissimilar_events():
    # a~b and b~c at cos 0.9 but a~c at 0.62: single linkage would make one cluster of the three
    a = np.array([1.0, 0.0])
    b = np.array([np.cos(0.451), np.sin(0.451)])
    c = np.array([np.cos(0.902), np.sin(0.902)])
    assert float(a @ b) >= 0.9 and float(a @ c) < 0.85
    assert cluster(np.stack([a, b, c]), 0.85) == [[0, 1], [2]]
    # an event joins the cluster it is closest to at its farthest member
    d = np.array([np.cos(0.7), np.sin(0.7)])
    assert cluster(np.stack([a, c, d]), 0.85) == [[0], [1, 2]]


def test_cluster_edge_cases():
    assert cluster(np.zeros((0, 8)), 0.85) == []
    assert cluster(np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]]), 0.85) == [[0], [1], [2]]
    with pytest.raises(InvalidInput):
        cluster(np.array([[np.nan, 1.0]]), 0.85)
    with pytest.raises(InvalidInput):
        cluster(np.ones(4), 0.85)


def test_three_hundred_events_cluster_by_their_topics():
    rng = np.random.default_rng(7)
    topics = rng.normal(size=(30, 64))
    labels = np.arange(300) % 30
    vectors = topics[labels] + rng.normal(scale=0.05, size=(300, 64))
    got = cluster(vectors, 0.85)
    assert sorted(sorted(labels[c].tolist()) for c in got) == sorted([[t] * 10 for t in range(30)])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    loose = cluster(vectors, 0.2)  # a threshold low enough to join events of different topics
    assert len(loose) < 30
    for members in loose:  # complete linkage: every pair of a cluster at least the threshold
        assert float((unit[members] @ unit[members].T).min()) >= 0.2 - 1e-6


# --- summaries ---------------------------------------------------------------------------------------------------
def test_offline_summary_is_extractive_with_keywords_and_promotion(embed):
    events = _events(MINING)
    made = summarise_cluster(events, embed(MINING), params=P)
    assert made.path == "offline"
    assert made.summary.split(" / ")[0] in MINING
    assert made.type == "semantic"  # four events >= semantic_min_cluster
    assert "lila" in [t.lower() for t in made.tags] and "iron" in [t.lower() for t in made.tags]
    assert made.importance == 0.4
    pair = summarise_cluster(_events(MINING_JA[:2]), embed(MINING_JA[:2]), params=P)
    assert pair.type == "episodic" and pair.summary.startswith(MINING_JA[0][:3])
    assert summarise_cluster(_events(MINING_JA[:2]), embed(MINING_JA[:2]),
                             params=AgentParams(semantic_min_cluster=2)).type == "semantic"


def test_offline_summary_adds_the_others_distinct_facts_while_short(embed):
    texts = ["Lila and I mined iron in the north cave.", "Lila and I mined iron in the north cave with Noah's pickaxe."]
    made = summarise_cluster(_events(texts), embed(texts), params=P)
    assert "pickaxe" in made.summary and made.summary.count("Lila") == 2
    same = ["Lila and I mined iron in the north cave."] * 3
    assert summarise_cluster(_events(same), embed(same), params=P).summary == same[0]


def test_the_model_gets_the_notes_prompt_and_its_json_is_used(embed):
    model = _model('```json\n{"summary": "リラは信頼できる採掘仲間だ。北の洞窟で何度も鉄を掘った。", "type": "semantic", '
                   '"tags": ["リラ", "採掘", "リラ", " "], "importance": 0.8}\n```')
    made = summarise_cluster(_events(MINING_JA), embed(MINING_JA), model, agent_name="Kai", params=P)
    assert made.path == "llm"
    assert (made.summary, made.type, made.tags, made.importance) == (
        "リラは信頼できる採掘仲間だ。北の洞窟で何度も鉄を掘った。", "semantic", ["リラ", "採掘"], 0.8)
    prompt = model.prompts[0]
    assert prompt.startswith("あなたはエージェントKaiの記憶管理システムです。")
    assert "1-3文で要約すること" in prompt and '"type": "episodic | semantic | procedural"' in prompt
    assert all(text in prompt for text in MINING_JA)
    assert CONSOLIDATION_PROMPT.count("{memory_list}") == 1


def test_an_answer_in_content_blocks_is_read_as_its_text(embed):
    blocks = [{"type": "text", "text": '{"summary": "Lila mines with me.", '},
              {"type": "text", "text": '"type": "episodic", "tags": ["Lila"], "importance": 0.6}'}]
    made = summarise_cluster(_events(MINING[:2]), embed(MINING[:2]), _model(blocks), params=P)
    assert (made.path, made.summary, made.importance) == ("llm", "Lila mines with me.", 0.6)


@pytest.mark.parametrize("answer", [
    "了解しました。要約します。",                                                   # no JSON
    '{"summary": "リラと採掘", "type": "episodic", "tags": [], "importance": 1.7}',  # out of range
    '{"summary": "", "type": "semantic", "tags": [], "importance": 0.5}',          # empty summary
    '{"summary": "x", "type": "memorable", "tags": [], "importance": 0.5}',        # unknown type
    '{"summary": "x", "type": "semantic", "tags": [], ',                           # cut off
    '["not", "an", "object"]',
])
def test_an_invalid_answer_falls_back_to_offline_and_says_so(embed, answer, caplog):
    with caplog.at_level(logging.WARNING, logger="lumina.agents"):
        made = summarise_cluster(_events(MINING), embed(MINING), _model(answer), params=P)
    assert made.path == "offline-after-llm-error"
    assert made.summary.split(" / ")[0] in MINING and made.type == "semantic"
    assert "consolidation by the model failed" in caplog.text


def test_a_failing_model_falls_back_to_offline_and_says_so(embed, caplog):
    with caplog.at_level(logging.WARNING, logger="lumina.agents"):
        made = summarise_cluster(_events(MINING_JA), embed(MINING_JA), Down(messages=iter([])), params=P)
    assert made.path == "offline-after-llm-error" and "ConnectionError" in caplog.text
    assert made.summary.split(" / ")[0] in MINING_JA


def test_summarise_checks_its_inputs(embed):
    with pytest.raises(InvalidInput):
        summarise_cluster([], np.zeros((0, 4)), params=P)
    with pytest.raises(InvalidInput):
        summarise_cluster(_events(MINING), embed(MINING[:2]), params=P)


# --- importance re-rated -----------------------------------------------------------------------------------------
def _records(importances) -> list[LtmRecord]:
    return [LtmRecord(memory_id=f"mem-{i}", agent_id="agent_001", created_at=T0, content=f"memory {i}",
                      importance=v) for i, v in enumerate(importances)]


def test_offline_rerating_raises_importance_with_use():
    got = rerate_importance(_records([0.4, 0.4, 0.4, 1.0]), [0, 1, 7, 7])
    assert got.paths == ["offline"] * 4
    assert got.importance[0] == 0.4  # never used: the rule's score
    assert got.importance[2] == pytest.approx(0.7)  # the most used closes half its gap to 1
    assert 0.4 < got.importance[1] < got.importance[2]
    assert got.importance[3] == 1.0
    assert rerate_importance(_records([0.3, 0.6]), [0, 0]).importance == [0.3, 0.6]
    with pytest.raises(InvalidInput):
        rerate_importance(_records([0.3]), [1, 2])


def test_model_rerating_maps_the_notes_one_to_ten_and_falls_back_per_record(caplog):
    model = _model("8", "重要度（1-10）: ３", "とても重要です", "11")
    with caplog.at_level(logging.WARNING, logger="lumina.agents"):
        got = rerate_importance(_records([0.5, 0.5, 0.45, 0.2]), [0, 0, 0, 0], model)
    assert got.importance == [0.8, 0.3, 0.45, 0.2]
    assert got.paths == ["llm", "llm", "offline-after-llm-error", "offline-after-llm-error"]
    assert "記憶: memory 0" in model.prompts[0] and "1-10で評価してください" in model.prompts[0]
    assert "importance rating by the model failed" in caplog.text


# --- the whole step ----------------------------------------------------------------------------------------------
def test_consolidate_events_makes_one_record_per_cluster_and_replaces_every_event(embed):
    texts = [MINING[0], OTHERS[0], MINING[1], MINING[2], OTHERS[1]]
    events = _events(texts)
    shuffled = [events[i] for i in (4, 2, 0, 3, 1)]
    vectors = embed([e.content for e in shuffled])
    records, gone = consolidate_events("agent_001", shuffled, vectors, T0 + 600, P,
                                       access_counts={"evt-002": 3, "evt-001": 1})
    assert gone == [e.event_id for e in events]  # time order, every event once
    assert [r.source_events for r in records] == [["evt-000", "evt-002", "evt-003"], ["evt-001"], ["evt-004"]]
    assert [r.type for r in records] == ["semantic", "episodic", "episodic"]
    assert records[1].content == OTHERS[0] and records[1].summary == OTHERS[0]
    # A record is as old as the newest event it stands for, not the consolidation: recency and decay (P5, P6)
    # keep the order of what happened (the later of two sightings stays the later one).
    newest = {e.event_id: e.time for e in events}
    assert all(r.agent_id == "agent_001" and r.created_at == max(newest[s] for s in r.source_events) for r in records)
    assert records[0].created_at < records[2].created_at < T0 + 600
    assert records[0].importance == pytest.approx(0.7) and records[2].importance == 0.4  # used 3 times / never
    assert records[1].importance == pytest.approx(0.4 + 0.6 * 0.5 * np.log(2) / np.log(4), abs=1e-4)
    again, _ = consolidate_events("agent_001", events, embed(texts), T0 + 900, P)
    assert [r.memory_id for r in again] == [r.memory_id for r in records]  # a retry rewrites the same records
    assert records[0].memory_id == ltm_id("agent_001", ["evt-003", "evt-000", "evt-002"])


def test_consolidate_events_with_a_model_uses_its_summary_and_rating(embed):
    model = _model('{"summary": "Lila is a reliable mining partner.", "type": "semantic", "tags": ["Lila"], '
                   '"importance": 0.9}', "not json at all")
    texts = MINING[:3] + OTHERS[:1]
    records, gone = consolidate_events("agent_001", _events(texts), embed(texts), T0, P, model)
    assert len(gone) == 4 and len(model.prompts) == 2
    assert (records[0].content, records[0].importance, records[0].tags) == (
        "Lila is a reliable mining partner.", 0.9, ["Lila"])
    assert records[1].content == OTHERS[0]  # the second answer was no JSON: offline


def test_consolidation_stays_within_one_agent(embed):
    events = _events(MINING[:2]) + _events(MINING[2:3], agent="agent_002")
    with pytest.raises(InvalidInput, match="agent_002"):
        consolidate_events("agent_001", events, embed(MINING[:3]), T0, P)
    with pytest.raises(InvalidInput):
        consolidate_events("agent_001", _events(MINING[:2]), embed(MINING[:1]), T0, P)
    assert consolidate_events("agent_001", [], np.zeros((0, 4)), T0, P) == ([], [])
