"""Quoting long turns (A1): a turn's sentences with their counts and terms, the excerpt of a long turn that shares
most with the query, and the passage of a long turn that answers it (``passage_picker``). Cached per text: the
packer and the feedback channel read the same few hundred turns query after query.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from functools import lru_cache
from itertools import chain, islice

import numpy as np

from ..text.passages import passage_spans
from ..text.sentences import sentence_spans
from ..text.tokenize import read_once, terms
from ..text.token_count import count_tokens, glued


_PREFIX = re.compile(r"^([^:：\n\[\]]{1,40}?[:：]\s*)")


@lru_cache(maxsize=65_536)
def _tokens(text: str) -> int:
    return count_tokens(text)


@lru_cache(maxsize=16_384)
def _sentences(text: str) -> tuple[str, int, tuple[tuple[str, int, frozenset[str], int], ...]]:
    """A turn's speaker prefix (and its tokens) and its sentences (and lines: a markdown list or a code block
    is no sentence), each with its tokens, terms and start offset. Cached per text: the packer looks at
    hundreds of candidate turns per query, mostly the same ones."""
    m = _PREFIX.match(text)
    prefix = m.group(1) if m else ""
    out = []
    base = len(prefix)
    for a, b in sentence_spans(text[base:]):
        piece = text[base + a : base + b]
        # read_once: a sentence's terms live in this cache's entry, not in the query side's (tokenize._views),
        # which hundreds of warmed replies' sentences would otherwise cycle.
        out.append((piece, count_tokens(piece), frozenset(read_once(piece)[0]), base + a))
    return prefix, count_tokens(prefix), tuple(out)


@lru_cache(maxsize=8192)
def passage_term_counts(text: str) -> tuple[tuple[str, int], ...]:
    """A long turn's passage's terms with their counts, in order of first use (as Counter(terms(text)) has
    them): what pseudo-relevance feedback weighs. Read once and kept here, filled at write time
    (nodes.retrieval.warm.prepare_excerpts): tokenising the answering passages of its three best turns was
    most of the feedback channel's time in a query's first run (1.2 against 0.4 ms p50 on the hard
    long-reply set)."""
    return tuple(Counter(read_once(text)[0]).items())


@lru_cache(maxsize=16_384)
def _starts(text: str) -> tuple[int, ...]:
    return tuple(x[3] for x in _sentences(text)[2])


@lru_cache(maxsize=16_384)
def _sentence_terms(text: str) -> dict[str, tuple[int, ...]]:
    """term -> the sentences of ``text`` (``_sentences``) holding it: a query's few terms find their
    sentences without testing each of a long reply's hundreds."""
    holders: dict[str, list[int]] = {}
    for j, sentence in enumerate(_sentences(text)[2]):
        for term in sentence[2]:
            holders.setdefault(term, []).append(j)
    return {t: tuple(js) for t, js in holders.items()}


def _clipped(sentence: str, tokens: int, max_tokens: int) -> str:
    """A "sentence" of over four excerpts (a code block or a table on one line, a pasted log) cut to its first
    ``max_tokens`` words (CJK: characters); shorter ones stay whole, as a chat turn's long sentence does."""
    if tokens <= 4 * max_tokens:
        return sentence
    words = sentence.split()
    if len(words) > 1:
        return " ".join(words[:max_tokens]) + " …"
    return sentence[:max_tokens] + " …"


_LOOK = 64  # sentences without the query's terms looked at to fill an excerpt: the budget is full long before


def excerpt(text: str, q_terms: set[str] | frozenset[str], max_tokens: int, prefer: tuple[int, int] | None = None) -> str:
    """A turn longer than ``max_tokens``: its speaker prefix and the sentences sharing most terms with the
    query (ties: those inside ``prefer`` — the character span of the passage that answers — then earlier
    ones), kept in their order and joined by " … " — still a quote of that turn only."""
    return counted_excerpt(text, q_terms, max_tokens, prefer)[0]


def counted_excerpt(text: str, q_terms: set[str] | frozenset[str], max_tokens: int,
                    prefer: tuple[int, int] | None = None, text_tokens: int | None = None) -> tuple[str, int]:
    """``excerpt`` and its tokens (budget.count_tokens of it), added up from its sentences' known counts: the
    packer sizes dozens of excerpts per query, and counting each anew cost as much as choosing it.
    ``text_tokens``: the whole text's count, when the caller knows it (the turn index does)."""
    whole = _tokens(text) if text_tokens is None else text_tokens
    if not max_tokens or whole <= max_tokens:
        return text, whole
    prefix, used, sentences = _sentences(text)
    if len(sentences) < 2:
        return text, whole
    holders = _sentence_terms(text)
    overlap: dict[int, int] = {}
    for term in q_terms:
        for j in holders.get(term, ()):
            overlap[j] = overlap.get(j, 0) + 1

    n = len(sentences)
    lo = hi = 0  # the sentences inside the answering passage: lo .. hi-1
    if prefer is not None:
        starts = _starts(text)
        lo, hi = bisect_left(starts, prefer[0]), bisect_left(starts, prefer[1])
    order = sorted(overlap, key=lambda j: (-overlap[j], not lo <= j < hi, j))
    # then the passage's own sentences, then the turn's from its start
    rest = islice(chain(range(lo, hi), range(0, lo), range(hi, n)), _LOOK + len(overlap))
    order += [j for j in rest if j not in overlap]
    chosen: list[int] = []
    for j in order:
        if used >= max_tokens:
            break
        cost = sentences[j][1]
        if chosen and used + cost > max_tokens:
            continue
        chosen.append(j)
        used += cost
    out = ""
    tokens = _sentences(text)[1]  # the prefix's
    last = -1
    for j in sorted(chosen):
        piece = _clipped(sentences[j][0], sentences[j][1], max_tokens)
        if last >= 0 and j != last + 1:
            out += " … "
            tokens += 1  # the ellipsis is a word of its own
        elif last >= 0:
            out += " "
        out += piece
        # Pieces are joined by whitespace, so their counts add up (a clipped one is counted anew).
        tokens += sentences[j][1] if piece is sentences[j][0] else _tokens(piece)
        last = j
    if glued(prefix, out):
        tokens -= 1  # "Name:" and the first word with no space between count as one word
    return prefix + out, tokens


@lru_cache(maxsize=65_536)
def _passage_terms(text: str) -> frozenset[str]:
    return frozenset(terms(text))


@lru_cache(maxsize=2048)
def passage_holders(text: str, size: int, least: int) -> dict[str, tuple[int, ...]]:
    """term -> the passages of long turn ``text`` (passage_spans with ``size``/``least``) holding it. The picker
    weighs a turn's passages by these when the turn index holds other passages for it (reads kept under an older
    cut): without them each query hashed and looked up every passage of every long candidate, most of recall's
    time on real long replies (a 300k-character reply has hundreds). Filled at write time for such turns
    (nodes.retrieval.warm.prepare_excerpts)."""
    holders: dict[str, list[int]] = {}
    for k, (a, b) in enumerate(passage_spans(text, size, least)):
        for term in _passage_terms(text[a:b]):
            holders.setdefault(term, []).append(k)
    return {t: tuple(ks) for t, ks in holders.items()}


def _lexical_of_passages(text: str, size: int, least: int, count: int, wanted: list[str],
                         weight: dict[str, float]) -> list[float]:
    """Each of the ``count`` passages' weight of the query's terms, added in the query's order."""
    lexical = [0.0] * count
    holders = passage_holders(text, size, least)
    for t in wanted:
        w = weight[t]
        if w:
            for k in holders.get(t, ()):
                lexical[k] += w
    return lexical


def passage_picker(index, dense: dict[int, dict[int, float]], q_terms):
    """``passage_of`` for pack_turns: the passage of long turn ``i`` that best matches the query by its words
    (the query's terms it holds, rarer ones weighing more, scaled to the turn's best passage) and, half as
    much, its meaning (passages the dense channel found, by their cosine); ties go to the earlier passage.
    Words first: "what is the Python version?" is nearest in meaning to a Python code block."""
    size, least = index.passage_cut
    if not size:
        return None
    wanted = list(dict.fromkeys(q_terms))
    postings = index.postings
    # rarer terms say more: weigh each by 1 / (turns holding it)
    weight = {t: 1.0 / (1 + len(postings[t][0])) if t in postings else 0.0 for t in wanted}
    passages = index.passages
    doc_weight = np.zeros(len(passages.doc_turn))  # each indexed passage's weight of query terms, once per query
    for t in wanted:
        if t in passages.postings and weight[t]:
            doc_weight[passages.postings[t][0]] += weight[t]

    texts = index.turns.column("text") if hasattr(index.turns, "column") else [t.text for t in index.turns]

    def pick(i: int):
        text = texts[i]
        spans = passage_spans(text, size, least)
        if not spans:
            return None
        lo, hi = passages.span_of(i)
        if hi - lo == len(spans):
            lexical = doc_weight[lo:hi].tolist()
        else:  # the index holds other passages for it (reads kept under another cut): read the passages themselves
            lexical = _lexical_of_passages(text, size, least, len(spans), wanted, weight)
        top_lexical = max(lexical) or 1.0
        found = {k: c for k, c in dense.get(i, {}).items() if k < len(spans)}
        floor = min(found.values(), default=0.0)
        span = (max(found.values()) - floor) if found else 0.0
        score = [lexical[k] / top_lexical
                 + ((0.25 + 0.25 * (found[k] - floor) / span if span else 0.5) if k in found else 0.0)
                 for k in range(len(spans))]
        number = max(range(len(spans)), key=lambda k: (score[k], -k))
        return number, len(spans), spans[number]

    return pick
