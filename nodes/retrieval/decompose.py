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
_ENDS_WITH_THING = re.compile(rf"\b{_EN_DETERMINER}\s+[\w'.-]+(?:\s+[\w'.-]+){{0,3}}$", re.IGNORECASE)
_WH = re.compile(r"^(?:(?:and|but)\s+)?(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)
_GENERIC = frozenset({"one", "ones", "thing", "things", "pick", "now", "first", "then", "later", "do", "did", "get",
                      "go", "like", "want", "say", "said", "choose", "chose", "decide", "end", "up"})


# Two events a question compares or measures between ("which came first: X, or Y?", "between when X and when
# Y", 「XのとYのでは、どちらが先」「Xした日からYした日まで何日」「XしたのはYより前？後？」): each event is a part.
_EN_EVENTS = [
    re.compile(r"\bbetween\s+(?:when\s+)?(?P<a>.+?)\s+and\s+(?:when\s+)?(?P<b>.+?)[?.!]*$", re.IGNORECASE),
    re.compile(r"\b(?:came|happened|was|were|did|went)\s+first\b[:,]?\s*(?P<a>.+?),?\s+or\s+(?P<b>.+?)[?.!]*$", re.IGNORECASE),
    re.compile(r"^(?:did|was|were|is)\s+(?P<a>.+?)\s+(?:before|after)\s+(?P<b>.+?)[?.!]*$", re.IGNORECASE),
]
_JA_EVENTS = [
    re.compile(r"^(?P<a>.+?)(?:の)?と、?(?P<b>.+?)(?:の)?(?:では|は)?、?(?:どちら|どっち)が(?:先|早)"),
    re.compile(r"^(?P<a>.+?)(?:日|時)?から、?(?P<b>.+?)(?:日|時)?まで(?:何|なん)"),
    re.compile(r"^(?P<a>.+?)のは、?(?P<b>.+?)のより(?:前|後)"),
]


def event_parts(text: str) -> list[str]:
    """The two events a question compares or counts days between, else []."""
    for n, pattern in enumerate((*_EN_EVENTS, *_JA_EVENTS)):
        m = pattern.search(text)
        if m:
            parts = [m.group("a").strip(" ,、"), m.group("b").strip(" ,、?？")]
            # an event is said in a few words; "between August 11 and August 15" names days, not events
            least = 3 if n == 0 else 2
            if all(len(terms(p)) >= least for p in parts):
                return parts
    return []


def sub_queries(query: str) -> list[str]:
    """The parts of a question that asks for several things, each a query of its own; [] when it asks for one."""
    text = unicodedata.normalize("NFKC", query).strip()
    if not text:
        return []
    events = event_parts(text)
    if events:
        return events
    if _JA_BOTH.search(text):
        head = _JA_HEAD.search(text)
        if head:
            parts = [p.strip() for p in _JA_SPLIT.split(head.group("head")) if p.strip()]
            if 2 <= len(parts) <= MAX_PARTS and all(len(p) >= 2 for p in parts):
                return parts
        return []
    pieces = _EN_SPLIT.split(text)
    parts = [p.strip(" ?.!") for p in pieces if p.strip(" ?.!")]
    if not 2 <= len(parts) <= MAX_PARTS:
        return []
    # Coordinated things ("the task queue and the login provider"): every part but the last ends with one.
    # Coordinated questions ("what does she do to destress and what are her kids into"): each starts with a
    # question word. "Melanie and her kids" is one subject, "According to Gina, what …" one question.
    things = all(_ENDS_WITH_THING.search(p) for p in parts[:-1]) and all(
        re.match(rf"{_EN_DETERMINER}\b", p, re.IGNORECASE) for p in parts[1:])
    questions = all(_WH.match(p) for p in parts)
    if not (things or questions):
        return []
    # Each part must name something: a determiner phrase ("the CI system", "her kids") or two content words
    # ("Melanie … destress"); "and what is it now" names nothing of its own.
    if not all(re.search(rf"\b{_EN_DETERMINER}\s+\w+", p, re.IGNORECASE)
               or len([t for t in terms(p) if t not in _GENERIC]) >= 2 for p in parts):
        return []
    return parts
