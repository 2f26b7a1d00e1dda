"""The reply without a model: the character quotes the remembered turn that answers, or says plainly that
nothing is remembered.

Recall returns memories (segments quoted as excerpts, facts, the open conversation); the turn that answers is
often not an item's first line, and the best-ranked item may share nothing with the question. So the
recalled memories (the open conversation left out: it holds the question itself) are cut into their turns, a
turn recalled twice (in a segment and in a fact's source) counted once, and a memory counts as remembered
only when a turn shares a content word with the question (its frame words — 覚えてる, 話した, remember — left
out) or is as close to it as ``offline_reply_min_similarity`` (the embedder's cosine). Of those, the turn
closest to the question is quoted, a turn that asks something ranked lower: it asks, it does not answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from lumina_memory.nodes.characters import get as get_character

from .text.tokenize import terms

NOTHING_REMEMBERED = "まだ何も覚えていない"
"""Said when no recalled memory answers (tests and callers look for it)."""

MIN_SIMILARITY = 0.35
"""The default of ``offline_reply_min_similarity`` (see stores.settings)."""

# Words that frame a question about memory and say nothing about what is asked.
_FRAME = frozenset("覚える 話す 思い出す 言う 聞く 知る 教える 前 remember recall talk tell said say know".split())
_DATE_PREFIX = re.compile(r"^\[\d{4}-\d{2}-\d{2}[^\]]*\]\s*")
_SPEAKER = re.compile(r"^(?:user|lumina|clarisse|nox):\s*")
_QUESTION = re.compile(r"[?？]")
QUOTE_CHARS = 120


def _turns(recalled: Sequence[dict]) -> list[tuple[str, str]]:
    """(date, turn text) of the recalled memories, in recall's order, each turn once."""
    seen: set[str] = set()
    out = []
    for item in recalled:
        if item.get("segment_id") == "(open)" or not item.get("text"):
            continue
        body = _DATE_PREFIX.sub("", item["text"].strip())
        for piece in re.split(r" / |\n", body):
            text = _SPEAKER.sub("", piece.strip())
            key = " ".join(text.split())
            if key and key not in seen:
                seen.add(key)
                out.append((item.get("date") or "", text))
    return out


def _answer(query: str, turns: list[tuple[str, str]], embed: Callable[[list[str]], np.ndarray] | None,
            min_similarity: float) -> tuple[str, str] | None:
    wanted = set(terms(query)) - _FRAME
    overlaps = [len(wanted & set(terms(text))) for _, text in turns]
    similar = [0.0] * len(turns)
    if embed is not None and turns:
        vectors = np.asarray(embed([query, *(text for _, text in turns)]), dtype=np.float32)
        similar = [float(v) for v in vectors[1:] @ vectors[0]]
    if not wanted and turns:  # 「覚えてる？」 names nothing: the best-ranked memory is the answer
        return turns[int(np.argmax(similar))] if embed is not None else turns[0]
    if not any(n > 0 or s >= min_similarity for n, s in zip(overlaps, similar)):
        return None
    scores = [s + 0.1 * n - (0.1 if _QUESTION.search(text) else 0.0)
              for (_, text), n, s in zip(turns, overlaps, similar)]
    return turns[int(np.argmax(scores))]


def offline_reply(character: str, query: str, recalled: Sequence[dict],
                  embed: Callable[[list[str]], np.ndarray] | None = None, min_similarity: float = MIN_SIMILARITY) -> str:
    """The character's reply quoting the remembered turn that answers ``query``, or saying that nothing is
    remembered. ``embed``: texts → unit vectors (without it, content words alone decide)."""
    remembered, fresh = get_character(character).offline_openers
    found = _answer(query, _turns(recalled), embed, min_similarity)
    if found is None:
        return f"{fresh}「{query[:40]}」のことは{NOTHING_REMEMBERED}。もう少し聞かせて。"
    date, text = found
    quoted = text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…"
    return f"{remembered}{date}に話したこと — {quoted}" if date else f"{remembered}{quoted}"
