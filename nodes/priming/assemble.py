"""Fitting the channels' items into their budgets and rendering the labelled sections.

Each shown item is one line, ``<text> (<pointer>)``, and costs that line's tokens (the pointer included; shown
short, nodes.tools.pointers);
the knowledge & episodes section is grouped by day, in the order things happened (undated lines first):
- a segment's lines of one day (whole turns of a stored segment) sit under one header, the date and time of the
  first of them, ``[2023-08-03T14:05]``: it is their date and their pointer at once (read_memory opens the
  conversation at that minute, which holds them all), so a group pays one token where recall pays a date per item;
- an excerpt of a long message has a header of its own, its message's time (which opens that message whole:
  its segment may be far longer than the quote);
- a line without a time (a fact, a summary) keeps its own pointer, under a plain ``[YYYY-MM-DD]`` header paid for
  once per day;
the labels of the sections with candidates are reserved from the whole before it is split, so the rendered text never exceeds the
message type's budget. Profile, recent activity and procedures are packed into their own budgets first; what
they leave goes to the knowledge & episodes channel, which knowledge-base passages share (at most a third).
An item already shown (assemble.identity) is not shown again.
"""

from __future__ import annotations

import re
from typing import Any, Collection, Sequence

from lumina_memory.nodes.text.token_count import count_tokens
from lumina_memory.nodes.retrieval.packing import GROUP_HEADER_TOKENS
from lumina_memory.nodes.tools.pointers import abbreviated, time_pointer

from .budgets import channel_budgets, flow_unused
from .models import PrimedItem, Section
from .presets import PrimingPreset

ORDER = ("profile", "recent", "episodes", "procedures", "kb")

LABELS = {"profile": "[profile]", "recent": "[recent]", "episodes": "[knowledge&episodes]",
          "procedures": "[procedures]", "kb": "[knowledge-bases]"}
KB_SHARE = 1 / 3


def line(entry: dict[str, Any]) -> str:
    """An item as shown: its text and its pointer, short (``shown``) once the section is assembled. A pointer is
    one token either way (budget.count_tokens), so what was packed still fits."""
    return f"{entry['text']} ({entry.get('shown') or entry['_source']})"


def label_reserve(names: Sequence[str] = ORDER) -> int:
    return sum(count_tokens(LABELS[name]) for name in names)


def identity(entry: dict[str, Any]) -> str:
    """What makes two items the same: the pointer, and for episodes the messages quoted (two excerpts of one
    segment share its ``seg:`` pointer and are still two items)."""
    if entry["kind"] in ("episode", "turns"):
        return entry["_source"] + "|" + ",".join(entry.get("quoted_source_ids") or entry.get("source_ids") or ())
    return entry["_source"]


_DAY_TAG = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\]\s*")


def split_day(text: str) -> tuple[str | None, str]:
    """(the day of a leading ``[YYYY-MM-DD]`` tag, the text after it); (None, text) without one."""
    m = _DAY_TAG.match(text)
    return (m.group(1), text[m.end():]) if m else (None, text)


def pointer_group(entry: dict[str, Any]) -> tuple[str | None, str] | None:
    """What one time header stands over: a segment's lines of a day, (day, segment id), or a recalled excerpt
    alone, (day, "=" its identity); None for a line that shows its own pointer (no time: a fact, a summary)."""
    if entry.get("ts") is None:
        return None
    return split_day(entry["text"])[0], entry.get("segment_id") or "=" + identity(entry)


def _pack(candidates: Sequence[dict], budget: int, seen: set[str], by_day: bool = False) -> list[dict]:
    """Items in order while their lines fit (one that does not fit is skipped: a shorter one may). ``by_day``:
    a line costs its text without the day tag; a segment's first line of a day also pays for its time header and
    the others nothing more; a line with its own pointer pays it, and the first such line of a day its plain
    header."""
    out, used = [], 0
    days: set[str] = set()
    groups: set[tuple] = set()
    for c in candidates:
        key = identity(c)
        if key in seen:
            continue
        day, body = split_day(c["text"]) if by_day else (None, c["text"])
        group = pointer_group(c) if by_day else None
        if group is None:
            cost = count_tokens(line({**c, "text": body})) + (count_tokens(f"[{day}]") if day and day not in days else 0)
        else:
            cost = count_tokens(body) + (0 if group in groups else GROUP_HEADER_TOKENS)
        if used + cost > budget:
            continue
        out.append({**c, "tokens": cost})
        used += cost
        seen.add(key)
        if group is not None:
            groups.add(group)
        elif day:
            days.add(day)
    return out


def group_headers(items: Sequence[dict], zone: str = "UTC") -> dict[tuple, str]:
    """Each group's header (pointer_group): the minute of its first line's first message (a time pointer, on
    ``zone``'s clock, as the lines' day tags are)."""
    first: dict[tuple, float] = {}
    for i in items:
        if (group := pointer_group(i)) is not None:
            first[group] = min(first.get(group, i["ts"]), i["ts"])
    return {group: time_pointer(ts, zone) for group, ts in first.items()}


def render_by_day(items: Sequence[dict], zone: str = "UTC") -> str:
    """Undated lines first (rank order); then each day: its lines with pointers of their own under the day's plain
    header, then its segments' lines under their time headers, in time order (two segments whose first lines
    fall in one minute share it: read_memory opens both). Lines in rank order under each header."""
    headers = group_headers(items, zone)
    blocks: dict[tuple[str, str], list[str]] = {}  # (day, header) -> lines; a day's plain header sorts first
    undated: list[str] = []
    for i in items:
        day, body = split_day(i["text"])
        group = pointer_group(i)
        if group is not None:
            blocks.setdefault((day or "", headers[group]), []).append(body)
        elif day is None:
            undated.append(line(i))
        else:
            blocks.setdefault((day, ""), []).append(line({**i, "text": body}))
    return "\n".join(undated + [f"[{header or day}]\n" + "\n".join(lines) for (day, header), lines in sorted(blocks.items())])


def _pack_around(total: int, found: dict[str, list[dict]], with_episodes: bool, left_out: Collection[str] = ()):
    """Every section but the episodes packed into its budget: (budgets, packed, seen, the episodes' room, the KB's
    budget). ``with_episodes``: reserve the episodes' label (they are known to come, or may). ``left_out``: the
    identities of profile lines the episodes make redundant (redundant_facts): packed as before, then taken out,
    their tokens the episodes' (recall was given them back as it packed: packing.Refunds)."""
    # Only the sections that have something to show need their label.
    room = max(0, total - label_reserve([n for n in ORDER if found.get(n) or (n == "episodes" and with_episodes)]))
    budgets = channel_budgets(room)
    seen: set[str] = set()
    packed: dict[str, list[dict]] = {}
    for name in ("profile", "recent", "procedures"):
        packed[name] = _pack(found.get(name, []), budgets[name], seen)
    used = {name: sum(i["tokens"] for i in items) for name, items in packed.items()}
    final = flow_unused(budgets, used)
    episodes_room = final["episodes"]
    kb_budget = int(episodes_room * KB_SHARE) if found.get("kb") else 0
    packed["kb"] = _pack(found.get("kb", []), kb_budget, seen)
    kb_used = sum(i["tokens"] for i in packed["kb"])
    if left_out:
        kept = [i for i in packed["profile"] if identity(i) not in left_out]
        episodes_room += used["profile"] - sum(i["tokens"] for i in kept)
        if packed["profile"] and not kept and found.get("profile"):  # its label is not shown either
            episodes_room += count_tokens(LABELS["profile"])
        packed["profile"] = kept
    return budgets, packed, seen, episodes_room - kb_used, kb_budget


def episodes_room(total: int, found: dict[str, list[dict]]) -> tuple[int, set[str], dict[str, tuple[list[str], int]]]:
    """The tokens the knowledge & episodes lines will get once the other sections are packed (``found``
    without episodes), what those sections show (assemble.identity): what priming asks recall to fill, so
    recall's own packing decides what fits, and what recall need not pack again; and the profile's lines that
    stand for messages, with those messages and what each line costs: the room recall gets back when it packs
    them all (packing.Refunds)."""
    _budgets, packed, seen, room, _kb = _pack_around(total, found, True)
    offers = {identity(i): (list(i.get("quoted_source_ids") or ()), i["tokens"]) for i in packed["profile"]
              if i.get("quoted_source_ids")}
    return room, seen, offers


def redundant_facts(profile: Sequence[dict], episodes: Sequence[dict]) -> set[str]:
    """The profile lines (identities) whose messages the episodes all quote whole: they would say those twice.
    An excerpt may leave out the sentence a fact was learnt from, and another fact learnt from the same message
    says something else: neither counts."""
    quoted = {s for e in episodes for s in e.get("whole_source_ids") or ()}
    return {identity(i) for i in profile if i.get("quoted_source_ids") and set(i["quoted_source_ids"]) <= quoted}


def assemble(total: int, found: dict[str, list[dict]], preset: PrimingPreset,
             left_out: Collection[str] = (), zone: str = "UTC") -> tuple[list[Section], str]:
    """``left_out``: profile lines the episodes make redundant (redundant_facts), not shown; their room is the
    episodes'. ``zone``: the user's time zone, of the time headers."""
    budgets, packed, seen, room, kb_budget = _pack_around(total, found, bool(found.get("episodes")), left_out)
    packed["episodes"] = _pack(found.get("episodes", []), room, seen, by_day=True)
    if preset.max_items is not None:
        _cap(packed, preset.max_items)
    headers = group_headers(packed["episodes"], zone)
    shown = abbreviated(i["_source"] for items in packed.values() for i in items)
    # A line under its segment's time header is opened by that header: it is what the text shows for it.
    packed = {name: [{**i, "shown": headers.get(pointer_group(i) if name == "episodes" else None) or shown[i["_source"]]}
                     for i in items] for name, items in packed.items()}
    section_budget = {**budgets, "episodes": room, "kb": kb_budget}
    sections = [Section(name=name, label=LABELS[name], budget=section_budget[name],
                        tokens=sum(i["tokens"] for i in packed[name]),
                        items=[PrimedItem.model_validate(i) for i in packed[name]])
                for name in ORDER]
    blocks = [f"{s.label}\n" + (render_by_day([i.model_dump() for i in s.items], zone) if s.name == "episodes"
                                 else "\n".join(line(i.model_dump()) for i in s.items))
              for s in sections if s.items]
    return sections, "\n".join(blocks)


def _cap(packed: dict[str, list[dict]], cap: int) -> None:
    """S1's total cap, keeping its layers' order: recent, then semantic and summaries, then the rest."""
    left = cap
    for name in ("recent", "episodes", "profile", "procedures", "kb"):
        packed[name] = packed[name][:max(0, left)]
        left -= len(packed[name])
