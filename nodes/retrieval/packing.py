"""Packing ranked turns into items (A1): adjacent turns merge into one dated item; or one item per segment.

Every item carries ``source_ids``/``turn_ids`` of exactly the turns its text was built from (segment items:
all of the segment's ids, with ``quoted_source_ids`` for those whose text is in the item).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter, defaultdict
from functools import lru_cache
from typing import Any, Collection, Mapping, Sequence

import numpy as np

from ..text.chunking import join_parts, parse_part
from ..text.passages import passage_spans
from ..text.sentences import sentence_spans
from ..text.tokenize import read_once, terms
from ..text.token_count import count_tokens, glued
from .temporal import date_label as _date


def _turns_of(turns, segment_id: str) -> list:
    if hasattr(turns, "column"):  # a TurnTable: find the rows by their column, make only those
        return [turns[i] for i, s in enumerate(turns.column("segment_id")) if s == segment_id]
    return [t for t in turns if t.segment_id == segment_id]


def segment_items(ordered, turns, tiers, services, user_id, budget, max_items) -> list[dict[str, Any]]:
    """One item per segment, segments ranked by their hit turns (best counts fully, the next ones half,
    a quarter ...). Text: the segment's date and summary, then its best raw turns the summary lacks."""
    stores = services.stores
    hits: dict[str, list[tuple]] = defaultdict(list)
    seg_rank: dict[str, float] = defaultdict(float)
    for cand in ordered:
        seg = turns[cand[1]].segment_id
        seg_rank[seg] += cand[0] * 0.5 ** len(hits[seg])
        hits[seg].append(cand)
    items: list[dict[str, Any]] = []
    used = 0
    for seg in sorted(seg_rank, key=lambda s: -seg_rank[s]):
        if max_items is not None and len(items) >= max_items:
            break
        record = stores.midterm.get_segment(user_id, seg) or stores.archive.get_segment(user_id, seg)
        if record is None:
            continue
        best = hits[seg][:2]
        raw = [turns[c[1]] for c in sorted(best, key=lambda c: c[1]) if turns[c[1]].text[:40] not in record.summary]
        zone = services.settings.timezone
        text = f"[{_date(record.end_ts, zone)}] {record.summary}" + "".join(f"\n{t.text}" for t in raw)
        cost = count_tokens(text)
        if budget is not None and used + cost > budget:
            continue
        used += cost
        by_turn = {t.turn_id: t for t in _turns_of(turns, seg)} if raw else {}
        quoted = [sid for tid, sid in zip(record.turn_ids, record.source_ids)
                  if tid in {t.turn_id for t in raw} or (by_turn.get(tid) and by_turn[tid].text[:40] in record.summary)]
        item_tiers: list[str] = []
        for c in hits[seg]:
            for tier in sorted(tiers.get(c[1], {"archive"})):
                if tier not in item_tiers:
                    item_tiers.append(tier)
        top = hits[seg][0]
        items.append(
            {
                "segment_id": seg,
                "kind": "episode",
                "unit": "segment",
                "text": text,
                "date": _date(record.end_ts, zone),
                "tiers": item_tiers,
                "source_ids": list(record.source_ids),
                "turn_ids": list(record.turn_ids),
                "quoted_source_ids": quoted,
                "keywords": list(record.keywords),
                "score": round(seg_rank[seg], 4),
                "relevance": round(top[2], 4),
                "recency": round(top[3], 4),
                "importance": float(record.importance),
                "tokens": cost,
            }
        )
    return items


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
    rest = [*range(lo, hi), *range(0, lo), *range(hi, n)][: _LOOK + len(overlap)]
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
        lo, hi = np.searchsorted(passages.doc_turn, [i, i + 1])
        if hi - lo == len(spans):
            lexical = doc_weight[lo:hi].tolist()
        else:  # not indexed with this cut (settings changed since): read the passages themselves
            lexical = [sum(weight[t] for t in wanted if t in _passage_terms(text[a:b])) for a, b in spans]
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


# Once this many ranked turns in a row did not fit the budget's remainder, the packer stops looking: the
# remainder is smaller than what turns here cost, and reading hundreds more (a broad query ranks thousands)
# cost more time than the few tokens it might still fill.
_MAX_MISSES = 60

GROUP_HEADER_TOKENS = 1
"""What a segment's ``[YYYY-MM-DDTHH:MM]`` header costs (budget.count_tokens: one word)."""


class Refunds:
    """Room a caller gives back to the packer once the packed turns quote every message one of its own lines
    stands for: priming's profile shows facts, and a fact whose source messages the episodes then quote would
    say again what they say, so priming leaves it out and its tokens are the episodes' to use.

    ``offers``: the caller's line (any key) -> (the messages it stands for, the tokens it costs). After packing,
    ``earned`` holds the lines whose messages were all quoted, with their tokens."""

    def __init__(self, offers: Mapping[str, tuple[Collection[str], int]] | None = None) -> None:
        self.pending = {key: (frozenset(ids), int(tokens)) for key, (ids, tokens) in (offers or {}).items()
                        if ids and tokens > 0}
        self.earned: dict[str, int] = {}

    def collect(self, quoted: Collection[str]) -> int:
        """The tokens of the lines ``quoted`` now covers (each earned once)."""
        got = 0
        for key, (ids, tokens) in list(self.pending.items()):
            if ids <= quoted:
                del self.pending[key]
                self.earned[key] = tokens
                got += tokens
        return got

    @property
    def tokens(self) -> int:
        return sum(self.earned.values())

    def __repr__(self) -> str:
        return f"Refunds(earned={self.earned}, pending={len(self.pending)})"


def pack_turns(kept, turns, tiers, budget, limit, settings, wanted, q_terms=(), token_counts=None,
               passage_of=None, item_overhead: int = 0, dates_once: bool = False,
               pointer_groups: bool = False, refunds: Refunds | None = None) -> list[dict[str, Any]]:
    """Take ranked turns while the budget allows; adjacent chosen turns merge into one item (one date
    prefix, conversation order). Returns the items in rank order of their best turn. ``token_counts``:
    each turn's length in budget tokens, when the caller's index has it. ``passage_of(i)``: the passage of
    long turn ``i`` that answers, as (number, how many, character span), or None; the turn's excerpt then
    prefers its sentences. ``item_overhead``: tokens each item costs beyond its text (a caller that shows
    every item with a pointer, as priming does). ``dates_once``: the caller shows a day's date once, as a
    header over its items (priming), so only an item of a day not yet packed pays for the date.
    ``pointer_groups``: the caller heads the items of one segment on one day with one ``[date and time]`` header
    that is both their date and their pointer (nodes.priming.assemble), so such a group pays
    GROUP_HEADER_TOKENS in all, instead of ``item_overhead`` and dates; an excerpt of a long message heads
    its own item (its time opens its message whole, where its segment may be far longer than the quote).
    ``refunds``: lines of the caller's that the packed turns make redundant give their tokens back to the budget
    (Refunds)."""
    limit_tokens = settings.recall_excerpt_tokens if budget is not None else 0
    passage_tokens = settings.recall_passage_excerpt_tokens if budget is not None else 0
    wanted_terms = frozenset(q_terms)
    # Columns, not rows: the packer reads hundreds of turns' texts and ids per query, and a TurnTable makes a
    # row object on every access.
    if hasattr(turns, "column"):
        text_col, source_col = turns.column("text"), turns.column("source_id")
    else:
        text_col, source_col = [t.text for t in turns], [t.source_id for t in turns]
    texts: dict[int, str] = {}
    costs: dict[int, int] = {}
    parts: dict[int, tuple[int, int]] = {}  # turn index -> (passage number, passages) for those quoted from one

    def text_of(i: int) -> str:
        if i not in texts:
            known = int(token_counts[i]) if token_counts is not None else None  # its length, when the index has it
            if known is not None and (not limit_tokens or known <= limit_tokens):
                texts[i], costs[i] = text_col[i], known
            elif limit_tokens and passage_of is not None and (found := passage_of(i)) is not None:
                number, count, span = found
                parts[i] = (number, count)
                texts[i], costs[i] = counted_excerpt(text_col[i], wanted_terms, passage_tokens or limit_tokens, span, known)
            else:
                texts[i], costs[i] = counted_excerpt(text_col[i], wanted_terms, limit_tokens, None, known)
        return texts[i]

    def _ellipsis(a: int, b: int) -> int:
        """1 when turns ``a`` and ``b`` are consecutive parts of one chunked message and one is an excerpt
        (join_parts then puts " … " between them), else 0."""
        pa, pb = parse_part(source_col[a]), parse_part(source_col[b])
        if not (pa and pb and pa[0] == pb[0] and abs(pa[1] - pb[1]) == 1):
            return 0
        return int(text_of(a) != text_col[a] or text_of(b) != text_col[b])

    def _whole(i: int) -> bool:
        """Whether turn ``i``'s message is quoted whole: not an excerpt, nor one part of a chunked message (the
        other parts may hold what a caller's line says)."""
        return text_of(i) == text_col[i] and parse_part(source_col[i]) is None

    def cost_of(i: int) -> int:
        text = text_of(i)
        if i not in costs:
            costs[i] = _tokens(text)
        return costs[i]

    groups: list[dict[str, Any]] = []  # each: {"lo", "hi", "rank", "members", "score", ...}
    by_index: dict[int, dict[str, Any]] = {}
    used = 0
    max_items = limit or (None if budget else wanted)
    misses = 0
    per_day: dict[str, int] = defaultdict(int)  # date -> items of that day packed so far
    # What pays a pointer: each item (its own key); with ``pointer_groups`` each segment's items of a day, or an
    # excerpt's item, pay for their one header.
    per_key: dict[tuple, int] = defaultdict(int)
    key_cost = GROUP_HEADER_TOKENS if pointer_groups else item_overhead
    quoted: set[str] = set()  # the messages packed whole so far

    def pointer_delta(removed: Sequence[tuple], added: tuple) -> int:
        change: dict[tuple, int] = defaultdict(int)
        for k in removed:
            change[k] -= 1
        change[added] += 1
        return key_cost * sum((per_key[k] + d > 0) - (per_key[k] > 0) for k, d in change.items())

    for rank, (score, i, relevance, recency) in enumerate(kept):
        if budget is not None and (used >= budget or misses >= _MAX_MISSES):
            break  # every turn costs at least one token; or the rest of the budget fits nothing we have
        if i in by_index:
            continue
        cost = cost_of(i)
        if budget is not None and used + cost > budget:
            misses += 1
            continue
        misses = 0
        date = _date(turns[i].ts, settings.timezone)
        joinable = [g for g in (by_index.get(i - 1), by_index.get(i + 1)) if g is not None and g["date"] == date]
        if len(joinable) == 2 and joinable[0] is joinable[1]:
            joinable = joinable[:1]
        solo = i in parts or any(g["solo"] for g in joinable)
        lo = min([i, *(g["lo"] for g in joinable)])
        if pointer_groups and not solo:
            key = ("segment", date, turns[lo].segment_id)
        elif joinable and joinable[0]["key"][0] == "solo":
            key = joinable[0]["key"]  # an item with a pointer of its own keeps it
        else:  # a new item, or one an excerpt takes out of its segment's group: a pointer of its own
            key = ("solo", rank)
        # A new item pays for its "[date]" prefix (or its day's header, once) and its pointer (or its group's,
        # once); a part of a long message next to another part of it, either an excerpt, is joined to it by
        # " … "; a turn that bridges two items makes them one: one date prefix and one pointer fewer.
        ellipsis = sum(_ellipsis(i, j) for j in (i - 1, i + 1) if (g := by_index.get(j)) is not None and g in joinable)
        pointers = pointer_delta([g["key"] for g in joinable], key)
        if pointer_groups:  # the headers are the dates: pointer_delta counted them
            dates = 0
        else:
            dates = (0 if dates_once and per_day[date] else 1) if not joinable else -(len(joinable) - 1) * (not dates_once)
        # A credit for merging is taken only once the turn fits without it (the packing before groups did so).
        if budget is not None and used + cost + ellipsis + max(0, pointers) + max(0, dates) > budget:
            continue
        if not joinable and max_items is not None and len(groups) >= max_items:
            if budget is None:
                break
            continue
        used += cost + ellipsis + pointers + dates
        for g in joinable:
            per_key[g["key"]] -= 1
        per_key[key] += 1
        if not joinable:
            group = {"lo": i, "hi": i, "rank": rank, "score": score, "relevance": relevance, "recency": recency,
                     "date": date, "members": {i}}
            groups.append(group)
            per_day[date] += 1
        else:
            group = joinable[0]
            if len(joinable) == 2:  # i bridges two items: merge them
                other = joinable[1]
                group["members"] |= other["members"]
                group["lo"], group["hi"] = min(group["lo"], other["lo"]), max(group["hi"], other["hi"])
                group["rank"] = min(group["rank"], other["rank"])
                group["score"] = max(group["score"], other["score"])
                for m in other["members"]:
                    by_index[m] = group
                groups.remove(other)
                per_day[date] -= 1
            group["members"].add(i)
            group["lo"], group["hi"] = min(group["lo"], i), max(group["hi"], i)
        group["solo"], group["key"] = solo, key
        by_index[i] = group
        if refunds is not None and refunds.pending and budget is not None and _whole(i):
            quoted.add(turns[i].source_id)
            budget += refunds.collect(quoted)
    items = []
    for group in sorted(groups, key=lambda g: g["rank"]):
        members = sorted(group["members"])
        chosen = [turns[m] for m in members]
        # The parts of a long message (S3) that were hit next to each other read as one text again.
        text = f"[{group['date']}] " + join_parts(
            [(turns[m].source_id, text_of(m), text_of(m) == turns[m].text) for m in members],
            settings.long_message_chunk_overlap,
        )
        sources = list(dict.fromkeys((parse_part(t.source_id) or (t.source_id,))[0] for t in chosen))
        item_tiers: list[str] = []
        for m in members:
            for tier in sorted(tiers.get(m, {"archive"})):
                if tier not in item_tiers:
                    item_tiers.append(tier)
        items.append(
            {
                "segment_id": chosen[0].segment_id,
                "kind": "episode",
                "unit": "turns",
                "text": text,
                "date": group["date"],
                # When its first quoted message was said, or for an excerpt its long message: priming's time
                # header, which opens the conversation at that minute with that minute's messages whole.
                "first_ts": turns[min((m for m in members if m in parts), default=members[0])].ts,
                "tiers": item_tiers,
                "source_ids": sources,  # a chunked message's parts are quoted under its one id
                "quoted_source_ids": sources,
                # Those quoted whole: an excerpt may leave out what a fact was learnt from (Refunds).
                "whole_source_ids": [turns[m].source_id for m in members if _whole(m)],
                "turn_ids": [t.turn_id for t in chosen],
                "speakers": [t.speaker for t in chosen],
                # Which part of a long turn the text quotes (its source id is the whole turn's).
                **({"passages": [{"turn_id": turns[m].turn_id, "source_id": turns[m].source_id,
                                  "passage": parts[m][0], "of": parts[m][1]} for m in members if m in parts]}
                   if any(m in parts for m in members) else {}),
                "keywords": [],
                "score": round(group["score"], 4),
                "relevance": round(group["relevance"], 4),
                "recency": round(group["recency"], 4),
                "importance": 0.0,
                "tokens": count_tokens(text),
            }
        )
    return items


def open_segment_item(turns: Sequence[dict], zone: str = "UTC") -> dict:
    text = " / ".join(f"{t['speaker']}: {t['text']}" for t in turns[-6:])
    return {
        "segment_id": "(open)",
        "kind": "episode",
        "unit": "short-term",
        "text": text,
        "date": _date(turns[-1]["ts"], zone),
        "tiers": ["short-term"],
        "source_ids": [t["source_id"] for t in turns[-6:]],
        "turn_ids": [t["turn_id"] for t in turns[-6:]],
        "keywords": [],
        "score": 1.0,
        "relevance": 1.0,
        "recency": 1.0,
        "importance": 0.0,
        "tokens": count_tokens(text),
    }


def read_message(archive, user_id: str, source_id: str, overlap: int = 200, max_parts: int = 1_000) -> str | None:
    """The whole text of the message ``source_id`` as stored: one turn, or the parts of a long message
    (S3) read from the archive and joined back; None when it is not there."""
    from lumina_memory.stores import ids

    whole = archive.get_turns(user_id, [ids.turn_id(user_id, source_id)])
    if whole:
        return whole[0].text
    wanted = [ids.turn_id(user_id, ids.part_source_id(source_id, k)) for k in range(max_parts)]
    parts = sorted(archive.get_turns(user_id, wanted), key=lambda t: parse_part(t.source_id)[1])
    if not parts:
        return None
    return join_parts([(t.source_id, t.text, True) for t in parts], overlap, sep=" … ")
