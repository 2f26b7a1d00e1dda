"""Questions that ask several things (nodes.retrieval.query_parts): where a question is cut into its parts, and, on
a real memory, that each part's own dense ranking brings the turn answering that part up, while a question asking
one thing ranks as before."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.retrieval.query_parts import first_question, question_parts


@pytest.mark.parametrize("question, parts", [
    ("Where do Priya's users reach the live app, and what in-memory store did she say sits in front of it?",
     ["Where do Priya's users reach the live app", "what in-memory store did she say sits in front of it?"]),
    ("Which metrics dashboard and which engine for live data did Liam settle on?",
     ["Which metrics dashboard", "which engine for live data did Liam settle on?"]),
    ("Who reviews my code before merging, and which interpreter release do we target? Not my old job's people.",
     ["Who reviews my code before merging", "which interpreter release do we target?"]),
    ("I need two numbers: the hour the backup runs, as well as the port of the staging database.",
     ["I need two numbers: the hour the backup runs", "the port of the staging database."]),
    ("うちで自動テストを回しているサービスと、プルリクを見てくれる人って、それぞれ何と誰だったっけ？",
     ["うちで自動テストを回しているサービス", "プルリクを見てくれる人って、それぞれ何と誰だったっけ？"]),
    ("翔太のサービスの公開アドレス、それと、サーバーを借りている事業者を教えて。",
     ["翔太のサービスの公開アドレス", "サーバーを借りている事業者を教えて。"]),
])
def test_a_question_asking_several_things_is_cut_at_its_coordination(question, parts):
    assert question_parts(question) == parts


@pytest.mark.parametrize("question", [
    "How did Caroline and Melanie meet?",  # a pair of people, one thing asked
    "What does Melanie like about rock and roll?",
    "Where do we deploy the app?",
    "Which framework do we use? And which one did my friend's team pick?",  # the second sentence narrows
    "友人のチームと前の職場の話は除いて、今使っている言語の版は？",  # 「と」 naming a pair, no comma after it
    "How did Caroline, and what?",  # a part with fewer than two content terms is no part
])
def test_a_question_asking_one_thing_has_no_parts(question):
    assert question_parts(question) == []


def test_the_first_question_sentence():
    assert first_question("Which one? Not the tutorial's.") == "Which one?"
    assert first_question("Tell me the port of the staging database.") == "Tell me the port of the staging database."


# --- on a real memory: each part finds its turn ---------------------------------------------------------------

HOSTING = "Customers open the shop at shop.example.org, which we run on Fly.io."
CACHE = "We put Redis in front of the product lookups so they come back fast."
QUESTION = "Where do our users reach the live app, and what in-memory store sits in front of the lookups?"
# Turns that share the whole question's mixed topic (users, app, speed) without answering either part.
NEAR_THE_WHOLE = ["Users complain the app feels slow when they look things up live.",
                  "The app's users want faster live lookups in the store.",
                  "Our users keep asking why the live app lags on lookups.",
                  "The store app is live and users look up products all day.",
                  "I worry users leave the app when live lookups are slow.",
                  "Live users, slow lookups, an app that stalls: the usual week.",
                  "The lookups in the users' app got slower since the live launch.",
                  "Some users reach the app during live sales and lookups stall."]
SMALL_TALK = ["The soup tonight was too salty.", "My cat sleeps on the radiator.", "It snowed a little this morning.",
              "I finished a novel about sailors.", "Our neighbours painted their fence green.",
              "The train was late again.", "I bought tulips for the balcony.", "My niece turns six next week."]


def _chat(user: str) -> list[dict]:
    said = [x for pair in zip(SMALL_TALK, NEAR_THE_WHOLE) for x in pair]
    said.insert(2, HOSTING)
    said.insert(13, CACHE)
    rows = []
    for k, text in enumerate(said):
        ts = 1_780_000_000.0 + k * 86_400.0  # a day apart: every statement in a session of its own
        rows.append({"user_id": user, "speaker": "user", "text": text, "ts": ts, "source_id": f"u{k}"})
        rows.append({"user_id": user, "speaker": "lumina", "text": "Noted.", "ts": ts + 30, "source_id": f"a{k}"})
    return rows


def _ranks(services, user: str, question: str, **changes) -> tuple[list[str], dict]:
    """The turns in order of their fused relevance (nodes.retrieval.fusion), and the channels that voted."""
    from lumina_memory.nodes.retrieval.recall_run import RecallRequest, RecallRun
    from lumina_memory.nodes.retrieval.recall_stages import STAGES, fuse_candidates

    run = RecallRun(services, RecallRequest(user, question, purpose="question", limit=5))
    with_changes = services.settings.model_copy(update=changes)
    services.settings, kept = with_changes, services.settings
    try:
        for stage in STAGES:
            run = stage(run)
            if stage is fuse_candidates:
                break
    finally:
        services.settings = kept
    order = sorted(range(len(run.rel)), key=lambda i: -run.rel[i])
    return [run.index.turns[i].source_id for i in order], run.cands.turn_rankings


def test_each_part_of_a_question_brings_its_own_turn_up(memory):
    from lumina_memory.graphs.replay import replay

    user = "two-part-user"
    rows = _chat(user)
    replay(memory.graph, user, rows, flush=True)
    ids = {r["text"]: r["source_id"] for r in rows}
    hosting, cache = ids[HOSTING], ids[CACHE]
    with_parts, channels = _ranks(memory.services, user, QUESTION, recall_part_weight=1.0)
    whole, whole_channels = _ranks(memory.services, user, QUESTION, recall_part_weight=0.0)
    assert sorted(n for n in channels if n.startswith("part_dense:")) == ["part_dense:0", "part_dense:1"]
    assert not any(n.startswith("part_dense:") for n in whole_channels)
    worst_with = max(with_parts.index(hosting), with_parts.index(cache))
    worst_whole = max(whole.index(hosting), whole.index(cache))
    # the whole question's vector sits among the turns that mix both topics; the part about the hosting finds it
    assert worst_with < worst_whole


def test_a_question_asking_one_thing_ranks_as_without_parts(memory):
    from lumina_memory.graphs.replay import replay

    user = "one-part-user"
    replay(memory.graph, user, _chat(user), flush=True)
    question = "What in-memory store sits in front of the product lookups?"
    with_parts, channels = _ranks(memory.services, user, question, recall_part_weight=1.0)
    assert not any(n.startswith("part_dense:") for n in channels)
    assert with_parts == _ranks(memory.services, user, question, recall_part_weight=0.0)[0]
