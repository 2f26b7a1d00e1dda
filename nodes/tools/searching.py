"""Deliberate recall for ``search_memory``: one user's episodes, facts, procedures and knowledge bases,
filtered by kind and date, each hit with its pointer, date, level, tiers and score.

Episodes (and the facts and procedures a question asks about) come from ``recall`` with the "question"
purpose: deliberate recall reaches faded and archived memories too (nodes.lifecycle.recall_view). A search
for facts or procedures alone asks their tables directly, so it needs no cue words ("how do I …") to find
them: the model asked for that kind on purpose.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel

from lumina_memory.stores.errors import InvalidInput

from ..knowledge.forgetting import note_accessed
from ..knowledge.procedures import match_procedures
from ..knowledge.recall_items import knowledge_hits
from ..knowledge.recall_procedures import procedure_item
from ..retrieval.recall import recall
from ..retrieval.recall_run import check_query
from .pointers import abbreviated, format_pointer

Kind = Literal["episode", "knowledge", "procedure", "kb"]
KINDS: tuple[str, ...] = ("episode", "knowledge", "procedure", "kb")
KB_PLACES = 2
"""Places a search of every kind keeps for knowledge-base passages (after the memories)."""


class Hit(BaseModel):
    """One search result as the model reads it (the artifact keeps the recall item too)."""

    id: str
    """The pointer ``read_memory`` opens."""
    messages: list[str] = []
    """An item quoting several messages (its id then names their segment): each message's own pointer."""
    kind: str
    date: str | None
    level: int | None = None
    """The memory's lifecycle level (1 full … 4 archived), for episodes and facts."""
    tiers: list[str] = []
    score: float
    text: str
    item: dict[str, Any]


def parse_day(value: str | None, field: str) -> date | None:
    """An ISO date (or date-time) given to ``since``/``until``, or InvalidInput naming the field."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidInput(field, f"must be an ISO date such as 2026-09-10, got {type(value).__name__}")
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value.strip()).date()
    except ValueError:
        raise InvalidInput(field, f"{value[:40]!r} is not an ISO date; write YYYY-MM-DD (e.g. 2026-09-10)") from None


def in_window(day: str | None, since: date | None, until: date | None) -> bool:
    if since is None and until is None:
        return True
    if not day:
        return False  # undated: cannot say it is inside
    try:
        d = date.fromisoformat(day[:10])
    except ValueError:
        return False
    return (since is None or d >= since) and (until is None or d <= until)


def _kb_hits(services, user_id: str, query: str, limit: int, required: bool) -> list[dict[str, Any]]:
    try:
        from ..kb.search import search_kb
    except ImportError:
        if required:
            raise InvalidInput("kind", "this installation has no knowledge bases (nodes.kb is missing)") from None
        return []
    return [dict(h, kind="kb") for h in search_kb(services, query, user_id=user_id, limit=limit)]


def _facts(services, user_id: str, query: str, limit: int) -> list[dict[str, Any]]:
    vector = services.embedder.embed([query])[0]
    hits = knowledge_hits(services, user_id, query, limit=limit, query_vector=vector)
    note_accessed(services, user_id, hits, None)
    return hits


def _procedures(services, user_id: str, query: str, limit: int) -> list[dict[str, Any]]:
    hits = [procedure_item(m, services.settings.timezone) for m in match_procedures(services, user_id, query, limit=limit)]
    note_accessed(services, user_id, hits, None)
    return hits


def search(services, user_id: str, query: str, *, kind: str | None = None, since: str | None = None,
           until: str | None = None, budget: int = 1_500, max_results: int = 8) -> list[Hit]:
    """``user_id``'s memories for ``query``, best first. ``kind``: one of KINDS or None (all, the knowledge
    bases' best ``KB_PLACES`` passages after the memories). Raises InvalidInput for a bad kind, date or query."""
    check_query(query, services.settings.max_query_chars)
    if not query.strip():
        raise InvalidInput("query", "is empty; say what to look for")
    if kind is not None and kind not in KINDS:
        raise InvalidInput("kind", f"{kind!r} is not one of {', '.join(KINDS)} (or leave it out for all)")
    first, last = parse_day(since, "since"), parse_day(until, "until")
    if first and last and first > last:
        raise InvalidInput("since", f"{since} is after until {until}")
    dated = first is not None or last is not None
    # A date window drops hits after ranking: look further down the ranking so the window still fills.
    want = max_results * (4 if dated else 1)
    if kind == "knowledge":
        items = _facts(services, user_id, query, want)
    elif kind == "procedure":
        items = _procedures(services, user_id, query, want)
    elif kind == "kb":
        items = _kb_hits(services, user_id, query, want, required=True)
    else:
        disabled = ("knowledge", "procedures") if kind == "episode" else ()
        items = recall(services, user_id, query, purpose="question", budget=budget * (3 if dated else 1),
                       disabled=disabled)
    hits = [_hit(i) for i in items if (kind is None or i.get("kind", "episode") == kind)
            and in_window(i.get("date"), first, last)]
    if kind is None:
        # KB passages follow the memories (their cosine and recall's score are not on one scale) and keep
        # their few places, so a long recall never hides the knowledge bases.
        kb = [_hit(i) for i in _kb_hits(services, user_id, query, KB_PLACES * (4 if dated else 1), required=False)
              if in_window(i.get("date"), first, last)][:KB_PLACES]
        return hits[:max_results - len(kb)] + kb
    return hits[:max_results]


def _hit(item: dict[str, Any]) -> Hit:
    kind = item.get("kind", "episode")
    level = item.get("level")
    pointer = format_pointer(item)
    sources = list(item.get("source_ids") or []) if kind == "episode" else []
    messages = [f"ep:{s}" for s in sources] if pointer.startswith("seg:") and item.get("unit") != "segment" else []
    return Hit(id=pointer, messages=messages, kind=kind, date=item.get("date"), level=level if kind != "kb" else None,
               tiers=list(item.get("tiers") or ([f"kb_{item['kb']}"] if kind == "kb" else [])),
               score=round(float(item.get("score") or 0.0), 4), text=str(item.get("text", "")), item=item)


def render(hits: list[Hit], query: str) -> str:
    """The hits as the model reads them: one header line each (pointer, kind, date, level, tiers, score),
    then the text; and how to open one."""
    if not hits:
        return f"No memories found for {query!r}."
    lines = [f"{len(hits)} memories for {query!r} (open one with read_memory(id)):"]
    # Pointers as a model reads them (nodes.tools.pointers): short; each Hit keeps its whole one.
    shown = abbreviated([p for h in hits for p in (h.id, *h.messages)])
    for n, h in enumerate(hits, 1):
        level = f" · level {h.level}" if h.level is not None else ""
        tiers = f" · {'/'.join(h.tiers)}" if h.tiers else ""
        where = f" · {h.item.get('source')}" if h.kind == "kb" and h.item.get("source") else ""
        lines.append(f"{n}. [{shown[h.id]}] {h.kind} · {h.date or 'undated'}{level}{tiers}{where} · score {h.score:.2f}")
        if h.messages:
            lines.append(f"   messages: {' '.join(shown[m] for m in h.messages)}")
        lines.append("   " + h.text.replace("\n", "\n   "))
    return "\n".join(lines)
