"""How ``bench.knowledge`` decides that a stored knowledge item is a gold fact: the same attribute (after the
mapping below) and the same value, compared loosely.

Values. Both sides are normalised (NFKC, lower case, quotes and brackets such as 『』「」"" dropped, emoji and
punctuation dropped, spaces collapsed). A gold value — or one of its aliases — matches an item's value (or its
``value_key``, the extractor's normalised form) when:

- numbers (a pet's age): the item's value holds exactly that number and no other;
- text without Japanese characters: one side's words are a contiguous run of the other's words, each word compared with a
  final plural "s" dropped ("olives 😣" = "olives", "the city library" ⊇ "city library", "sauna" = "saunas"; but
  "go" ≠ "Glasgow", "tea" ≠ "green tea" is NOT guaranteed: "tea" is a run of "green tea" — the stories never hold
  both values, see ``bench.knowledge_story``);
- text with Japanese characters (「IT企業」, 「K-POPのライブ」): spaces dropped, one side is a substring of the other, the shorter one at least two characters long
  (「千と千尋」 = 「千と千尋の神隠し」, 「寿司」 = 「お寿司」; 「茶」 ≠ 「紅茶」).

Attributes. The gold vocabulary (``bench.knowledge_records.ATTRIBUTES``) meets the store's
(``lumina_memory.nodes.knowledge.models.ATTRIBUTES``) through ``ITEM_ATTRIBUTES``: a gold ``works_at`` is a stored ``works_at``
or ``job``; a gold ``pet_age`` (subject ``user``) is a stored ``age`` whose subject is one of the user's pets (a
gold pet name, or a value of a stored ``pet`` item of the user); every other gold attribute is the stored one of the
same name.

Which stored items are "facts about the user": positive polarity, and subject ``user`` — or an ``age`` of the user's
pet. A negative item (「もう好きじゃない」) records that something stopped; it is not a fact held, so it is never counted
as an extracted current fact (it shows in the superseded and over-invalidation figures instead). Current =
status current/coexisting and no ``valid_to``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# gold attribute → stored attributes that state it
ITEM_ATTRIBUTES: dict[str, tuple[str, ...]] = {"works_at": ("works_at", "job"), "pet_age": ("age",)}
_DROP = re.compile(r"[\"'`『』「」【】（）()\[\]〈〉《》“”‘’…!?！？。、,.:;~〜・\-–—_*#]+")
_SPACES = re.compile(r"\s+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d+")

Row = Mapping[str, Any]


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text or "")).lower()
    # Emoji and other symbols (So/Sk) are decoration, never part of a value.
    text = "".join(" " if unicodedata.category(ch) in ("So", "Sk", "Cf") else ch for ch in text)
    return _SPACES.sub(" ", _DROP.sub(" ", text)).strip()


def _words(text: str) -> list[str]:
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in _WORD.findall(text)]


def _run_of(short: Sequence[str], long: Sequence[str]) -> bool:
    n = len(short)
    return n > 0 and any(list(long[i:i + n]) == list(short) for i in range(len(long) - n + 1))


def same_value(said: str, gold: str) -> bool:
    """An item's value ``said`` against one gold value (the rule in the module's docstring)."""
    a, b = normalise(said), normalise(gold)
    if not a or not b:
        return False
    if b.isdigit():
        return _NUMBER.findall(a) == [b]
    if not (_CJK.search(a) or _CJK.search(b)):
        wa, wb = _words(a), _words(b)
        return _run_of(wa, wb) or _run_of(wb, wa)
    if a == b:
        return True
    short, long = sorted((a.replace(" ", ""), b.replace(" ", "")), key=len)
    return len(short) >= 2 and short in long


def value_matches(row: Row, gold_values: Iterable[str]) -> bool:
    """Does the stored item's value (or its normalised key) match any of the gold values?"""
    said = [row.get("value") or "", row.get("value_key") or ""]
    return any(same_value(s, g) for g in gold_values for s in said if s)


def pet_names(rows: Iterable[Row], gold_pets: Iterable[str]) -> set[str]:
    """The user's pets as stored items name them, with the gold's names."""
    names = {normalise(p) for p in gold_pets}
    names |= {normalise(r["value"]) for r in rows
              if r["attribute"] == "pet" and r["subject"] == "user" and r["polarity"] == "positive"}
    return {n for n in names if n}


def gold_attribute(row: Row, pets: set[str]) -> str | None:
    """The gold attribute a stored item speaks to, or None when it is not about the user (another person's fact,
    an age of someone who is not the user's pet)."""
    if row["subject"] != "user":
        return "pet_age" if row["attribute"] == "age" and normalise(row["subject"]) in pets else None
    for gold, stored in ITEM_ATTRIBUTES.items():
        if row["attribute"] in stored and gold != "pet_age":
            return gold
    return row["attribute"]


def is_current(row: Row) -> bool:
    return row["status"] in ("current", "coexisting") and row["valid_to"] is None


def is_user_fact(row: Row, pets: set[str]) -> bool:
    return row["polarity"] == "positive" and gold_attribute(row, pets) is not None


def states(row: Row, attribute: str, values: Iterable[str], pets: set[str]) -> bool:
    """Does a positive stored item state ``attribute`` = one of ``values`` about the user?"""
    return is_user_fact(row, pets) and gold_attribute(row, pets) == attribute and value_matches(row, values)


def denies(row: Row, attribute: str, values: Iterable[str], pets: set[str]) -> bool:
    """Is the stored item a current negative one about ``attribute`` = one of ``values`` (「もう好きじゃない」)?"""
    return (row["polarity"] == "negative" and row["subject"] == "user" and is_current(row)
            and gold_attribute(row, pets) == attribute and value_matches(row, values))
