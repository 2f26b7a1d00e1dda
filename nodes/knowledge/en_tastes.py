"""English patterns for tastes: likes, dislikes, favourites, quitting and switching."""

from __future__ import annotations

import re

from .draft import Draft
from .en_sentence import ANYMORE, ADV, GAP, OBJ, PLACE_CUT, SUBJ, EnSentence, en_key, noun_phrases, rx


# --- likes and dislikes ------------------------------------------------------------------------------------

_LIKE_VERB = r"(?i:like|likes|love|loves|adore|adores|enjoy|enjoys|'m into|am into|is into|'s into|'m obsessed with|am obsessed with|is obsessed with|'m (?:a )?(?:big |huge )?fan of|am (?:a )?(?:big |huge )?fan of|'m crazy about|am crazy about|'m hooked on|am hooked on)"
_DISLIKE_VERB = r"(?i:hate|hates|dislike|dislikes|can't stand|cannot stand|can not stand|can't bear|detest|detests|loathe|loathes|'m not a fan of|am not a fan of|'m not into|am not into|'m not big on|am not big on|is not a fan of|isn't a fan of)"
_NEG = r"(?i:don't|do not|doesn't|does not|didn't)"
_NO_LONGER = r"(?i:no longer|don't really|do not really)"

_RX_NO_LONGER_LIKE = [
    rx(SUBJ + GAP + ADV + _NEG + r"\s+(?:really\s+)?(?i:like|love|enjoy)\s+" + OBJ + ANYMORE),
    rx(SUBJ + GAP + r"(?i:'m not|am not|isn't|is not)\s+(?:really\s+)?(?i:into|a fan of)\s+" + OBJ + ANYMORE),
    rx(SUBJ + r"\s+(?i:no longer)\s+(?i:like|likes|love|loves|enjoy|enjoys)\s+" + OBJ),
    rx(SUBJ + GAP + r"(?i:'m no longer|am no longer|is no longer)\s+(?i:into|a fan of)\s+" + OBJ),
    rx(SUBJ + r"\s+(?i:used to)\s+(?i:like|love|enjoy|be into)\s+" + OBJ),
    rx(SUBJ + GAP + r"(?i:'ve |have |has )?(?i:stopped|quit) (?i:liking|loving|enjoying)\s+" + OBJ),
    rx(SUBJ + GAP + r"(?i:'ve |have |has )?(?i:fallen|fell) out of love with\s+" + OBJ),
]
_RX_NO_LONGER_DISLIKE = [
    rx(SUBJ + GAP + ADV + _NEG + r"\s+(?i:hate|dislike|mind)\s+" + OBJ + ANYMORE),
]
_RX_DONT_LIKE = rx(SUBJ + GAP + _NEG + r"\s+(?:really\s+)?(?i:like|enjoy|love)\s+" + OBJ)
_RX_LIKE = rx(SUBJ + GAP + ADV + r"(?<!')" + _LIKE_VERB + r"\s+" + OBJ)
_RX_DISLIKE = rx(SUBJ + GAP + ADV + _DISLIKE_VERB + r"\s+" + OBJ)


def likes(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    taken: list[tuple[int, int]] = []

    def emit(m: re.Match[str], attribute: str, polarity: str, pattern: str) -> None:
        if any(a <= m.start() < b for a, b in taken):
            return
        before = s.text[: m.start()].lower()
        if re.search(r"\b(?:if|would|wish|whether|unless)\s*$|\bif\b[^,]*$", before):
            return
        subject = s.subject(m)
        if subject is None:
            return
        taken.append((m.start(), m.end()))
        for value in noun_phrases(m.group("obj")):
            d = s.draft(attribute, value, pattern, subject=subject, polarity=polarity)
            if d:
                out.append(d)

    for rx in _RX_NO_LONGER_LIKE:
        for m in rx.finditer(s.text):
            emit(m, "likes", "negative", "en.like")
    for rx in _RX_NO_LONGER_DISLIKE:
        for m in rx.finditer(s.text):
            emit(m, "dislikes", "negative", "en.dislike")
    for m in _RX_DONT_LIKE.finditer(s.text):
        emit(m, "dislikes", "positive", "en.dislike")
    for m in _RX_DISLIKE.finditer(s.text):
        emit(m, "dislikes", "positive", "en.dislike")
    for m in _RX_LIKE.finditer(s.text):
        if re.match(r"\s*(?:'d|would)\b", s.text[m.end("subj"):], re.I):
            continue
        emit(m, "likes", "positive", "en.like")
    return out


_RX_FAVOURITE = [
    rx(r"\b(?i:my)\s+(?i:favou?rite)\s+(?P<noun>[a-z]+)\s+(?i:is|are|has to be|would be)\s+" + OBJ),
    rx(OBJ + r"\s+(?i:is|are)\s+(?i:my)\s+(?i:favou?rite)\s+(?P<noun>[a-z]+)\b"),
]


def favourite(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    for k, rx in enumerate(_RX_FAVOURITE):
        for m in rx.finditer(s.text):
            noun = m.group("noun").lower()
            raw = m.group("obj")
            if k == 1:
                raw = re.split(r"\b(?:I think|and|but|so|because|,)\b", raw)[-1]
                raw = re.sub(r"^.*\b(?:is|are|was|think|say)\s+", "", raw)
            objects = noun_phrases(raw, split=False)
            if not objects:
                continue
            attribute = s.params.favourite_nouns.get(noun, "likes")
            d = s.draft(attribute, objects[0], "en.favourite", detail="" if attribute != "likes" else noun)
            if d:
                out.append(d)
    return out


# --- quitting and switching ----------------------------------------------------------------------------------

_RX_QUIT = rx(
    r"\bI" + GAP + r"(?i:'ve |have )?" + ADV + r"(?i:quit|gave up|given up|stopped|cut out|kicked)\s+"
    r"(?!(?i:by|at|in|to|for|the car|working|there)\b)(?:(?i:drinking|eating|having|doing|playing|watching|smoking)\s+)?" + OBJ
)
_RX_DONTANYMORE = rx(
    r"\bI" + GAP + r"(?i:don't|do not)\s+(?i:drink|eat|do|play|watch)\s+" + OBJ + ANYMORE
)
_RX_SWITCH_FROM = rx(r"\b(?i:switched|changed|swapped|went|moved over)\s+from\s+(?P<old>[^.,!?;]+?)\s+to\s+" + OBJ)
_RX_SWITCH_TO = rx(r"\b(?i:switched|swapped|moved over|changed over)\s+to\s+" + OBJ)
_RX_INSTEAD = rx(
    r"\bI" + GAP + ADV + r"(?i:drink|eat|have|'m drinking|am drinking|'m having)\s+(?P<new>[^.,!?;]+?)\s+"
    r"(?:(?i:now|these days|nowadays)\s+)?(?i:instead of)\s+" + OBJ
)


def quits_and_switches(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    text = s.text
    if not re.search(r"\bI\b", text):
        return out

    def add(attribute: str, value: str, polarity: str) -> None:
        d = s.draft(attribute, value, "en.quit" if polarity == "negative" else "en.switch", polarity=polarity)
        if d:
            out.append(d)

    def switch_to(value: str) -> None:
        key = en_key(value)
        category = s.params.categories.get(key) or s.params.categories.get(key.split()[-1] if key else "", "")
        attribute = category if category in ("drink", "food") else "likes"
        d = s.draft(attribute, value, "en.switch")
        if d:
            out.append(d)

    for rx in (_RX_QUIT, _RX_DONTANYMORE):
        for m in rx.finditer(text):
            before = text[: m.start()].lower()
            if re.search(r"\b(?:if|want to|going to|gonna|should|will|'ll|trying to|try to)\b", before + " " + m.group(0).lower()[:12]):
                continue
            raw = m.group("obj")
            job = re.match(r"\s*(?:my\s+)?job(?:\s+at\s+(?P<at>[^.,!?;]+))?", raw, re.I)
            if job:
                if job.group("at"):
                    for value in noun_phrases(job.group("at"), PLACE_CUT, split=False):
                        add("works_at", value, "negative")
                continue
            for value in noun_phrases(re.split(r"\s+(?:and|for)\s+(?:switched|moved|changed|went)\b", raw)[0]):
                add("likes", value, "negative")
                add("habit", value, "negative")
            tail = re.search(r"\bfor\s+([^.,!?;]+)$", raw)
            if tail and m.re is _RX_QUIT:
                for value in noun_phrases(tail.group(1), split=False):
                    switch_to(value)
    for m in _RX_SWITCH_FROM.finditer(text):
        if re.search(r"\bmoved\b", m.group(0), re.I):
            continue
        for value in noun_phrases(m.group("old"), split=False):
            add("likes", value, "negative")
        for value in noun_phrases(m.group("obj"), split=False):
            switch_to(value)
    if not _RX_SWITCH_FROM.search(text):
        for m in _RX_SWITCH_TO.finditer(text):
            for value in noun_phrases(m.group("obj"), split=False):
                switch_to(value)
    for m in _RX_INSTEAD.finditer(text):
        for value in noun_phrases(m.group("new"), split=False):
            switch_to(value)
        for value in noun_phrases(m.group("obj"), split=False):
            add("likes", value, "negative")
    return out
