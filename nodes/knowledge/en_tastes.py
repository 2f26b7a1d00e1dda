"""English patterns for tastes: likes, dislikes, favourites, quitting and switching."""

from __future__ import annotations

import re

from .draft import Draft
from .en_sentence import ANYMORE, ADV, GAP, OBJ, PLACE_CUT, SUBJ, EnSentence, en_key, noun_phrases, rx
from .models import USER


# --- likes and dislikes ------------------------------------------------------------------------------------

_LIKE_VERB = r"(?i:like|likes|love|loves|adore|adores|enjoy|enjoys|'m into|am into|is into|'s into|'m obsessed with|am obsessed with|is obsessed with|'m (?:a )?(?:big |huge )?fan of|am (?:a )?(?:big |huge )?fan of|'m crazy about|am crazy about|'m hooked on|am hooked on)"
_DISLIKE_VERB = r"(?i:can't do|hate|hates|dislike|dislikes|can't stand|cannot stand|can not stand|can't bear|detest|detests|loathe|loathes|'m not a fan of|am not a fan of|'m not into|am not into|'m not big on|am not big on|is not a fan of|isn't a fan of)"
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


_FAV = r"(?i:favou?rite)"
_BE_VERB = r"(?:(?i:'m|am|'ve been|have been)\s+)?"
_RX_FAVOURITE = [
    rx(r"\b(?i:my)\s+(?:(?i:new|all-time|current)\s+)?" + _FAV + r"\s+(?P<noun>[a-z]+)\s+(?:(?i:right now|these days|now|ever)\s+)?"
       r"(?i:is|are|has to be|would be|'s)\s+(?:(?i:now|still|probably|definitely|easily)\s+)?" + OBJ),
    rx(OBJ + r"\s+(?i:is|are|'s)\s+(?:(?i:officially|still|definitely|probably|now|easily)\s+)?(?i:my)\s+"
       r"(?:(?i:new|all-time)\s+)?" + _FAV + r"\s+(?P<noun>[a-z]+)\b"),
    # "my favourite N used to be X, but now it's Y" / "was X and these days it's Y"
    rx(r"\b(?i:my)\s+" + _FAV + r"\s+(?P<noun>[a-z]+)\s+(?i:used to be|was)\s+[^.!?;]+?,?\s+(?i:but|and)\s+"
       r"(?:(?i:now|these days|nowadays)\s+)?(?i:it's|it is|its)\s+(?:(?i:now|definitely)\s+)?" + OBJ),
]
_ANSWER = re.compile(r"^\s*(?:it's\s+|definitely\s+|probably\s+)?(?P<obj>[^,.!?;]+?)\s*(?:[,.!]|$)", re.I)


def favourite(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    if s.asked in ("drink", "food", "film"):
        m = _ANSWER.match(s.text)  # "Favourite movie ever?" then "Spirited Away, no contest"
        for value in noun_phrases(m.group("obj"), split=False)[:1] if m else []:
            d = s.draft(s.asked, value, "en.favourite")
            if d:
                out.append(d)
    for k, rx in enumerate(_RX_FAVOURITE):
        for m in rx.finditer(s.text):
            noun = m.group("noun").lower()
            raw = m.group("obj")
            if k == 1:
                raw = re.split(r"\b(?:I think|and|but|so|because|,)\b", raw)[-1]
                raw = re.sub(r"^.*\b(?:is|are|was|think|say|beats|Okay|okay)\s+", "", raw)
            objects = noun_phrases(raw, split=False)
            if not objects:
                continue
            attribute = s.params.favourite_nouns.get(noun, "likes")
            d = s.draft(attribute, objects[0], "en.favourite", detail="" if attribute != "likes" else noun)
            if d:
                out.append(d)
    return out


_RX_INTO = rx(
    SUBJ + GAP + r"(?i:'m|am|is|'s|'ve been|have been|has been|'ve gotten|have gotten|'ve got|got|'ve become)\s+"
    + ADV + r"(?i:into|obsessed with|hooked on|crazy about|(?:a )?(?:big |huge )?fan of)\s+" + OBJ
)
# what makes the user happy: "nothing makes me happier than X", "X always makes me happy", "can't get enough of X"
_RX_LOVE_IDIOMS = [
    rx(r"\bI\s+(?:just\s+)?(?:can't|cannot)\s+get enough of\s+" + OBJ),
    rx(r"\b(?i:nothing|few things)\s+(?i:makes?|make)\s+me\s+(?i:happier|more relaxed|calmer|feel better)\s+than\s+" + OBJ),
    rx(r"^\s*(?P<obj>[^,.!?;]+?)\s+(?i:always\s+|really\s+|just\s+)?(?i:makes?)\s+me\s+(?i:so\s+|really\s+)?(?i:happy)\b"),
]
_RX_PERSON = rx(r"\b(?:I'm|I am|[Ss]till)\s+(?:a|an)\s+(?:(?i:total|big|huge|real|complete)\s+)?(?P<obj>[\w' -]+?)\s+person\b")
# the drink the user has: "I drink X", "I've been drinking X", "I have two cups of X a day", "X is all I drink"
_RX_DRINKS = [
    rx(r"\bI" + GAP + _BE_VERB + ADV + r"(?i:drink|drinking|sip|sipping|have|having)\s+"
       r"(?:(?i:like|about|at least|maybe|a|one|two|three|four|five|\d+|a few|several)\s+)*"
       r"(?P<cup>(?i:cups?|mugs?|glasses|glass|bottles?|pots?|cans?)\s+of\s+)?" + OBJ),
    rx(r"\b(?P<obj>[^,.!?;]+?)\s+is\s+(?:(?i:still|now)\s+)?(?i:all|the only thing|what|the one thing)\s+I\s+"
       r"(?:(?i:ever|really|usually)\s+)?drink\b"),
]
# "it's X for me (now)", "lately it's been X all day for me": a drink, by kind or by the sentence's words
_RX_FOR_ME = rx(r"\b(?i:it's been|it has been|it's|it is)\s+(?:(?i:all|mostly|just)\s+)?(?P<obj>[^,.!?;]+?)"
                r"(?:\s+(?i:all day|every day|every morning|these days|now))?\s+(?i:for me)\b")
_RX_ON = [
    rx(r"\bI(?:'m| am)\s+(?:(?i:now|mostly|all)\s+)?on\s+" + OBJ),
    rx(r"\bI\s+" + ADV + r"live on\s+" + OBJ),
]
_HABITUAL = re.compile(r"\b(?:only|mostly|usually|always|every|daily|a day|all day|these days|nowadays|now|lately)\b", re.I)


def _drink_talk(s: EnSentence) -> bool:
    """Does the sentence name a drink (by the lexicon) or drinking?"""
    words = re.findall(r"[a-z]+", s.text.lower())
    return any(w.startswith("drink") or s.params.categories.get(en_key(w)) == "drink" for w in words)


def _kind(s: EnSentence, value: str) -> str:
    key = en_key(value)
    category = s.params.categories.get(key) or s.params.categories.get(key.split()[-1] if key else "", "")
    return category if category in ("drink", "food") else ""


def tastes_in_words(s: EnSentence) -> list[Draft]:
    """"I've been obsessed with X", "Nothing makes me happier than X", "a total X person", "I only drink X"."""
    out: list[Draft] = []

    def add(attribute: str, raw: str, subject: str = USER) -> None:
        for value in noun_phrases(raw, split=False)[:1]:
            d = s.draft(attribute or "likes", value, "en.like" if attribute in ("", "likes") else "en.favourite",
                        subject=subject)
            if d:
                out.append(d)

    for m in _RX_INTO.finditer(s.text):
        subject = s.subject(m)
        if subject is not None and not re.search(r"\bnot\b", m.group(0)):
            add("likes", m.group("obj"), subject)
    for rx_ in _RX_LOVE_IDIOMS:
        for m in rx_.finditer(s.text):
            add("likes", m.group("obj"))
    for m in _RX_PERSON.finditer(s.text):
        value = m.group("obj")
        add(_kind(s, value) or "likes", value)
    for k, rx_ in enumerate(_RX_DRINKS):
        for m in rx_.finditer(s.text):
            values = noun_phrases(m.group("obj"), split=False)[:1]
            # a drink by kind, or said with a cup or a habit ("I mostly drink rooibos"); "I have a dog" is none
            if values and re.fullmatch(r"(?i:now|today|lately|again|too|daily|more|less|much|enough|alone)", values[0]):
                continue
            if values and (k == 1 or _kind(s, values[0]) == "drink" or m.groupdict().get("cup")
                           or (_HABITUAL.search(s.text) and not re.search(r"\bhav", m.group(0), re.I))):
                add("drink", m.group("obj"))
    for m in _RX_FOR_ME.finditer(s.text):
        for value in noun_phrases(m.group("obj"), split=False)[:1]:
            if _kind(s, value) == "drink" or _drink_talk(s):  # "gave up espresso, it's rooibos for me now"
                add("drink", value)
    for rx_ in _RX_ON:
        for m in rx_.finditer(s.text):
            for value in noun_phrases(m.group("obj"), split=False)[:1]:
                if _kind(s, value):
                    add(_kind(s, value), value)
    return out


# --- quitting and switching ----------------------------------------------------------------------------------

_RX_QUIT = rx(
    r"\bI" + GAP + r"(?i:'ve |have )?" + ADV + r"(?i:quit|gave up|given up|stopped|cut out|kicked)\s+"
    r"(?!(?i:by|at|in|to|for|the car|working|there)\b)(?:(?i:drinking|eating|having|doing|playing|watching|smoking)\s+)?" + OBJ
)
_RX_DONT_ANYMORE = rx(
    r"\bI" + GAP + r"(?i:don't|do not)\s+(?i:drink|eat|do|play|watch)\s+" + OBJ + ANYMORE
)
_RX_NO_MORE = rx(r"^\s*(?:(?i:so|and|ok|okay)\s+)?(?i:no more)\s+(?P<obj>[^.,!?;]+?)(?:\s+(?i:for me))?(?=\s*[.,!?;]|$)")
_RX_SWITCH_FROM = rx(r"\b(?i:switched|changed|swapped|went|moved over)\s+from\s+(?P<old>[^.,!?;]+?)\s+to\s+" + OBJ)
_RX_SWITCH_TO = rx(r"\b(?i:switched|swapped|moved over|changed over|changed)\s+to\s+" + OBJ)
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

    for m in _RX_NO_MORE.finditer(text):  # "No more X (for me)": a sentence that opens on it
        for value in noun_phrases(m.group("obj"), split=False):
            add("likes", value, "negative")
            add("habit", value, "negative")
    for rx in (_RX_QUIT, _RX_DONT_ANYMORE):
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
                if _kind(s, value) == "drink":  # "I gave up espresso": the drink ends too
                    add("drink", value, "negative")
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
                if "switch" in m.group(0).lower() or "swap" in m.group(0).lower() or _kind(s, value):
                    switch_to(value)  # "changed to" only for a drink or food: it says too little otherwise
    for m in _RX_INSTEAD.finditer(text):
        for value in noun_phrases(m.group("new"), split=False):
            switch_to(value)
        for value in noun_phrases(m.group("obj"), split=False):
            add("likes", value, "negative")
    return out
