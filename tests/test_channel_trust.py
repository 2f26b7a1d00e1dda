"""How far recall's channels are trusted for one query: the keyword channels' trust (nodes.retrieval.channel_trust), the
share of the query's IDF mass its best keyword hit holds, read on a real turn index, and the weight factor it gives
the fusion; and the dense channel's correction of a long turn's best passage (channels.passage_max_corrected), the
best of many windows' cosines being high by chance alone."""

from __future__ import annotations

import math

import pytest

from lumina_memory.nodes.retrieval.channel_trust import keyword_trust, matched_share
from lumina_memory.nodes.retrieval.channels import passage_max_corrected
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.stores.models import Turn
from lumina_memory.stores.settings import LuminaSettings

SAID = ["We went with Celery for the task queue.", "The staging database listens on port 25432.",
        "I prefer tabs over spaces in this repository.", "The nightly backup starts at 02:30.",
        "Our reviewer for pull requests is Aiko.", "The weather was nice today.", "I had a good lunch today."]


def _turn(k: int, text: str, speaker: str = "user") -> Turn:
    return Turn(turn_id=f"t{k}", source_id=f"D{k}", user_id="u", segment_id=f"s{k // 4}", speaker=speaker,
                text=text, ts=1_700_000_000.0 + 60 * k)


def _index(texts, long_reply: str | None = None) -> UserTurns:
    settings = LuminaSettings(data_dir="/tmp/unused-lumina")
    turns = [_turn(k, t) for k, t in enumerate(texts)]
    if long_reply is not None:
        turns.append(_turn(len(turns), long_reply, "lumina"))
    return UserTurns.build(turns, (settings.recall_passage_tokens, settings.recall_passage_min_tokens))


def _terms(text: str) -> list[str]:
    from lumina_memory.nodes.text.tokenize import terms

    return terms(text)


def test_a_query_in_the_conversations_words_is_held_whole_by_its_best_hit():
    index = _index(SAID)
    q = _terms("Celery task queue")
    ranking = [i for i, _ in index.search(q, 10)]
    assert ranking[0] == 0
    assert matched_share(index, q, ranking) == pytest.approx(1.0)


def test_a_question_in_other_words_holds_a_small_share():
    index = _index(SAID)
    q = _terms("Which tool did I settle on for running background jobs today?")
    ranking = [i for i, _ in index.search(q, 10)]
    assert ranking  # "today" matches the small talk
    share = matched_share(index, q, ranking)
    assert 0.0 < share < 0.3  # only a common word of six rarer ones


def test_a_term_the_conversation_never_used_weighs_more_than_any_said_one():
    index = _index(SAID)
    # Celery (said once) holds less than half of the query's weight beside a word never said
    assert 0.3 < matched_share(index, _terms("Celery zyxwvut"), [0]) < 0.5


def test_a_long_reply_is_judged_by_its_best_passage_not_the_whole_reply():
    filler = " ".join(f"Paragraph {j} explains the configuration of module number {j} in detail." for j in range(30))
    reply = "Assistant: The scheduler handles retries. " + filler + " Finally, the dashboard shows latency."
    index = _index(SAID, reply)
    long_turn = len(SAID)
    assert index.passages.doc_turn.size and set(index.passages.doc_turn.tolist()) == {long_turn}
    q = _terms("scheduler retries dashboard latency")
    both = matched_share(index, q, [long_turn])
    # the two halves of the question sit in passages far apart: no single passage holds more than half of it
    assert 0.3 < both < 0.75
    assert matched_share(index, _terms("scheduler retries"), [long_turn]) == pytest.approx(1.0)


def test_nothing_to_judge_is_full_trust():
    index = _index(SAID)
    assert matched_share(index, [], [0]) == 1.0
    assert matched_share(index, _terms("Celery"), []) == 1.0


def test_the_weight_factor():
    assert keyword_trust(0.05, 0.0) == 1.0  # off: the plain fusion
    assert keyword_trust(0.1, 0.4) == pytest.approx(0.25)
    assert keyword_trust(0.4, 0.4) == 1.0
    assert keyword_trust(0.9, 0.4) == 1.0


def test_a_long_turns_best_passage_is_lowered_by_the_log_of_its_passages():
    filler = " ".join(f"Paragraph {j} explains the configuration of module number {j} in detail." for j in range(60))
    index = _index(SAID, "Assistant: " + filler)
    long_turn = len(SAID)
    parts = int((index.passages.doc_turn == long_turn).sum())
    assert parts >= 4
    best = {long_turn: 0.50, 0: 0.45, 1: 0.20}  # the dense channel's best cosine per turn, best first
    assert passage_max_corrected(index, best, 0.0) == [long_turn, 0, 1]  # off: the points' order
    lowered = 0.50 - 0.04 * math.log(parts)
    assert lowered < 0.45
    assert passage_max_corrected(index, best, 0.04) == [0, long_turn, 1]
    assert passage_max_corrected(_index(SAID), {0: 0.3, 1: 0.2}, 0.04) == [0, 1]  # no long turns: as it was


# --- recall end to end: a question in the asker's own words -------------------------------------------------------

STATEMENT = "We went with Celery for the task queue."
# Each shares a word with the question below ("nowadays") and nothing of its meaning.
LOOKALIKES = ["Bread is so expensive nowadays.", "Nowadays I sleep badly.", "Everyone wears hats nowadays.",
              "Nowadays the tram is always full.", "My aunt paints a lot nowadays.", "Nowadays I drink less coffee.",
              "Concerts cost a fortune nowadays.", "Nowadays my garden needs more water."]
SMALL_TALK = ["The soup tonight was too salty.", "My cat sleeps on the radiator.", "It snowed a little this morning.",
              "I finished a novel about sailors.", "Our neighbours painted their fence green.",
              "The train was late again.", "I bought tulips for the balcony.", "My niece turns six next week."]
REPLIES = ["Sounds good.", "Nice!", "Tell me more.", "Got it."]
PARAPHRASE = "What runs our asynchronous background jobs nowadays?"


def _chat(user: str) -> list[dict]:
    said = [x for pair in zip(SMALL_TALK, LOOKALIKES) for x in pair]
    said.insert(7, STATEMENT)
    rows = []
    for k, text in enumerate(said):
        ts = 1_780_000_000.0 + k * 86_400.0
        rows.append({"user_id": user, "speaker": "user", "text": text, "ts": ts, "source_id": f"u{k}"})
        rows.append({"user_id": user, "speaker": "lumina", "text": REPLIES[k % len(REPLIES)], "ts": ts + 30,
                     "source_id": f"a{k}"})
    return rows


def _rank_of(services, user: str, question: str, source_id: str, **changes) -> int:
    """Where the turn ``source_id`` ranks among recall's scored candidates (before re-ranking and packing)."""
    from lumina_memory.nodes.retrieval.recall_run import RecallRequest, RecallRun
    from lumina_memory.nodes.retrieval.recall_stages import STAGES

    settings = services.settings
    services.settings = settings.model_copy(update=changes)
    try:
        run = RecallRun(services, RecallRequest(user, question, purpose="question", limit=5))
        for stage in STAGES[: [s.__name__ for s in STAGES].index("rank") + 1]:
            run = stage(run)
    finally:
        services.settings = settings
    ranked = [run.index.turns[i].source_id for _, i, _, _ in run.ordered]
    return ranked.index(source_id) if source_id in ranked else len(ranked)


def test_a_question_in_other_words_follows_the_dense_channel(memory):
    from lumina_memory.graphs.replay import replay

    user = "paraphrasing-user"
    replay(memory.graph, user, _chat(user), flush=True)
    services, statement = memory.services, "u7"
    with_trust = _rank_of(services, user, PARAPHRASE, statement)
    without = _rank_of(services, user, PARAPHRASE, statement, recall_keyword_trust=0.0)
    # the dense channel ranks the statement first; without the trust the look-alikes' one shared word
    # ("nowadays", in eight turns the keyword channels, the feedback and the segments all vote for) outvotes it
    assert with_trust < without
    assert with_trust <= 5 < without
    # a question in the statement's own words: its best keyword hit holds the rare terms, full weight, first place
    assert _rank_of(services, user, "Did we go with Celery for the task queue?", statement) == 0
