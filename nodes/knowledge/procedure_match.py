"""Matching a message to procedures, in the notes' three stages (A8, AnimaWorks channel D). Pure.

1. bracket keyword: 【チーズケーキ】 or [cheesecake] in the message, found in a procedure's title,
   description or trigger keywords;
2. content words: the message shares the title's words, or ``word_match_min`` of its trigger keywords and
   description words (Sudachi normalised forms, English lemmas), ranked by the overlap (title words count
   twice);
3. vectors: cosine of the message and the procedure's description and steps at or above ``vector_match``.

Stage 1 ranks first and stage 3 is the fallback: a procedure appears once, at its best stage.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from .procedure_models import ProcedureParams
from .procedure_text import content_words, normal

Stage = Literal["bracket", "words", "vector"]
_ORDER = {"bracket": 0, "words": 1, "vector": 2}
_BRACKETS = re.compile(r"【([^】]{1,30})】|\[([^\]]{1,30})\]")


class Match(BaseModel):
    model_config = ConfigDict(frozen=True)

    procedure_id: str
    stage: Stage
    score: float


def bracket_keywords(text: str) -> list[str]:
    return [normal(m.group(1) or m.group(2)).strip().lower() for m in _BRACKETS.finditer(text)
            if (m.group(1) or m.group(2)).strip()]


def _words(procedure: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    title = set(content_words(procedure["title"] or ""))
    others = set(content_words(procedure["description"] or ""))
    for keyword in procedure["keywords"] or ():
        others.update(content_words(keyword))
    return title, others - title


def _by_bracket(keywords: Sequence[str], procedure: Mapping[str, Any]) -> bool:
    names = [normal(procedure["title"] or "").lower(), normal(procedure["description"] or "").lower(),
             *(normal(k).lower() for k in procedure["keywords"] or ())]
    return any(k and any(k in name for name in names if name) for k in keywords)


def rank(text: str, procedures: Sequence[Mapping[str, Any]], params: ProcedureParams | None = None, limit: int = 3,
         embed: Callable[[str], np.ndarray] | None = None) -> list[Match]:
    """The procedures ``text`` is about, best first. ``embed`` (text → unit vector) is asked only when the
    first two stages leave room under ``limit``."""
    params = params or ProcedureParams()
    found: dict[str, Match] = {}
    keywords = bracket_keywords(text)
    query = set(content_words(_BRACKETS.sub(lambda m: " " + (m.group(1) or m.group(2)) + " ", text)))
    for p in procedures:
        if keywords and _by_bracket(keywords, p):
            found[p["procedure_id"]] = Match(procedure_id=p["procedure_id"], stage="bracket", score=1.0)
            continue
        title, others = _words(p)
        in_title, in_others = len(query & title), len(query & others)
        if in_title or in_title + in_others >= params.word_match_min:
            score = (2 * in_title + in_others) / max(1, 2 * len(title) + len(others))
            found[p["procedure_id"]] = Match(procedure_id=p["procedure_id"], stage="words", score=round(score, 4))
    rest = [p for p in procedures if p["procedure_id"] not in found and len(p["embedding"] or ()) > 0]
    if embed is not None and rest and len(found) < limit:
        vector = embed(text)
        for p in rest:
            emb = np.asarray(p["embedding"], dtype=np.float32)
            if emb.shape != vector.shape:
                continue  # made by another embedder: no comparable cosine
            cosine = float(vector @ emb)
            if cosine >= params.vector_match:
                found[p["procedure_id"]] = Match(procedure_id=p["procedure_id"], stage="vector", score=round(cosine, 4))
    return sorted(found.values(), key=lambda m: (_ORDER[m.stage], -m.score))[:limit]
