"""Procedures in recall (A8, S5): a question about how to do something gets the user's procedure for it.

A procedure is offered when the question asks how (「作り方」「やり方」「何度で何分」, "how do I", "recipe") or
names a procedure's title, and the notes' three-stage match (bracket keyword, content words, vectors;
nodes.knowledge.procedure_match) finds one. The item is the procedure as it stands now: its steps, version and
confidence (successes and failures), with its source turns.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from lumina_memory.nodes.text.token_count import count_tokens
from lumina_memory.nodes.retrieval.temporal import date_label

from .procedures import match_procedures

HOW_CUES = ("作り方", "やり方", "手順", "方法", "レシピ", "コツ", "どうやって", "どうすれば", "何度", "何分", "何グラム",
            "how do", "how to", "how did", "how should", "recipe", "steps", "instructions")


def asks_how(query: str) -> bool:
    q = unicodedata.normalize("NFKC", query).lower()
    return any(cue in q for cue in HOW_CUES)


def procedure_hits(services, user_id: str, query: str, *, limit: int = 1) -> list[dict[str, Any]]:
    table = getattr(services.stores.archive, "procedures", None)
    if table is None or limit <= 0:
        return []
    rows = table.current(user_id)
    if not rows:
        return []
    q = unicodedata.normalize("NFKC", query).lower()
    if not (asks_how(query) or any(r["title"] and r["title"].lower() in q for r in rows)):
        return []
    return [procedure_item(m, services.settings.timezone) for m in match_procedures(services, user_id, query, limit=limit)]


def procedure_item(match: dict[str, Any], zone: str) -> dict[str, Any]:
    """A matched procedure as recall, priming and search_memory show it; its date on ``zone``'s clock."""
    steps = "\n".join(f"{n}. {s}" for n, s in enumerate(match["steps"], 1))
    tried = f"{match['success_count']}✓ {match['failure_count']}✗"
    text = f"[procedure: {match['title']} v{match['version']}, confidence {match['confidence']:.2f}, {tried}]\n{steps}"
    return {
        "kind": "procedure", "procedure_id": match["procedure_id"], "text": text, "score": round(float(match["score"]), 4),
        "stage": match["stage"], "version": match["version"], "confidence": match["confidence"],
        "status": match["status"], "turn_ids": list(match["source_turn_ids"]), "source_ids": list(match["source_ids"]),
        "episode_ids": list(match["episode_ids"]), "segment_id": None, "tiers": ["archive"],
        "date": date_label(match["said_at"], zone), "tokens": max(1, count_tokens(text)), "level": 1, "archived": False,
    }
