"""Pattern helpers the cue finders share: spans already read (``Claims``), patterns scanned only near the words
they cannot match without (``Cued``), literal phrases as one pattern, and rewrite rules."""

from __future__ import annotations

import re
from typing import Callable, Iterable, Iterator


class Claims:
    """Spans of the query already read as a cue, so a shorter pattern does not read them again
    (先週末 is a weekend, not 先週; "9 June 2023" inside "the week before 9 June 2023" is one cue)."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []

    def take(self, start: int, end: int) -> bool:
        if any(start < e and s < end for s, e in self._spans):
            return False
        self._spans.append((start, end))
        return True


class Cued:
    """A pattern and the words it cannot match without: one word of each group must be in the text, or
    the scan is skipped, and every match holds a word of the first group. Python's ``re`` cannot skip
    ahead to a pattern that opens with \\b or an optional word, as most cue patterns do, so on a long
    query only the stretches around those words are scanned (a 2,000-character question would otherwise
    cost a millisecond; most questions name no time at all)."""

    __slots__ = ("pattern", "needs")

    def __init__(self, pattern: str, *needs: Iterable[str]) -> None:
        self.pattern = re.compile(pattern)
        self.needs = tuple(tuple(group) for group in needs)

    def finditer(self, text: str) -> Iterator[re.Match]:
        contains = text.__contains__
        for group in self.needs:
            if not any(map(contains, group)):
                return iter(())
        if len(text) <= _WHOLE_SCAN:
            return self.pattern.finditer(text)
        return self._near_words(text)

    def _near_words(self, text: str) -> Iterator[re.Match]:
        spans = []
        for word in self.needs[0]:
            at = text.find(word)
            while at >= 0:
                spans.append((max(0, at - _REACH_BEFORE), at + len(word) + _REACH_AFTER))
                at = text.find(word, at + 1)
        spans.sort()
        merged: list[list[int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in merged:
            # Lookbehinds and \\b see the text before ``start``; a stretch ends far enough past its last word
            # that no match is cut short.
            yield from self.pattern.finditer(text, start, min(end, len(text)))


_WHOLE_SCAN = 240  # characters: a shorter query is scanned whole
_REACH_BEFORE, _REACH_AFTER = 48, 64  # the farthest a match reaches before and after the word it holds


def alternation(names: Iterable[str]) -> str:
    """Literal names as one regex alternative, longest first so that a name is not cut by a shorter one."""
    return "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))


def rewrite(pattern: str, replace: Callable[[re.Match], str]) -> Callable[[str], str]:
    """A rule that rewrites every match of ``pattern`` in a text with ``replace``."""
    compiled = re.compile(pattern)
    return lambda text: compiled.sub(replace, text)


def phrases(*words: str) -> Cued:
    """Literal phrases as one cued pattern: English ones as whole words, Japanese ones anywhere."""
    english = [re.escape(w).replace(r"\ ", r"\s+") for w in words if w.isascii()]
    other = [re.escape(w) for w in words if not w.isascii()]
    parts = ([rf"(?<![a-z])(?:{'|'.join(english)})(?![a-z])"] if english else []) + other
    return Cued("|".join(parts), words)
