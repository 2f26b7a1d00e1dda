"""Whether a long turn's keyword and feedback votes count, by whether the dense channel also finds it.

BM25 finds some of a question's words in every long reply that pastes documentation, and such a part, first in
the keyword channels but far from the question in meaning, outranks the turn the dense channel ranks first. A long
turn the dense channel also ranks among its first turns keeps its keyword vote. The gate reads the dense channel's
ranking (a long turn ranked by its best passage): no model call.
"""

from __future__ import annotations


def keyword_gates(dense_ranking: list[int], long_turns: set[int], first: int) -> dict[int, float]:
    """Long turn -> the factor on its keyword and feedback votes: 1 when the dense channel ranks it among its
    ``first`` turns, else 0. ``first`` 0 = off (an empty map: every vote counts)."""
    if first <= 0 or not long_turns:
        return {}
    near = set(dense_ranking[:first])
    return {i: 1.0 if i in near else 0.0 for i in long_turns}
