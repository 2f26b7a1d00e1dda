"""Offline decomposition of a question that asks for several things at once (issue 19, multi-hop).

"What are the task queue and the login provider?" needs two turns that share no words but the question's
scaffolding; BM25 over the whole question ranks turns holding the rarer of the two names first and the other
answer falls below the budget. Each asked-for part becomes a sub-query whose own keyword ranking joins the
fusion, so every part has its best turns near the top. Only coordinated noun phrases are split ("the X and the
Y", "X, Y and Z", 「XとYはそれぞれ」): a question about two people ("What did Caroline and Melanie do?") is
one question about both and stays whole.
"""

from __future__ import annotations

import re
import unicodedata

from ..text.tokenize import terms

_EN_DETERMINER = r"(?:the|my|our|your|his|her|their|its)"
# "…the X and the Y", "…the X, the Y and the Z", "…the X; and what is the Y"
_EN_SPLIT = re.compile(rf"\s*(?:,\s*(?:and\s+)?|;\s*(?:and\s+)?|\s+and\s+)(?={_EN_DETERMINER}\b|(?:what|which|who|when|where|how)\b)",
                       re.IGNORECASE)
# 「XとYはそれぞれ何？」「XとY、両方教えて」「XとYの二つ」
_JA_BOTH = re.compile(r"それぞれ|両方|どちらも|2つ|二つ|ふたつ")
_JA_HEAD = re.compile(r"^(?P<head>.+?)(?:は|を|、|の)(?:それぞれ|両方|どちらも|2つ|二つ|ふたつ)")
_JA_SPLIT = re.compile(r"と|、|及び|および")

MAX_PARTS = 3
_GENERIC = frozenset({"one", "ones", "thing", "things", "pick", "now", "first", "then", "later", "do", "did", "get",
                      "go", "like", "want", "say", "said", "choose", "chose", "decide", "end", "up"})


def sub_queries(query: str) -> list[str]:
    """The parts of a question that asks for several things, each a query of its own; [] when it asks for one."""
    text = unicodedata.normalize("NFKC", query).strip()
    if not text:
        return []
    if _JA_BOTH.search(text):
        head = _JA_HEAD.search(text)
        if head:
            parts = [p.strip() for p in _JA_SPLIT.split(head.group("head")) if p.strip()]
            if 2 <= len(parts) <= MAX_PARTS and all(len(p) >= 2 for p in parts):
                return parts
        return []
    parts = [p.strip(" ?.!") for p in _EN_SPLIT.split(text) if p.strip(" ?.!")]
    if not 2 <= len(parts) <= MAX_PARTS:
        return []
    # Each part must name something: a determiner phrase ("the CI system", "her kids") or two content words
    # ("Melanie … destress"); "and what is it now" names nothing of its own.
    if not all(re.search(rf"\b{_EN_DETERMINER}\s+\w+", p, re.IGNORECASE)
               or len([t for t in terms(p) if t not in _GENERIC]) >= 2 for p in parts):
        return []
    return parts
