"""Packing ranked turns into items (A1): adjacent turns merge into one dated item, in conversation order.

``pack_turns`` runs its stages (``STAGES``) over one ``Packing``: read the turns' columns, choose turns while the
budget allows (``packing_groups``), then write one item per group. Every item carries ``source_ids``/``turn_ids``
of exactly the turns its text was built from. Segment items: ``segment_items``; excerpts: ``excerpts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping

from ..text.chunking import join_parts, parse_part
from ..text.token_count import count_tokens
from .budget import excerpt_tokens
# nodes.retrieval.warm fills three of these caches through this module (CACHES lists them all).
from .excerpts import (_passage_terms, _sentence_terms, _sentences, _starts, _tokens, passage_holders,
                       passage_term_counts)
from .packing_groups import GROUP_HEADER_TOKENS, Groups, choose_turns
from .turn_texts import PassageOf, TurnTexts

__all__ = ["CACHES", "GROUP_HEADER_TOKENS", "Packing", "Refunds", "STAGES", "pack_turns"]


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


@dataclass
class Packing:
    """One ``pack_turns`` call: what it was asked (its parameters, documented there) and what it made."""

    kept: Any
    turns: Any
    tiers: Mapping[int, Collection[str]]
    budget: int | None
    limit: int | None
    settings: Any
    wanted: int
    q_terms: Collection[str] = ()
    token_counts: Any = None
    passage_of: PassageOf | None = None
    item_overhead: int = 0
    dates_once: bool = False
    pointer_groups: bool = False
    refunds: Refunds | None = None
    texts: TurnTexts | None = None
    groups: Groups | None = None
    items: list[dict[str, Any]] = field(default_factory=list)


def read_turns(p: Packing) -> Packing:
    """Reads the turns' text and source-id columns and sets how long a turn may be before it is excerpted: the
    settings' excerpt lengths, the quote of a long turn's answering passage shorter at a small budget
    (budget.excerpt_tokens). A chat turn's excerpt keeps its length: it is one or two sentences of the turn, and
    cut shorter it loses the answer more often (LoCoMo dev at 256 tokens: answer@B 0.376 against 0.399)."""
    budget = p.budget
    turns = p.turns
    # Columns, not rows: the packer reads hundreds of turns' texts and ids per query, and a TurnTable makes a
    # row object on every access.
    if hasattr(turns, "column"):
        text_col, source_col = turns.column("text"), turns.column("source_id")
    else:
        text_col, source_col = [t.text for t in turns], [t.source_id for t in turns]
    settings = p.settings
    chat = settings.recall_excerpt_tokens if budget is not None else 0
    p.texts = TurnTexts(text_col, source_col, p.q_terms, p.token_counts, p.passage_of, chat,
                        excerpt_tokens(settings.recall_passage_excerpt_tokens or chat, budget))
    return p


def choose(p: Packing) -> Packing:
    """Takes ranked turns while the budget allows, merging adjacent ones into groups (packing_groups)."""
    settings = p.settings
    p.groups = choose_turns(p.kept, p.turns, p.texts, p.budget, p.limit or (None if p.budget else p.wanted),
                            settings.timezone, p.item_overhead, p.dates_once, p.pointer_groups, p.refunds,
                            settings.recall_passage_excerpt_tokens or settings.recall_excerpt_tokens)
    return p


def write_items(p: Packing) -> Packing:
    """One item per group, in rank order of its best turn: its text, ids, tiers and scores."""
    p.items = [_item(p, group) for group in sorted(p.groups.groups, key=lambda g: g["rank"])]
    return p


def _item(p: Packing, group: dict[str, Any]) -> dict[str, Any]:
    turns, texts, parts = p.turns, p.texts, p.texts.parts
    members = sorted(group["members"])
    chosen = [turns[m] for m in members]
    # The parts of a long message (S3) that were hit next to each other read as one text again.
    text = f"[{group['date']}] " + join_parts(
        [(turns[m].source_id, texts.text(m), texts.text(m) == turns[m].text) for m in members],
        p.settings.long_message_chunk_overlap,
    )
    sources = list(dict.fromkeys((parse_part(t.source_id) or (t.source_id,))[0] for t in chosen))
    item_tiers: list[str] = []
    for m in members:
        for tier in sorted(p.tiers.get(m, {"archive"})):
            if tier not in item_tiers:
                item_tiers.append(tier)
    return {
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
        "whole_source_ids": [turns[m].source_id for m in members if texts.whole(m)],
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


STAGES: tuple[Callable[[Packing], Packing], ...] = (read_turns, choose, write_items)


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
    p = Packing(kept, turns, tiers, budget, limit, settings, wanted, q_terms, token_counts, passage_of,
                item_overhead, dates_once, pointer_groups, refunds)
    for stage in STAGES:
        p = stage(p)
    return p.items


CACHES = (_tokens, _sentences, _starts, _sentence_terms, _passage_terms, passage_term_counts, passage_holders)
"""Packing's memos keyed by what users said (each has cache_info/cache_clear; made in nodes.retrieval.excerpts):
nodes.text.text_caches counts and empties them for erasure."""
