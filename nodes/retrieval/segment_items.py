"""Items that are not packed turns (A1): one item per segment, ranked by its hit turns; and the open
conversation's last turns as one short-term item.

A segment item carries all of the segment's ``source_ids``/``turn_ids``, with ``quoted_source_ids`` for those whose
text is in the item.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from ..text.token_count import count_tokens
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
