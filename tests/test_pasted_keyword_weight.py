"""recall_pasted_keyword_weight (nodes.retrieval.pasted_text, nodes.retrieval.fusion): a long turn's keyword vote is
scaled by how much of what the query matched in it lies in pasted lines, so BM25 over pasted documentation does not
outrank the turn the dense channel ranks first, while a long turn whose own prose holds the query's words keeps its
vote."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lumina_memory.nodes.retrieval.channels import Candidates
from lumina_memory.nodes.retrieval.pasted_text import keyword_scales, pasted_lines
from lumina_memory.nodes.retrieval.query import QueryPlan
from lumina_memory.nodes.retrieval.recall_stages import fuse_candidates
from lumina_memory.nodes.retrieval.user_turns import UserTurns
from lumina_memory.nodes.text.tokenize import terms
from lumina_memory.stores.models import Turn
from lumina_memory.stores.settings import LuminaSettings

WRAPPED = ("The scheduler keeps a queue of pending jobs ordered by their start time and\n"
           "runs each one on a worker thread. A job that raises is retried with the\n"
           "backoff given to the scheduler, and its staging port is read from the\n"
           "configuration when the job starts.\n\n")
CODE = "```python\nscheduler = Scheduler(port=5433)\nscheduler.start()\n```\n\n"
# Turn 0: an assistant reply of pasted documentation; turn 1: the user's paste with a fact in their own words
# around it; turn 2: a short turn.
PASTED = "Scheduler\n---------\n\n" + WRAPPED * 6 + CODE
OWN = ("Pasting what I found so far:\n\n" + WRAPPED * 6
       + "We moved the staging database to port 5433 last week and the nightly scheduler now starts at four, "
         "so the worker queue never overlaps the backup.\n")
QUERY = "Which port does the staging database use now?"


def _index() -> UserTurns:
    texts = [("assistant", PASTED), ("user", OWN), ("user", "Sounds good, thanks.")]
    turns = [Turn(turn_id=f"t{i}", source_id=f"D1:{i}", user_id="alice", speaker=who, text=text, ts=1_000.0 + i,
                  segment_id="s1") for i, (who, text) in enumerate(texts)]
    settings = LuminaSettings()
    return UserTurns.build(turns, (settings.recall_passage_tokens, settings.recall_passage_min_tokens))


def test_lines_of_documentation_and_code_read_as_pasted_and_prose_as_own():
    lines = dict(pasted_lines(OWN))
    assert lines["Pasting what I found so far:"] is False
    assert lines[OWN.rstrip("\n").split("\n")[-1]] is False  # the user's own sentence, one line a paragraph
    assert all(pasted for line, pasted in pasted_lines(PASTED))


def test_weight_one_scales_nothing():
    index = _index()
    assert keyword_scales(index, terms(QUERY), [[0, 1, 2]], 1.0, LuminaSettings().recall_passage_min_tokens) == {}


@pytest.mark.parametrize("weight", [0.5, 0.0])
def test_a_pasted_match_is_scaled_and_an_own_prose_match_is_not(weight):
    index = _index()
    least = LuminaSettings().recall_passage_min_tokens
    assert index.token_counts[0] > least and index.token_counts[1] > least and index.token_counts[2] <= least
    scales = keyword_scales(index, terms(QUERY), [[0, 1, 2]], weight, least)
    assert set(scales) == {0, 1}  # a short turn is never scaled
    assert scales[0] == pytest.approx(weight)  # every query term it holds is in pasted lines
    assert scales[1] == pytest.approx(1.0)  # its own sentence holds every query term the turn holds


def _fused(weight: float) -> np.ndarray:
    settings = LuminaSettings().model_copy(update={"recall_pasted_keyword_weight": weight,
                                                   "recall_keyword_trust": 0.0})
    cands = Candidates()
    # The pasted reply is first in both keyword channels and second in the dense one; the short turn is first in
    # the dense channel.
    cands.turn_rankings = {"turn_content": [2, 0], "turn_keyword": [0, 2], "turn_feedback": [0, 2]}
    run = SimpleNamespace(services=SimpleNamespace(settings=settings), cands=cands, index=_index(),
                          q_terms=terms(QUERY), on={"context": False, "speakers": False}, plan=QueryPlan(), scope=None)
    return fuse_candidates(run).rel


def test_the_recall_stage_reads_the_setting():
    full, scaled = _fused(1.0), _fused(0.0)
    assert full[0] > full[2], full  # at 1 the pasted reply's keyword votes outrank the dense channel's first
    assert scaled[2] == full[2]  # a short turn's votes are as they were
    assert scaled[0] < scaled[2], scaled
    k = LuminaSettings().recall_rrf_k
    assert np.isclose(scaled[0], 1 / (k + 2))  # only its dense vote is left
