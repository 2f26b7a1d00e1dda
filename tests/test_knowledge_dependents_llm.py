"""F6 with a model (a fake tool-calling chat model) on the real archive: the model is asked what a new routine
rests on, its answer adds to the rules', and a failed call keeps the rules' answer, logged."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.nodes.knowledge.unread import REVIEW
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from tests.test_knowledge_llm import MAY, ToolCallingFake, _call

DAY = 86_400.0


@pytest.fixture
def archive(tmp_path):
    store = DuckDBArchive(tmp_path / "archive.duckdb")
    yield store
    store.close()


def _turn(user: str, n: int, text: str, ts: float) -> list[dict]:
    return [{"turn_id": f"{user}-{n}", "speaker": "user", "text": text, "ts": ts, "source_id": f"{user}-s{n}"}]


def _offline(archive):
    return SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace())


def _with_model(archive, answers):
    return SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace(),
                           paths={"summary": "llm"}, built={}, chat_model=ToolCallingFake(messages=iter(answers)))


def _learn(services, user: str, segment: str, turns: list[dict]) -> dict:
    return learn_segments(services, user, [(SimpleNamespace(segment_id=segment), turns)])


def _by_value(archive, user: str) -> dict[str, dict]:
    return {r["value"]: r for r in archive.knowledge.items(user, history=True)}


def test_the_model_finds_what_no_rule_reads_and_the_change_reaches_it(archive):
    user = "chef"
    _learn(_offline(archive), user, "seg-1", _turn(user, 1, "I work as a chef.", MAY))
    chef = _by_value(archive, user)["chef"]
    answers = [_call("ExtractedFacts", facts=[]), _call("Dependencies", rests_on=[0, 7], reason="a chef's errand")]
    _learn(_with_model(archive, answers), user, "seg-2", _turn(user, 2, "I go to the fish market every morning.", MAY + DAY))
    market = _by_value(archive, user)["go to the fish market"]
    assert list(market["derived_from"]) == [chef["item_id"]]  # the out-of-range number is dropped
    _learn(_offline(archive), user, "seg-3", _turn(user, 3, "I work as a driver now.", MAY + 30 * DAY))
    assert _by_value(archive, user)["go to the fish market"]["note"] == f"{REVIEW}rests on job: chef, which changed, now driver"


def test_a_failed_call_keeps_the_rules_answer(archive, caplog):
    user = "kyoto"
    _learn(_offline(archive), user, "seg-1", _turn(user, 1, "I live in Kyoto.", MAY))
    answers = [_call("ExtractedFacts", facts=[]), _call("Nothing")]  # no structured answer
    with caplog.at_level(logging.WARNING, logger="lumina.knowledge"):
        _learn(_with_model(archive, answers), user, "seg-2",
               _turn(user, 2, "I take the train from Demachiyanagi every morning.", MAY + DAY))
    train = _by_value(archive, user)["take the train from Demachiyanagi"]
    assert list(train["derived_from"]) == [_by_value(archive, user)["Kyoto"]["item_id"]]  # the rules' marker: train
    assert "the rules' answer stands" in caplog.text
