"""Offline replies (no model): the character quotes the remembered turn that answers, or says plainly that
nothing is remembered; never an unrelated memory, a doubled date or the same turn twice."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.offline_reply import NOTHING_REMEMBERED, offline_reply


@pytest.fixture(scope="module")
def chatted(tmp_path_factory, demo_rows):
    """dana's cat and movie topics replayed, then one question per test case asked offline."""
    from .conftest import Memory

    mem = Memory(tmp_path_factory.mktemp("offline"))
    replay(mem.graph, "dana", demo_rows[:17])

    def ask(text: str) -> dict:
        return mem.graph.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "chat:dana"}},
                                context={"user_id": "dana"})

    yield ask
    mem.close()


@pytest.mark.slow
def test_the_reply_quotes_the_turn_that_answers(chatted):
    out = chatted("おすすめされた映画のタイトルは何だった？")
    assert "メメント" in out["reply"]  # the recommendation, not the segment's first turn (the other film)


@pytest.mark.slow
def test_the_reply_quotes_the_fact_asked_for(chatted):
    reply = chatted("モカは何歳になったんだっけ？")["reply"]
    assert "3歳" in reply or "age: 3" in reply


@pytest.mark.slow
def test_nothing_remembered_is_said_plainly(chatted):
    reply = chatted("私の車の色、覚えてる？")["reply"]
    assert NOTHING_REMEMBERED in reply
    assert "に話したこと" not in reply and "2026-10-05" not in reply


@pytest.mark.slow
def test_the_date_is_said_once(chatted):
    reply = chatted("前に話した映画のこと覚えてる？")["reply"]
    assert len(re.findall(r"\d{4}-\d{2}-\d{2}", reply)) == 1


def test_no_memory_at_all_and_no_embedder():
    reply = offline_reply("lumina", "元気？", [])
    assert NOTHING_REMEMBERED in reply


def test_a_turn_recalled_twice_is_one_candidate_and_the_answer_is_chosen_lexically():
    turn = "nox: なら同じ監督の『メメント』一択だな"
    recalled = [
        {"segment_id": "s1", "date": "2026-10-05", "text": f"[2026-10-05] user: 映画を観た / {turn}"},
        {"segment_id": "s1", "date": "2026-10-05", "text": f"[2026-10-05] {turn}"},
        {"segment_id": "(open)", "date": "2026-12-07", "text": "user: 監督のメメントの話をしよう"},
    ]
    reply = offline_reply("nox", "メメントの監督は？", recalled)
    assert reply.count("メメント") == 1 and "[2026-10-05]" not in reply and "話をしよう" not in reply


def test_the_model_is_told_a_memory_recalled_twice_once():
    from lumina_memory.nodes.respond import memory_context

    item = {"date": "2026-10-05", "tiers": ["archive"], "text": "user: 猫のモカが3歳になった"}
    context = memory_context({"recalled": [item, {**item, "tiers": ["long-term"], "text": " user:  猫のモカが3歳になった "},
                                           {**item, "text": "lumina: おめでとう"}]})
    assert context.count("モカ") == 1 and "おめでとう" in context
