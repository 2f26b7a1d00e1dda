"""What the packer quotes of each turn: the turn whole, or when it is longer than the excerpt budget its excerpt
(the answering passage's sentences first, when a passage picker is given), with its cost in budget tokens."""

from __future__ import annotations

from typing import Callable, Sequence

from ..text.chunking import parse_part
from .excerpts import _tokens, counted_excerpt

PassageOf = Callable[[int], "tuple[int, int, tuple[int, int]] | None"]


class TurnTexts:
    """The quoted text and cost of turns by their index, each made once per packing.

    ``text_col``/``source_col``: every turn's text and source id (columns: the packer reads hundreds of them per
    query, and a TurnTable makes a row object on every access). ``limit_tokens``: a longer turn is quoted by an
    excerpt of this many tokens (0: always whole); ``passage_tokens``: that of a long turn whose answering
    passage ``passage_of`` finds. ``parts`` holds, for each turn quoted from a passage, (its number, passages)."""

    def __init__(self, text_col: Sequence[str], source_col: Sequence[str], q_terms, token_counts,
                 passage_of: PassageOf | None, limit_tokens: int, passage_tokens: int) -> None:
        self.text_col, self.source_col = text_col, source_col
        self.wanted_terms = frozenset(q_terms)
        self.token_counts, self.passage_of = token_counts, passage_of
        self.limit_tokens, self.passage_tokens = limit_tokens, passage_tokens
        self.texts: dict[int, str] = {}
        self.costs: dict[int, int] = {}
        self.parts: dict[int, tuple[int, int]] = {}

    def text(self, i: int) -> str:
        """Turn ``i``'s quoted text: whole, or its excerpt."""
        texts = self.texts
        if i not in texts:
            limit = self.limit_tokens
            known = int(self.token_counts[i]) if self.token_counts is not None else None  # when the index has it
            if known is not None and (not limit or known <= limit):
                texts[i], self.costs[i] = self.text_col[i], known
            elif limit and self.passage_of is not None and (found := self.passage_of(i)) is not None:
                number, count, span = found
                self.parts[i] = (number, count)
                texts[i], self.costs[i] = counted_excerpt(self.text_col[i], self.wanted_terms,
                                                          self.passage_tokens or limit, span, known)
            else:
                texts[i], self.costs[i] = counted_excerpt(self.text_col[i], self.wanted_terms, limit, None, known)
        return texts[i]

    def cost(self, i: int) -> int:
        """Budget tokens of turn ``i``'s quoted text."""
        text = self.text(i)
        if i not in self.costs:
            self.costs[i] = _tokens(text)
        return self.costs[i]

    def ellipsis(self, a: int, b: int) -> int:
        """1 when turns ``a`` and ``b`` are consecutive parts of one chunked message and one is an excerpt
        (join_parts then puts " … " between them), else 0."""
        pa, pb = parse_part(self.source_col[a]), parse_part(self.source_col[b])
        if not (pa and pb and pa[0] == pb[0] and abs(pa[1] - pb[1]) == 1):
            return 0
        return int(self.text(a) != self.text_col[a] or self.text(b) != self.text_col[b])

    def same_message(self, i: int, others) -> bool:
        """Whether turn ``i`` and every turn of ``others`` are parts of one chunked message (S3)."""
        mine = parse_part(self.source_col[i])
        return mine is not None and all((p := parse_part(self.source_col[j])) and p[0] == mine[0] for j in others)

    def whole(self, i: int) -> bool:
        """Whether turn ``i``'s message is quoted whole: not an excerpt, nor one part of a chunked message (the
        other parts may hold what a caller's line says)."""
        return self.text(i) == self.text_col[i] and parse_part(self.source_col[i]) is None
