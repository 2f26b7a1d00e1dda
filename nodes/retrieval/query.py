"""Query analysis: which of the conversation's speakers a question is about.

Questions about a conversation name the people in it ("What did Melanie paint?", "メラニーは何を描いた？").
What a person did is, overwhelmingly, told in that person's own turns, so a question naming exactly one
speaker focuses recall on that speaker's turns; one naming several ("What do Caroline and Melanie both
like?") is answered from each of them, so each speaker's turns are ranked on their own and interleaved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .budget import _CJK_RE


@dataclass
class QueryPlan:
    speakers: list[str] = field(default_factory=list)  # speaker labels the query names, in order of mention


def _mentions(query: str, name: str) -> tuple[int, bool]:
    """(position of ``name`` in ``query`` as a word, or -1; whether every mention is a possessive "Name's")."""
    if not name:
        return -1, False
    if _CJK_RE.search(name):
        return query.find(name), False
    found = list(re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])('s\b|’s\b)?", query, re.IGNORECASE))
    if not found:
        return -1, False
    return found[0].start(), all(m.group(1) for m in found)


def analyse(query: str, speakers: list[str]) -> QueryPlan:
    if len(speakers) < 2:
        return QueryPlan()
    found = sorted((pos, possessive, name) for name in speakers for pos, possessive in [_mentions(query, name)] if pos >= 0)
    subjects = [f for f in found if not f[1]]
    if subjects:  # "What did Jon say about Gina's store?" is about what Jon said, in Jon's turns
        found = subjects
    return QueryPlan([name for _pos, _poss, name in found])
