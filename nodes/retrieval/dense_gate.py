"""How much of a long turn's keyword and feedback votes counts, by whether the dense channel also finds it.

BM25 finds some of a question's words in every long reply that pastes documentation, and such a part, first in
the keyword channels but far from the question in meaning, outranks the turn the dense channel ranks first. A long
turn whose passage the dense channel also finds near its top keeps its keyword vote. The gate reads the cosines
the dense channel already computed (``Candidates.dense_score``): no model call.
"""

from __future__ import annotations


def keyword_gates(dense_score: dict[int, float], long_turns: set[int], gap: float) -> dict[int, float]:
    """Long turn -> the factor on its keyword and feedback votes: 1 − (dense top − its best cosine) ÷ ``gap``,
    clipped to [0, 1]. A long turn the dense channel did not return is taken at the channel's lowest cosine (its
    own is no higher). ``gap`` 0 = off (an empty map: every vote counts)."""
    if gap <= 0 or not long_turns:
        return {}
    if not dense_score:
        return {i: 0.0 for i in long_turns}
    top, lowest = max(dense_score.values()), min(dense_score.values())
    return {i: min(1.0, max(0.0, 1.0 - (top - dense_score.get(i, lowest)) / gap)) for i in long_turns}
