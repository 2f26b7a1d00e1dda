"""A6's NLI stage (nodes.nli) with a fake chat model: entailment >= 0.6 accepts a model-extracted fact the offline
grounding cannot confirm, contradiction >= 0.7 rejects it, anything between goes to the model's review; an NLI call
that fails leaves the item to the review, loudly; "off" is the review alone."""

from __future__ import annotations

import logging

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from lumina_memory.nodes.knowledge.ground import validate_items
from lumina_memory.nodes.knowledge.models import KnowledgeItem, knowledge_item_id
from lumina_memory.nodes.nli import NliCascade, NliScores, nli_cascade, verdict
from lumina_memory.stores.settings_knowledge import KnowledgeParams

TURNS = [{"turn_id": "t1", "source_id": "s1", "speaker": "user", "text": "My partner Sam drives a tiny car to the studio.",
          "ts": 1_790_000_000.0}]


class ToolCallingFake(GenericFakeChatModel):
    """Answers with the queued messages; tool binding is a no-op (the answers are tool calls already)."""

    def bind_tools(self, tools, **kwargs):
        return self


def _scores(entailment: float, contradiction: float) -> AIMessage:
    args = {"entailment": entailment, "contradiction": contradiction, "neutral": max(0.0, 1 - entailment - contradiction)}
    return AIMessage(content="", tool_calls=[{"name": "NliScores", "args": args, "id": "call-nli"}])


def _paraphrase() -> KnowledgeItem:
    """A model item whose value is not in the turn's words: grounding cannot confirm it, so the cascade judges it."""
    return KnowledgeItem(
        item_id=knowledge_item_id("t1", "user", "has", "compact automobile", "positive"), subject="user",
        attribute="has", value="compact automobile", value_key="compact automobile", text=TURNS[0]["text"],
        source_turn_ids=("t1",), source_ids=("s1",), said_at=TURNS[0]["ts"], valid_from=TURNS[0]["ts"],
        method="llm", pattern="model",
    )


class Review:
    """The model's yes/no review, counted (its own model path is tested in test_knowledge_llm)."""

    def __init__(self, answer: bool) -> None:
        self.answer, self.calls = answer, 0

    def __call__(self, item, turns) -> bool:
        self.calls += 1
        return self.answer


def _validate(answers: list, review: Review, params: KnowledgeParams | None = None):
    params = params or KnowledgeParams()
    reviewer = nli_cascade(ToolCallingFake(messages=iter(answers)), review, params)
    return validate_items([_paraphrase()], TURNS, params, reviewer=reviewer), reviewer


def test_entailment_accepts_without_the_review() -> None:
    review = Review(False)
    checked, cascade = _validate([_scores(0.8, 0.05)], review)
    assert [i.value for i in checked.kept] == ["compact automobile"] and review.calls == 0
    assert checked.kept[0].confidence == pytest.approx(KnowledgeParams().confidence_llm)
    assert cascade.stages == {"nli accept": 1}


def test_contradiction_rejects_without_the_review() -> None:
    review = Review(True)
    checked, cascade = _validate([_scores(0.1, 0.75)], review)
    assert checked.kept == [] and len(checked.rejected) == 1 and review.calls == 0
    assert cascade.stages == {"nli reject": 1}


@pytest.mark.parametrize("answer", [True, False])
def test_between_the_thresholds_the_review_decides(answer: bool) -> None:
    review = Review(answer)
    checked, cascade = _validate([_scores(0.5, 0.3)], review)
    assert review.calls == 1 and bool(checked.kept) is answer
    assert cascade.stages == {"nli undecided": 1, f"review {'approved' if answer else 'rejected'}": 1}


def test_the_thresholds_are_the_notes_and_settings() -> None:
    notes = KnowledgeParams()
    assert (notes.nli_entailment_accept, notes.nli_contradiction_reject) == (0.6, 0.7)
    assert verdict(NliScores(entailment=0.6, contradiction=0.0), 0.6, 0.7) == "accept"
    assert verdict(NliScores(entailment=0.59, contradiction=0.69), 0.6, 0.7) == "undecided"
    assert verdict(NliScores(entailment=0.0, contradiction=0.7), 0.6, 0.7) == "reject"
    strict = KnowledgeParams(nli_entailment_accept=0.9)
    review = Review(False)
    checked, _ = _validate([_scores(0.8, 0.05)], review, strict)
    assert checked.kept == [] and review.calls == 1  # 0.8 is not enough at 0.9: the review said no


def test_a_failed_nli_call_leaves_the_item_to_the_review(caplog) -> None:
    review = Review(True)
    with caplog.at_level(logging.WARNING, logger="lumina.knowledge"):
        checked, cascade = _validate([AIMessage(content="It is probably true.")], review)  # prose, no scores
    assert review.calls == 1 and len(checked.kept) == 1
    assert cascade.stages == {"nli failed": 1, "review approved": 1}
    assert "NLI stage failed" in caplog.text


def test_off_is_the_review_alone() -> None:
    review = Review(True)
    params = KnowledgeParams(nli="off")
    reviewer = nli_cascade(ToolCallingFake(messages=iter([])), review, params)
    assert reviewer is review and not isinstance(reviewer, NliCascade)
    checked = validate_items([_paraphrase()], TURNS, params, reviewer=reviewer)
    assert review.calls == 1 and len(checked.kept) == 1


def test_a_grounded_item_never_reaches_the_cascade() -> None:
    grounded = _paraphrase().model_copy(update={"value": "tiny car", "value_key": "tiny car"})
    review = Review(False)
    reviewer = nli_cascade(ToolCallingFake(messages=iter([])), review, KnowledgeParams())
    checked = validate_items([grounded], TURNS, KnowledgeParams(), reviewer=reviewer)
    assert len(checked.kept) == 1 and review.calls == 0 and reviewer.stages == {}
