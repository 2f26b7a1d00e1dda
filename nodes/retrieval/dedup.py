"""Recall's result without the same memory twice (S1 "deduplicated", S3 at recall time).

Two recall stages (recall_stages.STAGES):

- ``drop_repeated_turns``, after the rerank: a turn whose text, normalised (``normal_text``: NFKC, case folded,
  punctuation, symbols and spacing read as one space), repeats a turn ranked before it is no candidate: "I adopted
  a grey cat named Pebble." said twice, or once in other case and punctuation, is packed once and its room goes to
  another memory. The rerank (rerank.dedup) drops exact repeats and vectors ≥ ``recall_dedup_similarity`` alike;
  an embedder reads case and punctuation, so a repeat in other case can fall under that.
- ``drop_duplicate_items``, on the items: an item is folded into one ranked before it when it quotes only turns
  that one quotes (the same memory reached twice, e.g. as an archived turn and in the open conversation), or when
  its text, normalised and without its date, is the other's or wholly inside it (a faded memory's two turn items
  shown as its one summary; a turn inside a segment's text). A faded memory's own text (its summary or keywords)
  folds only with its own memory's items: words another memory shares with it do not make it that memory. An
  earlier item inside a later one gives way to it at its own rank. The item kept takes the tiers of the items
  folded into it (``tiers``: where it was found).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Iterable, Iterator, NamedTuple

from .recall_run import RecallRun

_DATE_PREFIX = re.compile(r"^\[[^\]]*\]\s*")


class _Gaps(dict):
    """str.translate's table: a letter, mark or digit to itself, anything else to a space; filled per character
    on first sight, so a text is translated at C speed (the packer reads hundreds of turns per recall)."""

    def __missing__(self, code: int) -> int | str:
        value: int | str = code if unicodedata.category(chr(code))[0] in "LMN" else " "
        self[code] = value
        return value


_GAPS = _Gaps()


def normal_text(text: str) -> str:
    """``text`` compatibility-normalised and case-folded, each run of punctuation, symbols, spaces and controls one
    space: the same words in other case, punctuation or spacing compare equal."""
    if not text.isascii():  # NFKC leaves ASCII as it is
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.casefold().translate(_GAPS).split())


def repeated_turns_left_out(ordered: Iterable[tuple], turns) -> Iterator[tuple]:
    """``ordered`` (ranked candidates, (score, index, ...)) without a turn whose normalised text a turn before it
    had; a turn with no letters or digits is kept (nothing to compare). Lazy, as the packer reads it."""
    seen: set[str] = set()
    for cand in ordered:
        key = normal_text(turns[cand[1]].text)
        if key:
            if key in seen:
                continue
            seen.add(key)
        yield cand


def drop_repeated_turns(run: RecallRun) -> RecallRun:
    """The ranked turns without repeats of a turn ranked before (``repeated_turns_left_out``)."""
    if run.ordered is not None:
        run.ordered = repeated_turns_left_out(run.ordered, run.index.turns)
    return run


def _units(item: dict[str, Any]) -> frozenset:
    """The turns an episode item quotes (a long turn's passage as its own unit); none for a segment's item, whose
    summary says more than its turns, nor for knowledge."""
    if item.get("kind", "episode") != "episode" or item.get("unit") == "segment":
        return frozenset()
    passage = {p["turn_id"]: p["passage"] for p in item.get("passages") or []}
    return frozenset((t, passage.get(t)) for t in item.get("turn_ids") or [])


def _quoted(item: dict[str, Any]) -> bool:
    """Whether an item's text is what was said (turns, a segment's text, knowledge), not a memory's own text at a
    faded level (nodes.lifecycle.recall_view: a reply sees a level-2 or -3 memory as its summary or keywords)."""
    return int(item.get("level") or 1) <= 1 or bool(item.get("from_record"))


class _Key(NamedTuple):
    """What an item is compared by, made once per item (the comparisons are pairwise)."""

    body: str  # its normalised text without its date, between two spaces ("" when it has none)
    unspaced: bool  # one run of a script written without spaces: found inside another by its characters
    units: frozenset
    segment: str
    quoted: bool

    @classmethod
    def of(cls, item: dict[str, Any]) -> "_Key":
        text = normal_text(_DATE_PREFIX.sub("", str(item.get("text") or ""), count=1))
        return cls(f" {text} " if text else "", bool(text) and " " not in text and not text.isascii(),
                   _units(item), str(item.get("segment_id") or ""), _quoted(item))

    def covers(self, other: "_Key") -> bool:
        """Whether this item says all ``other`` says: it quotes all of other's turns, or other's text is its own or
        a run of its whole words. A faded memory's own text (its keywords, its summary) is another memory than the
        words it shares with one: only its own memory's other items fold into it or it into them."""
        if other.units and other.units <= self.units:
            return True
        if not other.body or len(other.body) > len(self.body):
            return False
        if not (self.quoted and other.quoted) and self.segment != other.segment:
            return False
        return other.body in self.body or (other.unspaced and other.body[1:-1] in self.body)


def _with_tiers(item: dict[str, Any], *others: dict[str, Any]) -> dict[str, Any]:
    tiers = list(item.get("tiers") or [])
    for other in others:
        tiers += [t for t in other.get("tiers") or [] if t not in tiers]
    return {**item, "tiers": tiers} if others else item


def without_duplicates(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` in their order, each duplicate folded into the item that says all it says (module docstring)."""
    kept: list[dict[str, Any]] = []
    keys: list[_Key] = []
    for item in items:
        key = _Key.of(item)
        holder = next((k for k, other in enumerate(keys) if other.covers(key)), None)
        if holder is not None:
            kept[holder] = _with_tiers(kept[holder], item)
            continue
        inside = [k for k, other in enumerate(keys) if key.covers(other)]
        if inside:  # this item says all that earlier ones say: it takes the first one's rank
            first = inside[0]
            kept[first], keys[first] = _with_tiers(item, *(kept[k] for k in inside)), key
            for k in reversed(inside[1:]):
                del kept[k], keys[k]
            continue
        kept.append(item)
        keys.append(key)
    return kept


def drop_duplicate_items(run: RecallRun) -> RecallRun:
    """The items without duplicates (``without_duplicates``)."""
    if len(run.items) > 1:
        run.items = without_duplicates(run.items)
    return run
