"""Choosing the turns to pack (A1): ranked turns are taken while the budget allows, and a turn next to one taken
on the same day joins its group, one item with one date and one pointer. Each turn pays for its text, and a new
item for its date (or its day's header) and pointer (or its group's), so what is packed fits the budget as the
caller will show it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

from .temporal import date_label as _date
from .turn_texts import TurnTexts

# Once this many ranked turns in a row did not fit the budget's remainder, the packer stops looking: the
# remainder is smaller than what turns here cost, and reading hundreds more (a broad query ranks thousands)
# cost more time than the few tokens it might still fill.
_MAX_MISSES = 60

GROUP_HEADER_TOKENS = 1
"""What a segment's ``[YYYY-MM-DDTHH:MM]`` header costs (budget.count_tokens: one word)."""

CONTEXT_SHARE = 0.1
"""The least of a budget the passages of long messages next to a packed turn (another message of its exchange,
ranked there mostly for being its neighbour) may take before the rest of the ranked turns had their turn; beyond
their room (``context_room``) they wait, and fill what the others leave. Packed first at any budget, they took a
small budget from the second and third best hits."""
HITS_FIRST = 10
"""Quotes of the settings' length a budget keeps for the ranked turns before the neighbours' passages may use the
rest (at 1,024 tokens and 48-token quotes: 544 for the neighbours, at 256: CONTEXT_SHARE's 25)."""


def context_room(budget: int | None, quote_tokens: int) -> int | None:
    """What the neighbours' passages may take of ``budget`` before the other ranked turns are tried: the budget
    beyond HITS_FIRST quotes of ``quote_tokens``, at least CONTEXT_SHARE of it; None (no limit) without a budget."""
    if budget is None:
        return None
    return max(int(budget * CONTEXT_SHARE), budget - HITS_FIRST * quote_tokens)


@dataclass
class Groups:
    """The groups packed so far and what they cost: each group {"lo", "hi", "rank", "members", "score",
    "relevance", "recency", "date", "solo", "key"}; ``per_key`` counts the items (or segment groups) paying one
    pointer, ``per_day`` the items of a date, ``quoted`` the messages packed whole; ``context_used`` the tokens of
    long messages' passages packed next to a packed turn (CONTEXT_SHARE)."""

    budget: int | None
    max_items: int | None
    key_cost: int
    groups: list[dict[str, Any]] = field(default_factory=list)
    by_index: dict[int, dict[str, Any]] = field(default_factory=dict)
    used: int = 0
    misses: int = 0
    per_day: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    per_key: dict[tuple, int] = field(default_factory=lambda: defaultdict(int))
    quoted: set[str] = field(default_factory=set)
    context_room: int | None = None  # tokens the neighbours of packed turns may take now (None: no limit)
    context_used: int = 0

    def pointer_delta(self, removed: Sequence[tuple], added: tuple) -> int:
        """What the pointers cost more (or less) once the items keyed ``removed`` become one keyed ``added``."""
        change: dict[tuple, int] = defaultdict(int)
        for k in removed:
            change[k] -= 1
        change[added] += 1
        per_key = self.per_key
        return self.key_cost * sum((per_key[k] + d > 0) - (per_key[k] > 0) for k, d in change.items())


def choose_turns(kept, turns, texts: TurnTexts, budget: int | None, max_items: int | None, zone: str,
                 item_overhead: int, dates_once: bool, pointer_groups: bool, refunds,
                 quote_tokens: int = 0) -> Groups:
    """The groups of ``kept`` (ranked (score, index, relevance, recency) tuples) that fit ``budget``, at most
    ``max_items`` of them; ``quote_tokens``: the settings' length of a long message's quote (context_room). See
    packing.pack_turns for the other parameters."""
    g = Groups(budget, max_items, GROUP_HEADER_TOKENS if pointer_groups else item_overhead)
    g.context_room = context_room(budget, quote_tokens)
    waiting: list[tuple[int, tuple]] = []
    for rank, cand in enumerate(kept):
        if g.budget is not None and (g.used >= g.budget or g.misses >= _MAX_MISSES):
            break  # every turn costs at least one token; or the rest of the budget fits nothing we have
        outcome = _place(g, rank, cand, turns, texts, zone, dates_once, pointer_groups)
        if outcome is _STOP:
            break
        if outcome is _WAIT:
            waiting.append((rank, cand))
        _refund(g, outcome, cand[1], turns, texts, refunds)
    g.context_room = None  # what the other turns left: the neighbours that waited, in rank order
    for rank, cand in waiting:
        if g.used >= g.budget:
            break
        _refund(g, _place(g, rank, cand, turns, texts, zone, dates_once, pointer_groups), cand[1], turns, texts,
                refunds)
    return g


def _refund(g: Groups, outcome: str, i: int, turns, texts: TurnTexts, refunds) -> None:
    """Gives the budget back the caller's lines turn ``i``, packed whole, makes redundant (packing.Refunds)."""
    if outcome is _PACKED and refunds is not None and refunds.pending and g.budget is not None and texts.whole(i):
        g.quoted.add(turns[i].source_id)
        g.budget += refunds.collect(g.quoted)


_STOP, _SKIP, _PACKED, _WAIT = "stop", "skip", "packed", "wait"
"""What became of a ranked turn: no more turns can be packed; it is not packed; it is; it is a neighbour of a
packed turn beyond the context's share, tried again once the other turns had their turn."""


def _place(g: Groups, rank: int, cand: tuple, turns, texts: TurnTexts, zone: str, dates_once: bool,
           pointer_groups: bool) -> str:
    """Packs ranked turn ``cand`` when it fits, into a new group or the group(s) next to it (_PACKED), or says
    why not (_SKIP, or _STOP when no more turns can be packed)."""
    score, i, relevance, recency = cand
    if i in g.by_index:
        return _SKIP
    cost = texts.cost(i)
    if g.budget is not None and g.used + cost > g.budget:
        g.misses += 1
        return _SKIP
    g.misses = 0
    date = _date(turns[i].ts, zone)
    joinable = [x for x in (g.by_index.get(i - 1), g.by_index.get(i + 1)) if x is not None and x["date"] == date]
    if len(joinable) == 2 and joinable[0] is joinable[1]:
        joinable = joinable[:1]
    # A long message next to a hit, quoted from its passage, waits: ranked for being next to the hit more than
    # for holding what was asked, its quote is a guess at where it says it. A chat turn next to a hit is often
    # the other half of the answer (the question it replies to), and holding it back cost LoCoMo evidence.
    neighbour = (bool(joinable) and i in texts.parts
                 and not texts.same_message(i, [j for j in (i - 1, i + 1) if j in g.by_index]))
    if neighbour and g.context_room is not None and g.context_used + cost > g.context_room:
        return _WAIT
    solo = i in texts.parts or any(x["solo"] for x in joinable)
    key = _pointer_key(rank, date, turns[min([i, *(x["lo"] for x in joinable)])].segment_id, joinable, solo,
                       pointer_groups)
    # A new item pays for its "[date]" prefix (or its day's header, once) and its pointer (or its group's,
    # once); a part of a long message next to another part of it, either an excerpt, is joined to it by
    # " … "; a turn that bridges two items makes them one: one date prefix and one pointer fewer.
    ellipsis = sum(texts.ellipsis(i, j) for j in (i - 1, i + 1) if (x := g.by_index.get(j)) is not None and x in joinable)
    pointers = g.pointer_delta([x["key"] for x in joinable], key)
    if pointer_groups:  # the headers are the dates: pointer_delta counted them
        dates = 0
    else:
        dates = (0 if dates_once and g.per_day[date] else 1) if not joinable else -(len(joinable) - 1) * (not dates_once)
    # A credit for merging is taken only once the turn fits without it (the packing before groups did so).
    if g.budget is not None and g.used + cost + ellipsis + max(0, pointers) + max(0, dates) > g.budget:
        return _SKIP
    if not joinable and g.max_items is not None and len(g.groups) >= g.max_items:
        return _SKIP if g.budget is not None else _STOP
    g.used += cost + ellipsis + pointers + dates
    if neighbour:
        g.context_used += cost
    _join(g, i, rank, cand, date, joinable, solo, key)
    return _PACKED


def _pointer_key(rank: int, date: str, segment_id: str, joinable: list[dict], solo: bool,
                 pointer_groups: bool) -> tuple:
    """What pays the pointer of the item turn ``i`` goes to: its segment's group of the day, or the item itself."""
    if pointer_groups and not solo:
        return ("segment", date, segment_id)
    if joinable and joinable[0]["key"][0] == "solo":
        return joinable[0]["key"]  # an item with a pointer of its own keeps it
    return ("solo", rank)  # a new item, or one an excerpt takes out of its segment's group: a pointer of its own


def _join(g: Groups, i: int, rank: int, cand: tuple, date: str, joinable: list[dict], solo: bool, key: tuple) -> None:
    """Adds turn ``i`` as a new group, or to the group next to it, or bridges the two groups around it into one."""
    score, _i, relevance, recency = cand
    for x in joinable:
        g.per_key[x["key"]] -= 1
    g.per_key[key] += 1
    if not joinable:
        group = {"lo": i, "hi": i, "rank": rank, "score": score, "relevance": relevance, "recency": recency,
                 "date": date, "members": {i}}
        g.groups.append(group)
        g.per_day[date] += 1
    else:
        group = joinable[0]
        if len(joinable) == 2:  # i bridges two items: merge them
            other = joinable[1]
            group["members"] |= other["members"]
            group["lo"], group["hi"] = min(group["lo"], other["lo"]), max(group["hi"], other["hi"])
            group["rank"] = min(group["rank"], other["rank"])
            group["score"] = max(group["score"], other["score"])
            for m in other["members"]:
                g.by_index[m] = group
            g.groups.remove(other)
            g.per_day[date] -= 1
        group["members"].add(i)
        group["lo"], group["hi"] = min(group["lo"], i), max(group["hi"], i)
    group["solo"], group["key"] = solo, key
    g.by_index[i] = group
