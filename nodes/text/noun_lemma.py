"""One light English noun lemma: plurals to singular (movies → movie, cities → city, boxes → box).

Fact values and procedure titles are matched by it, so "Cats" and "cat", "Pancakes" and "pancake" are one key.
It is not the Snowball stem the lexical indexes use: a stem may not be a word (hobbies → hobbi), and these keys
are shown and stored as words.
"""

from __future__ import annotations

import re

# Nouns whose singular ends in -ie: "movies" is "movie", not "movy".
_IE_NOUNS = frozenset("movie cookie zombie selfie smoothie pie tie hoodie rookie brownie lie calorie indie goalie "
                      "veggie foodie newbie birdie sweetie".split())
_SIBILANT_PLURAL = re.compile(r"(?:ches|shes|xes|ses|zes)$")


def noun_lemma(word: str) -> str:
    """``word`` lower-cased, a regular English plural made singular."""
    w = word.lower()
    if w.endswith("ies") and w[:-1] in _IE_NOUNS:
        return w[:-1]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and _SIBILANT_PLURAL.search(w):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w
