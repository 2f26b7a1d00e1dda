"""A6 validation's NLI stage: the notes' cascade for a fact the offline grounding cannot confirm — entailment by its
source turns ≥ ``nli_entailment_accept`` (0.6) accepts it, contradiction ≥ ``nli_contradiction_reject`` (0.7)
rejects it, anything between goes to the model's review (``ModelExtractor.review``).

The scores come from the chat model (``ModelNli``: premise and hypothesis in, entailment / contradiction / neutral
probabilities out, by structured output). No NLI model that runs offline ships inside a package on the package
index for Japanese and English text (the index's NLI packages download their weights from a model hub at run time,
or are English-only toys), so without a chat model there is no NLI stage and grounding alone decides, as before.
``Nli`` is the seam a packaged model would fill.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, Field

log = logging.getLogger("lumina.knowledge")

Verdict = Literal["accept", "reject", "undecided"]

NLI_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "Natural language inference. Given a PREMISE (what a user said in a conversation) and a HYPOTHESIS "
               "(a fact extracted from it), give the probability that the premise entails the hypothesis, that it "
               "contradicts it, and that it does neither (neutral). The three sum to 1. Judge only what the premise "
               "says, in whatever language it is written; inferences, hypotheticals and questions are neutral."),
    ("human", "PREMISE:\n{premise}\n\nHYPOTHESIS: {hypothesis}"),
])


class NliScores(BaseModel):
    """Probabilities that the premise entails, contradicts, or is neutral to the hypothesis."""

    entailment: float = Field(ge=0, le=1)
    contradiction: float = Field(ge=0, le=1)
    neutral: float = Field(default=0.0, ge=0, le=1)


class Nli(Protocol):
    name: str

    def scores(self, premise: str, hypothesis: str) -> NliScores: ...


class ModelNli:
    """NLI scores from a chat model (structured output); raises when the model fails or answers no scores."""

    name = "model"

    def __init__(self, chat_model) -> None:
        self._chain = NLI_PROMPT | chat_model.with_structured_output(NliScores, method="function_calling")

    def scores(self, premise: str, hypothesis: str) -> NliScores:
        answer = self._chain.invoke({"premise": premise, "hypothesis": hypothesis})
        if not isinstance(answer, NliScores):
            raise ValueError(f"the model gave no NLI scores (got {type(answer).__name__})")
        return answer


def verdict(scores: NliScores, accept: float, reject: float) -> Verdict:
    """The notes' thresholds: entailment first (a fact both entailed and contradicted that strongly is the
    model's confusion, and entailment was the notes' first test)."""
    if scores.entailment >= accept:
        return "accept"
    if scores.contradiction >= reject:
        return "reject"
    return "undecided"


def hypothesis_of(item) -> str:
    """The fact as a sentence to test: its own sentence, and the structured claim beside it."""
    claim = f"{item.subject} / {item.attribute} / {'not ' if item.polarity == 'negative' else ''}{item.value}"
    return f"{item.text} ({claim})" if item.text else claim


def premise_of(turns: Sequence) -> str:
    return "\n".join(f"{t['speaker']}: {t['text']}" for t in turns)


class NliCascade:
    """A reviewer for ``ground.validate_items``: NLI decides what it is sure of, ``review`` (the model's yes/no)
    the rest. An NLI call that fails leaves the item to ``review``, and says so. ``stages`` counts what decided."""

    def __init__(self, nli: Nli, review: Callable[..., bool], accept: float = 0.6, reject: float = 0.7) -> None:
        self.nli, self.review, self.accept, self.reject = nli, review, accept, reject
        self.stages: Counter = Counter()

    def __call__(self, item, turns: Sequence) -> bool:
        try:
            scores = self.nli.scores(premise_of(turns), hypothesis_of(item))
        except Exception as exc:  # noqa: BLE001 - the review still judges the item; the log says why NLI did not
            log.warning("NLI stage failed (%s); the model's review judges the item", f"{type(exc).__name__}: {exc}"[:200])
            self.stages["nli failed"] += 1
            return self._reviewed(item, turns)
        decided = verdict(scores, self.accept, self.reject)
        log.info("NLI %s item=%s entailment=%.2f contradiction=%.2f", decided, item.item_id, scores.entailment,
                 scores.contradiction)
        if decided == "undecided":
            self.stages["nli undecided"] += 1
            return self._reviewed(item, turns)
        self.stages[f"nli {decided}"] += 1
        return decided == "accept"

    def _reviewed(self, item, turns) -> bool:
        approved = self.review(item, turns)
        self.stages["review approved" if approved else "review rejected"] += 1
        return approved


def nli_cascade(chat_model, review: Callable[..., bool], params) -> Callable[..., bool]:
    """The reviewer ``params`` ask for: the cascade over the chat model's NLI, or ``review`` alone when
    ``params.nli`` is "off"."""
    if params.nli == "off":
        return review
    return NliCascade(ModelNli(chat_model), review, params.nli_entailment_accept, params.nli_contradiction_reject)
