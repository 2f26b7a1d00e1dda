"""The parts of a question that asks several things (issue 46, multi-hop).

"Where do Priya's users reach the live app, and what in-memory store did she say sits in front of it?" asks two
things whose answers sit in different turns, often sessions apart. Embedded whole, the question's vector lies
between its parts and each evidence turn, matching one part only, ranks far down. Each part embedded on its own
finds its turn near the top of its own dense ranking (channels.part_dense_channels), and that ranking votes in the
fusion beside the whole question's.

A question is cut only where it coordinates two questions or two things asked: ", and …", "and which …",
"as well as …", ";" (English), 「…と、…」「、それと…」「、および…」 (Japanese). The cut is made in the first question
sentence only: what follows it ("Not the ones from the tutorial.") narrows the whole question, not one part. A
part with fewer than two content terms ("How did Caroline" of "How did Caroline and Melanie meet?") is no part: a
question then has parts only when at least two are left.
"""

from __future__ import annotations

import re

from ..text.tokenize import terms

_WH = r"(?:what|which|who|whom|whose|where|when|how|why)"
# English: ", and" / ", as well as" / ";" anywhere; a bare "and" / "as well as" only before a wh-word
# ("Which dashboard and which engine …"), so "Caroline and Melanie" or "rock and roll" stay whole.
_EN_CUT = re.compile(
    rf",\s*(?:and|as well as|plus)\s+|;\s*|\s+(?:and|as well as)\s+(?={_WH}\b)", re.IGNORECASE)
# Japanese: 「AとB」 is also "with" and names pairs, so only 「と、」 (a listed thing closed by a comma) and the
# explicit connectives after a comma cut.
_JA_CUT = re.compile(r"(?<=[^\s、。])と[、，]|[、，]\s*(?:それと|それから|および|及び|あと|また)[、，]?")
_FIRST_SENTENCE = re.compile(r"^(.*?[?？])", re.DOTALL)


def first_question(query: str) -> str:
    """The query up to its first question mark (the whole query when it has none)."""
    found = _FIRST_SENTENCE.match(query.strip())
    return found.group(1) if found else query.strip()


def question_parts(query: str, min_terms: int = 2) -> list[str]:
    """The things ``query`` asks, each as its own text, when it asks at least two (see the module's docstring);
    otherwise an empty list."""
    head = first_question(query)
    pieces = [p for chunk in _EN_CUT.split(head) for p in _JA_CUT.split(chunk)]
    parts = [p.strip(" 、，,") for p in pieces]
    parts = [p for p in parts if len(terms(p)) >= min_terms]
    return parts if len(parts) >= 2 else []
