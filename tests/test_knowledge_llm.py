"""The model path of knowledge extraction (A6) with a fake tool-calling chat model, on the real archive."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.stores.archive_duckdb import DuckDBArchive

MAY = 1_778_000_000.0


class ToolCallingFake(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def _call(name: str, **args) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


@pytest.fixture
def archive(tmp_path):
    store = DuckDBArchive(tmp_path / "archive.duckdb")
    yield store
    store._db.close()


def _turns(user: str) -> list[dict]:
    """Turn ids are per user in the product (stores.ids.turn_id hashes the user in)."""
    return [{**t, "turn_id": f"{user}-{t['turn_id']}"} for t in TURNS]


def _services(archive, answers):
    return SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace(),
                           paths={"summary": "llm"}, built={}, chat_model=ToolCallingFake(messages=iter(answers)))


TURNS = [
    {"turn_id": "t1", "speaker": "user", "text": "Lately I can't get enough of oolong tea.", "ts": MAY, "source_id": "s1"},
    {"turn_id": "t2", "speaker": "nox", "text": "Oolong is lovely.", "ts": MAY + 5, "source_id": "s2"},
    {"turn_id": "t3", "speaker": "user", "text": "My partner Sam drives a tiny car to the studio.", "ts": MAY + 9, "source_id": "s3"},
]


def test_model_facts_join_the_offline_ones_grounded_or_reviewed(archive):
    answers = [
        _call("ExtractedFacts", facts=[
            {"subject": "user", "attribute": "drink", "value": "oolong tea", "turn": 0, "sentence": TURNS[0]["text"]},
            {"subject": "Sam", "attribute": "works_at", "value": "the studio", "turn": 1, "sentence": TURNS[2]["text"]},
            {"subject": "user", "attribute": "likes", "value": "green tea", "turn": 0, "sentence": TURNS[0]["text"]},
            {"subject": "user", "attribute": "lives_in", "value": "Kyoto", "turn": 7, "sentence": "nowhere"},
        ]),
        _call("NliScores", entailment=0.2, contradiction=0.3, neutral=0.5),  # A6: NLI unsure, so the review decides
        _call("Review", supported=False, reason="the user never said green tea"),  # the only ungrounded llm item
    ]
    report = learn_segments(_services(archive, answers), "ann", [(SimpleNamespace(segment_id="seg-1"), _turns("ann"))])
    assert report["path"] == "offline+llm"
    rows = archive.knowledge.items("ann", history=True)
    drink = [r for r in rows if r["attribute"] == "drink"]
    assert drink and drink[0]["method"] == "llm" and drink[0]["value"] == "oolong tea"
    assert drink[0]["confidence"] == pytest.approx(0.9)  # grounded: its words are in the turn
    assert drink[0]["source_ids"] == ["s1"] and drink[0]["episode_ids"] == ["seg-1"]
    assert any(r["subject"] == "Sam" for r in rows)  # numbered turns are the user's turns: turn 1 is t3
    assert not any("green" in r["value"] for r in rows)  # ungrounded and refused by the review
    assert not any(r["attribute"] == "lives_in" for r in rows)  # names a turn that does not exist
    assert report["rejected"] >= 1
    assert report["validation"] == {"nli undecided": 1, "review rejected": 1}


def test_an_approved_paraphrase_keeps_the_reviewed_confidence(archive):
    answers = [
        _call("ExtractedFacts", facts=[
            {"subject": "user", "attribute": "has", "value": "compact automobile", "turn": 1, "sentence": TURNS[2]["text"]},
        ]),
        _call("NliScores", entailment=0.4, contradiction=0.1, neutral=0.5),
        _call("Review", supported=True),
    ]
    learn_segments(_services(archive, answers), "bea", [(SimpleNamespace(segment_id="seg-2"), _turns("bea"))])
    rows = [r for r in archive.knowledge.items("bea") if r["value"] == "compact automobile"]
    assert rows and rows[0]["confidence"] == pytest.approx(0.7) and rows[0]["method"] == "llm"


@pytest.mark.parametrize(("entailment", "contradiction", "kept"), [(0.9, 0.0, True), (0.1, 0.8, False)])
def test_nli_decides_a_paraphrase_without_the_review(archive, entailment, contradiction, kept):
    """A6 through learning: entailment >= 0.6 keeps the model's paraphrase, contradiction >= 0.7 drops it; no
    review is asked either way (the queue holds none: asking would fail the extraction path)."""
    user = f"nli-{kept}"
    answers = [
        _call("ExtractedFacts", facts=[
            {"subject": "user", "attribute": "has", "value": "compact automobile", "turn": 1, "sentence": TURNS[2]["text"]},
        ]),
        _call("NliScores", entailment=entailment, contradiction=contradiction, neutral=0.1),
    ]
    report = learn_segments(_services(archive, answers), user, [(SimpleNamespace(segment_id="seg-n"), _turns(user))])
    assert report["path"] == "offline+llm"
    assert report["validation"] == {f"nli {'accept' if kept else 'reject'}": 1}
    values = [r["value"] for r in archive.knowledge.items(user)]
    assert ("compact automobile" in values) is kept


def test_a_failing_model_leaves_the_offline_items_and_says_so(archive, caplog, monkeypatch):
    # A CLI test earlier in the process may have configured the lumina logger (propagate off): caplog listens
    # at the root.
    monkeypatch.setattr(logging.getLogger("lumina"), "propagate", True)
    offline_only = learn_segments(SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace()),
                                  "cid", [(SimpleNamespace(segment_id="seg-3"), [{**_turns("cid")[0], "text": "I love jazz."}])])
    assert offline_only["path"] == "offline"
    with caplog.at_level(logging.WARNING, logger="lumina.knowledge"):
        report = learn_segments(_services(archive, [AIMessage(content="Sure! She likes jazz.")]), "dee",
                                [(SimpleNamespace(segment_id="seg-4"), [{**_turns("dee")[0], "text": "I love jazz."}])])
    assert report["path"].startswith("offline (model failed")
    assert "knowledge model failed" in caplog.text
    assert [r["value"] for r in archive.knowledge.items("dee")] == ["jazz"]
    assert all(r["method"] == "offline" for r in archive.knowledge.items("dee"))


@pytest.mark.parametrize(("decision", "rex_status"), [("supersede", "superseded"), ("coexist", "current")])
def test_the_model_judges_what_the_rules_cannot(archive, decision, rex_status):
    """A7: a new pet beside a known one — another pet, or the one in its place? The rules say coexist; the model decides."""
    user = f"fay-{decision}"
    first = [{"turn_id": f"{user}-1", "speaker": "user", "text": "I have a dog called Rex.", "ts": MAY, "source_id": "p1"}]
    later = [{"turn_id": f"{user}-2", "speaker": "user", "text": "Our cat Luna is 2.", "ts": MAY + 90 * 86_400,
              "source_id": "p2"}]
    learn_segments(SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace()), user,
                   [(SimpleNamespace(segment_id="seg-a"), first)])
    answers = [_call("ExtractedFacts", facts=[]), _call("Judgement", decision=decision, reason="fake")]
    report = learn_segments(_services(archive, answers), user, [(SimpleNamespace(segment_id="seg-b"), later)])
    pets = {r["value"]: r for r in archive.knowledge.items(user, history=True) if r["attribute"] == "pet"}
    assert set(pets) == {"Rex", "Luna"} and pets["Luna"]["status"] == "current"
    assert pets["Rex"]["status"] == rex_status
    assert report.get("supersede", 0) == (decision == "supersede")  # Luna's age is added either way
