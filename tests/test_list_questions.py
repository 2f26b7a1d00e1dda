"""Questions asking for many things of one person get a ranking of that person's turns by meaning alone
(issue 19, multi-hop: "What sports does Marek play?" — the answers share no words with the question)."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.nodes.retrieval.channels import Candidates, speaker_dense_channel
from lumina_memory.nodes.retrieval.list_questions import answered_across_turns, asks_a_count, asks_a_guess, asks_for_many
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.stores.ids import turn_id
from lumina_memory.stores.models import Turn


@pytest.mark.parametrize("question", [
    "What sports does Marek play?",
    "Which museums has Omar toured?",
    "What Asian capitals has Ines lived in?",
    "What kinds of bread have Marek and his kids baked?",
    "What jazz singers/bands has Marek heard?",
    "Where has Marek sailed?",
    "What has Marek baked?",
    "What are some of Priya's favourite games?",
    "List all the films Omar mentioned.",
    # the asker's own: the first person (bench.first_person_data)
    "What sports do I play?",
    "What topics am I most curious about in astronomy?",
    "What are my hobbies?",
    "What are some of my favourite recipes?",
    "Which islands have I visited?",
    "美咲はどんな料理を作った？",
    "健太がどういう場所に行ったか教えて",
    "美咲が行ったことのある国は？",
    "健太が読んだ本を全部教えて",
])
def test_questions_asking_for_many_things(question):
    assert asks_for_many(question)


@pytest.mark.parametrize("question", [
    "What is Priya's job title?",
    "What does Marek do to unwind?",
    # a name ending in -s is not a plural object
    "What does Thomas do to unwind?",
    "Which bakery does Agnes like?",
    "When did Priya go to the grief support group?",
    "What is the name of Alice's cat?",
    "What breed is Pepper?",
    "Which city did Alice visit for her sister's wedding?",
    "What class does Ben take?",
    "モカはどんな猫？",
    "美咲が飼い始めた猫の名前は？",
    "健太はお正月にどこへ帰った？",
    "",
])
def test_questions_asking_for_one_thing(question):
    assert not asks_for_many(question)


@pytest.mark.parametrize("question, guess", [
    ("Would Priya take up teaching as a job?", True),
    ("Is Marek likely to enjoy a baking course?", True),
    ("What might Omar do after moving abroad?", True),
    ("美咲は先生に向いていると思う？", True),
    ("健太は来年も英語を続けるだろうか", True),
    ("さくらは大阪の生活に慣れそう？", True),
    ("What did Priya write?", False),
    ("When did Marek go sailing?", False),
    ("美咲は料理教室で和菓子を作れるようになった？", False),
    ("健太はどこへ行った？", False),
    ("本当にそう？", False),
    ("行くそうです", False),
])
def test_questions_asking_for_a_guess_about_someone(question, guess):
    assert asks_a_guess(question) is guess
    assert answered_across_turns(question) is (guess or asks_for_many(question))


@pytest.mark.parametrize("question, count", [
    ("How many times has Ines changed her running route?", True),
    ("How many cats has Ines fostered for the shelter?", True),
    ("健太は何回試験を受けた？", True),
    ("モカは何匹いる？", True),
    ("How many days did the trip take?", False),  # a length of time: both events' dates answer it
    ("How many more weeks until the exam?", False),
    ("何日に行った？", False),
    ("何年前？", False),
])
def test_questions_asking_a_count(question, count):
    assert asks_a_count(question) is count
    assert answered_across_turns(question) is (count or asks_for_many(question) or asks_a_guess(question))


def _index(labels_texts: list[tuple[str, str]], vectors: np.ndarray) -> UserTurns:
    turns = [Turn(turn_id=turn_id("u", f"D:{n}"), source_id=f"D:{n}", user_id="u", segment_id=f"s{n // 2}",
                  speaker="user", text=f"{who}: {text}", ts=1000.0 + 60 * n) for n, (who, text) in enumerate(labels_texts)]
    index = UserTurns.build(turns)
    index.vectors = vectors.astype(np.float16)
    index.has_vector = np.ones(len(turns), dtype=bool)
    return index


def test_the_channel_ranks_only_the_named_speakers_turns_by_meaning():
    said = [("Marek", "we went camping"), ("Priya", "I love camping too"), ("Marek", "pottery class today"),
            ("Priya", "nice"), ("Marek", "ran a fundraiser"), ("Priya", "wow"),
            ("Marek", "painted a sunset"), ("Priya", "beautiful"), ("Marek", "ok"), ("Priya", "see you")]
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((len(said), 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[4] + 0.5 * vectors[6] + 0.9 * vectors[1]  # nearest to Priya's turn 1 after Marek's 4
    index = _index(said, vectors)
    index.has_vector[8] = False  # a turn whose vector is not stored yet is not ranked
    out = Candidates()
    speaker_dense_channel(index, query, np.isin(index.label_array, ["Marek"]), 3, out)
    ranking = out.turn_rankings["speaker_dense"]
    assert len(ranking) == 3 and all(index.labels[i] == "Marek" for i in ranking)
    assert ranking[0] == 4 and 8 not in ranking
    sims = index.vectors[ranking].astype(np.float32) @ query.astype(np.float32)
    assert list(sims) == sorted(sims, reverse=True)
    # No vectors held, or no turn of that speaker: no ranking.
    empty = Candidates()
    speaker_dense_channel(index, query, np.isin(index.label_array, ["Nobody"]), 3, empty)
    index.vectors = None
    speaker_dense_channel(index, query, np.isin(index.label_array, ["Marek"]), 3, empty)
    assert "speaker_dense" not in empty.turn_rankings


def test_recall_adds_the_channel_only_for_a_list_question_about_a_named_speaker(memory_factory):
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.recall import Timings, recall

    memory = memory_factory()
    rows = [{"speaker": "user", "text": f"{who}: {text}", "ts": 1_700_000_000 + 600 * n, "source_id": f"D:{n}"}
            for n, (who, text) in enumerate([
                ("Marek", "We went camping at the beach with the kids last weekend."),
                ("Priya", "That sounds lovely, I should go too."),
                ("Marek", "I signed up for a pottery class on Tuesdays."),
                ("Priya", "You always find new hobbies!"),
                ("Marek", "Yesterday I ran a fundraiser for the food bank."),
                ("Priya", "I'm proud of you."),
                ("Marek", "I painted a sunset by the lake this morning."),
                ("Priya", "Send me a picture of it!")] * 2)]
    replay(memory.graph, "mel", [dict(r, user_id="mel", source_id=f"{r['source_id']}:{k}") for k, r in enumerate(rows)], flush=True)

    def channels(question: str, disabled=()) -> set[str]:
        timings = Timings()
        recall(memory.services, "mel", question, purpose="question", budget=200, timings=timings, disabled=disabled)
        return set(timings.channels)

    assert "speaker_dense" in channels("What sports does Marek play?")
    assert "speaker_dense" not in channels("What sports does Marek play?", disabled=("speaker_dense",))
    assert "speaker_dense" not in channels("When did Marek run the fundraiser?")  # one thing
    assert "speaker_dense" not in channels("What sports do people play?")  # no one named
    assert "speaker_dense" in channels("Would Marek enjoy a painting retreat?")  # a guess from what he is like


def test_the_channel_ranks_the_askers_own_turns_for_a_list_question_in_the_first_person(memory_factory):
    """The product's user asks about themself ("What sports do I play?"), in turns without a name:
    the channel ranks their own turns (speaker "user"), and for "you" questions the other side's."""
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.recall import Timings, recall

    memory = memory_factory()
    said = [("user", "We went camping at the beach with the kids last weekend."),
            ("lumina", "That sounds lovely, I'd love to hear more."),
            ("user", "I signed up for a pottery class on Tuesdays."),
            ("lumina", "You always find new hobbies!"),
            ("user", "Yesterday I ran a fundraiser for the food bank."),
            ("lumina", "I'm proud of you. Have you tried hiking the coastal trail? I recommend it."),
            ("user", "I painted a sunset by the lake this morning."),
            ("lumina", "Send me a picture of it!")] * 2
    replay(memory.graph, "ann", [{"user_id": "ann", "speaker": who, "text": text, "ts": 1_700_000_000 + 600 * n,
                                  "source_id": f"D:{n}"} for n, (who, text) in enumerate(said)], flush=True)
    index = memory.services.turn_index.get(memory.services.stores.archive, "ann", memory.services.stores.turns)

    def ranked(question: str) -> list[int] | None:
        timings = Timings()
        captured = {}
        import lumina_memory.nodes.retrieval.recall_stages as recall_module

        real = recall_module.speaker_dense_channel

        def spy(index_, vec, whose, k, out):
            real(index_, vec, whose, k, out)
            captured["ranking"] = out.turn_rankings.get("speaker_dense")

        recall_module.speaker_dense_channel = spy
        try:
            recall(memory.services, "ann", question, purpose="question", budget=200, timings=timings)
        finally:
            recall_module.speaker_dense_channel = real
        return captured.get("ranking")

    mine = ranked("What sports do I play?")
    assert mine and all(index.turns[i].speaker == "user" for i in mine)
    theirs = ranked("What places have you recommended to me?")
    assert theirs and all(index.turns[i].speaker != "user" for i in theirs)
    assert ranked("When did I run the fundraiser?") is None  # one thing: no channel
    assert ranked("What sports do people play?") is None  # nobody's


def test_an_assistant_answering_at_length_keeps_its_replies_in_a_first_person_question(memory_factory):
    """Where the other side writes long replies (an assistant's), they hold the facts of "my …" questions as often
    as the user's short turns do: no person focus and no ranking of the asker's own turns (measured on the hard
    long-reply set asked in the first person, bench/README "Asked in the first person")."""
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.channels import replies_at_length
    from lumina_memory.nodes.retrieval.recall import Timings, recall

    memory = memory_factory()
    reply = ("Here is a fuller plan for the week. " + "We can start with the basics and build up slowly, one step "
             "at a time, checking how it feels before adding more. " * 12).strip()
    said = [("user", "I tried pottery and swimming this month."), ("lumina", reply),
            ("user", "I also started a painting class."), ("lumina", reply)] * 3
    replay(memory.graph, "ren", [{"user_id": "ren", "speaker": who, "text": text, "ts": 1_700_000_000 + 600 * n,
                                  "source_id": f"R:{n}"} for n, (who, text) in enumerate(said)], flush=True)
    services = memory.services
    index = services.turn_index.get(services.stores.archive, "ren", services.stores.turns)
    assert replies_at_length(index, services.settings.recall_passage_min_tokens)
    timings = Timings()
    recall(services, "ren", "What sports do I play?", purpose="question", budget=200, timings=timings)
    assert "speaker_dense" not in timings.channels
    timings = Timings()  # "you …" still reads the other side's turns
    recall(services, "ren", "What plans have you suggested to me?", purpose="question", budget=200, timings=timings)
    assert "speaker_dense" in timings.channels
