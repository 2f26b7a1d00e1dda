"""F2's trigger and content of a memory, offline: what the user said (trigger) and how the characters answered
(content), as the segment's own words.

Level 1 keeps the user's ``trigger_turns`` and the characters' ``content_turns`` turns most central to their side
(nodes.text.summarize.extractive_summary: MMR against repeats, each turn clipped, conversation order), so names,
numbers and places stay as said; level 2 keeps fewer (``compressed_*_turns``); level 3 the side's keywords
(``keywords_per_side``, nodes.text.keywords). A model writes them instead when one is configured
(nodes.text.emotion_model.MemoryTextsReader at encoding, nodes.lifecycle.compress at levels 2 and 3).
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Sequence

import numpy as np

from lumina_memory.nodes.text.keywords import extract_keywords
from lumina_memory.nodes.text.summarize import extractive_summary

USER = "user"
OFFLINE = "extractive"


class Sides(NamedTuple):
    """A memory's trigger and content, and the path that wrote them."""

    trigger: str
    content: str
    path: str


def split_sides(said: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(speaker, text) pairs into the user's and the characters' (empty texts left out)."""
    user, others = [], []
    for speaker, text in said:
        if text and text.strip():
            (user if speaker == USER else others).append((speaker, text))
    return user, others


def segment_lines(text: str | None) -> list[tuple[str, str]]:
    """A segment's ``speaker: text`` lines as (speaker, text); a line without a speaker continues the turn before."""
    said: list[tuple[str, str]] = []
    for line in (text or "").splitlines():
        speaker, sep, rest = line.partition(": ")
        if sep and speaker and " " not in speaker:
            said.append((speaker, rest))
        elif said:
            said[-1] = (said[-1][0], said[-1][1] + "\n" + line)
    return said


def central_turns(embedder, said: Sequence[tuple[str, str]], max_turns: int) -> str:
    """The ``max_turns`` turns of ``said`` most central to it, in order (without an embedder: the longest)."""
    if not said:
        return ""
    speakers, texts = [s for s, _ in said], [t for _, t in said]
    if embedder is None or len(said) <= max_turns:
        vectors = np.eye(len(said), dtype=np.float32)  # every turn equally central: order decides
    else:
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    return extractive_summary(speakers, texts, vectors, max_turns)


def extractive_sides(embedder, said: Iterable[tuple[str, str]], trigger_turns: int, content_turns: int) -> Sides:
    user, others = split_sides(said)
    return Sides(central_turns(embedder, user, trigger_turns), central_turns(embedder, others, content_turns), OFFLINE)


def keyword_sides(said: Iterable[tuple[str, str]], per_side: int) -> Sides:
    user, others = split_sides(said)
    return Sides(", ".join(extract_keywords([t for _, t in user], per_side)),
                 ", ".join(extract_keywords([t for _, t in others], per_side)), OFFLINE)


def offline_sides(embedder, said: Iterable[tuple[str, str]], level: int, params) -> Sides:
    """The trigger and content at ``level`` (1–3; 4 keeps level 3's) from the segment's turns."""
    said = list(said)
    if level >= 3:
        return keyword_sides(said, params.keywords_per_side)
    if level == 2:
        return extractive_sides(embedder, said, params.compressed_trigger_turns, params.compressed_content_turns)
    return extractive_sides(embedder, said, params.trigger_turns, params.content_turns)
