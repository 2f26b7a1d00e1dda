"""L8 salience: importance = 0.4·|valence| + 0.3·novelty + 0.2·relatedness + 0.1·min(mentions/10, 1)."""

from __future__ import annotations

from typing import Sequence


def novelty(similar_scores: Sequence[float], threshold: float, neighbours: int) -> float:
    """1 − (how many of the nearest memories are at least ``threshold`` similar) / neighbours."""
    similar = sum(1 for s in similar_scores[:neighbours] if s >= threshold)
    return 1.0 - similar / neighbours


def relatedness(similar_scores: Sequence[float]) -> float:
    """How strongly the memory connects to what is already known: mean of the top-3 similarities."""
    top = sorted((max(0.0, s) for s in similar_scores), reverse=True)[:3]
    return sum(top) / 3 if top else 0.0


def importance(
    valence: float,
    novelty_score: float,
    relatedness_score: float,
    mentions: int,
    weights: tuple[float, float, float, float] = (0.4, 0.3, 0.2, 0.1),
) -> float:
    w_emotion, w_novel, w_related, w_mentions = weights
    score = (
        w_emotion * abs(valence)
        + w_novel * novelty_score
        + w_related * relatedness_score
        + w_mentions * min(mentions / 10.0, 1.0)
    )
    return round(max(0.0, min(1.0, score)), 4)
