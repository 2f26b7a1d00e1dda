"""Fitting the channels' items into their budgets and rendering the labelled sections.

Each shown item is one line, ``<text> (<pointer>)``, and costs that line's tokens (the pointer included);
the labels of the sections with candidates are reserved from the whole before it is split, so the rendered text never exceeds the
message type's budget. Profile, recent activity and procedures are packed into their own budgets first; what
they leave goes to the knowledge & episodes channel, which knowledge-base passages share (at most a third).
An item already shown (assemble.identity) is not shown again.
"""

from __future__ import annotations

from typing import Any, Sequence

from nodes.retrieval.budget import count_tokens

from .budgets import channel_budgets, flow_unused
from .models import PrimedItem, Section
from .presets import PrimingPreset

ORDER = ("profile", "recent", "episodes", "procedures", "kb")

LABELS = {"profile": "[profile]", "recent": "[recent]", "episodes": "[knowledge&episodes]",
          "procedures": "[procedures]", "kb": "[knowledge-bases]"}
KB_SHARE = 1 / 3


def line(entry: dict[str, Any]) -> str:
    return f"{entry['text']} ({entry['_source']})"


def label_reserve(names: Sequence[str] = ORDER) -> int:
    return sum(count_tokens(LABELS[name]) for name in names)


def identity(entry: dict[str, Any]) -> str:
    """What makes two items the same: the pointer, and for episodes the messages quoted (two excerpts of one
    segment share its ``seg:`` pointer and are still two items)."""
    if entry["kind"] in ("episode", "turns"):
        return entry["_source"] + "|" + ",".join(entry.get("quoted_source_ids") or entry.get("source_ids") or ())
    return entry["_source"]


def _pack(candidates: Sequence[dict], budget: int, seen: set[str]) -> list[dict]:
    """Items in order while their lines fit (one that does not fit is skipped: a shorter one may)."""
    out, used = [], 0
    for c in candidates:
        key = identity(c)
        if key in seen:
            continue
        cost = count_tokens(line(c))
        if used + cost > budget:
            continue
        out.append({**c, "tokens": cost})
        used += cost
        seen.add(key)
    return out


def assemble(total: int, found: dict[str, list[dict]], preset: PrimingPreset) -> tuple[list[Section], str]:
    # Only the sections that have something to show need their label.
    room = max(0, total - label_reserve([n for n in ORDER if found.get(n)]))
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
    packed["episodes"] = _pack(found.get("episodes", []), episodes_room - kb_used, seen)
    if preset.max_items is not None:
        _cap(packed, preset.max_items)
    section_budget = {**budgets, "episodes": episodes_room - kb_used, "kb": kb_budget}
    sections = [Section(name=name, label=LABELS[name], budget=section_budget[name],
                        tokens=sum(i["tokens"] for i in packed[name]),
                        items=[PrimedItem.model_validate(i) for i in packed[name]])
                for name in ORDER]
    blocks = [f"{s.label}\n" + "\n".join(line(i.model_dump()) for i in s.items) for s in sections if s.items]
    return sections, "\n".join(blocks)


def _cap(packed: dict[str, list[dict]], cap: int) -> None:
    """S1's total cap, keeping its layers' order: recent, then semantic and summaries, then the rest."""
    left = cap
    for name in ("recent", "episodes", "profile", "procedures", "kb"):
        packed[name] = packed[name][:max(0, left)]
        left -= len(packed[name])
