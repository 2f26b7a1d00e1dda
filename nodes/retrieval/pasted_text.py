"""How much of a long turn's keyword match is pasted text: the keyword channels' vote factor for a long turn
(``recall_pasted_keyword_weight``, nodes.retrieval.fusion).

BM25 over a long pasted documentation part or code block finds some of a question's words in every such part,
and those votes bury the turn the dense channel ranks first (bench/results/direct_floor.md). Scaling every long
turn's keyword vote also scales a long turn the user wrote about their plans, or a fact said around a paste, which
is the evidence of update, temporal and open-domain questions. So the factor follows how much of what the query
matched in the turn lies in pasted lines: 1 when the turn's own prose holds every query term the turn holds, the
setting when only its pasted lines do, in proportion between.

A line is pasted when it sits in a fenced block, is indented, is an interpreter prompt or an underline, or belongs
to a block of hard-wrapped lines (documentation is wrapped at 72–88 columns; chat prose is one line a paragraph).
"""

from __future__ import annotations

import re

import numpy as np

from lumina_memory.stores.lexical import idf

from ..text.tokenize import read_once

WRAP_CHARS = 100
"""A line of a block of two or more lines at most this long reads as hard-wrapped (pasted) text: documentation and
docstrings wrap at 72–88 columns, and a line longer than that in such a block is prose written around a paste."""

_UNDERLINE = re.compile(r"[-=*~^#+_]{3,}")
_BULLET = re.compile(r"(?:[-*•・]|\d+[.)])\s")
_PROMPT = ("```", ">>>", "...", "$ ")


def pasted_lines(text: str) -> list[tuple[str, bool]]:
    """Each non-empty line of ``text`` and whether it reads as pasted."""
    lines = text.split("\n")
    out: list[tuple[str, bool]] = []
    fenced = False
    for k, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("```"):
            fenced = not fenced
            out.append((line, True))
            continue
        in_block = (k > 0 and lines[k - 1].strip() != "") or (k + 1 < len(lines) and lines[k + 1].strip() != "")
        pasted = (fenced or line[0] in " \t" or stripped.startswith(_PROMPT) or bool(_UNDERLINE.fullmatch(stripped))
                  or (in_block and len(line) <= WRAP_CHARS and not _BULLET.match(stripped)))
        out.append((line, pasted))
    return out


def own_terms(index, i: int) -> frozenset[str]:
    """The terms of turn ``i``'s own (not pasted) lines; kept with the index object, turn by turn, as a turn's
    text never changes (an extended index is a new object)."""
    cache = getattr(index, "_own_terms", None)
    if cache is None:
        cache = index._own_terms = {}
    known = cache.get(i)
    if known is None:
        own = "\n".join(line for line, pasted in pasted_lines(index.turns[i].text) if not pasted)
        known = cache[i] = frozenset(read_once(own)[0]) if own else frozenset()
    return known


def pasted_share(index, i: int, weights: dict[str, float]) -> float:
    """The share of the query's IDF mass held by turn ``i`` that only its pasted lines hold (0 when it holds none)."""
    held = {t: w for t, w in weights.items() if _holds(index.postings.get(t), i)}
    total = sum(held.values())
    if total <= 0:
        return 0.0
    own = own_terms(index, i)
    return 1.0 - sum(w for t, w in held.items() if t in own) / total


def keyword_scales(index, q_terms: list[str], rankings: list[list[int]], weight: float, longest: int) -> dict[int, float]:
    """Turn index -> keyword vote factor, for the long turns (over ``longest`` tokens) of ``rankings``; ``weight``
    1 gives none (every vote as it is)."""
    if weight >= 1.0 or not q_terms:
        return {}
    n = len(index.turns)
    weights = {t: idf(n, _df(index, t)) for t in dict.fromkeys(q_terms)}
    counts = index.token_counts
    out: dict[int, float] = {}
    for ranking in rankings:
        for i in ranking:
            if i not in out and counts[i] > longest:
                out[i] = 1.0 - (1.0 - weight) * pasted_share(index, i, weights)
    return out


def _df(index, term: str) -> int:
    posting = index.postings.get(term)
    return 0 if posting is None else int(posting[0].size)


def _holds(posting, i: int) -> bool:
    if posting is None:
        return False
    docs = posting[0]
    at = int(np.searchsorted(docs, i))
    return at < docs.size and int(docs[at]) == i
