"""English patterns in time: plans and dated events, habits."""

from __future__ import annotations

import re

from .dates import find_date, local_day
from .draft import Draft
from .en_sentence import CUT, NOT_EVENTS, PAST_IRREGULAR, WEEK_MONTH, EnSentence, en_key, rx


# --- plans, dated events, habits ----------------------------------------------------------------------------

_EVENT_VERBS = frozenset("went visited travelled traveled flew drove moved met saw watched attended started finished "
                         "graduated married celebrated ran won lost".split())
_NOT_PLANS = frozenset("be try think see let probably maybe go sleep rest leave head stay".split())
_RX_FUTURE = [
    rx(r"\bI(?:'ve| have)?\s+(?:just\s+)?booked\s+(?P<vp>(?:a|my)\s+(?:trip|flight|holiday|vacation|ticket)s?\s+to\s+[^.,!?;]+)"),
    rx(r"\bI(?:'m| am)\s+gonna\s+(?P<vp>[^.,!?;]+)"),
    rx(r"\bI(?:'ll| will)\s+(?P<vp>[^.,!?;]+)"),
    rx(r"\bI\s+(?:plan|intend|have)\s+to\s+(?P<vp>[^.,!?;]+)"),
    rx(r"\bI(?:'m| am)\s+(?:planning|hoping)\s+to\s+(?P<vp>[^.,!?;]+)"),
    rx(r"\bI(?:'m| am)\s+(?P<vp>(?:going|flying|heading|visiting|meeting|seeing|travell?ing|driving|moving|starting|taking|having|getting|leaving|running|playing|attending|hosting|doing)\b[^.,!?;]*)"),
    rx(r"\bI(?:'ve| have)\s+(?:got\s+)?(?P<vp>(?:a|an|my)\s+[^.,!?;]*?(?:appointment|meeting|interview|exam|test|date|party|concert|match|game|trip|flight|class|lesson|checkup|check-up)\b[^.,!?;]*)"),
]
_RX_PAST = rx(r"\bI\s+(?:just\s+|finally\s+)?(?P<vp>(?P<verb>[a-z]+)\b[^.,!?;]*)")


def _clean_vp(vp: str, when: str) -> str:
    vp = vp.replace(when, " ") if when else vp
    vp = re.sub(r"\b(?:on|at|this|next|last|in)\s*$", "", vp.strip(), flags=re.I)
    vp = re.sub(r"\s+(?:on|at)\s+(?=(?:and|but|so)\b|$)", " ", vp)
    vp = CUT.sub("", vp)
    vp = re.sub(r"[^\w' ]+.*$", "", vp)  # an emoji ends it
    vp = re.sub(r"\s+(?:on|at|in|for|from|to)\s*$", "", vp.strip(), flags=re.I)
    return re.sub(r"\s{2,}", " ", vp).strip(" ,")


def plans(s: EnSentence) -> list[Draft]:
    text = s.text
    today = local_day(s.said_at, s.zone)
    for rx in _RX_FUTURE:
        m = rx.search(text)
        if m is None:
            continue
        mention = find_date(text, s.said_at, s.zone, future=True, english=True)
        if mention is None or (mention.day is not None and mention.day < today):
            return []
        if re.search(r"\b(?:now|right away|in a minute|soon)\b", m.group("vp"), re.I):
            return []  # "I'll go now": leaving the chat, not a plan
        vp = _clean_vp(m.group("vp"), mention.text)
        first = vp.split()[0].lower() if vp else ""
        if not vp or first in _NOT_PLANS or len(vp.split()) > 7:
            return []
        if re.search(r"\bif\b", text[: m.start()], re.I):
            return []
        d = s.draft("plan", vp, "en.plan", event_date=mention.day, when_text=mention.text)
        return [d] if d else []
    mention = find_date(text, s.said_at, s.zone, future=False, english=True)
    if mention is None:
        return []
    m = _RX_PAST.search(text)
    if m is None:
        return []
    verb = m.group("verb").lower()
    if verb not in _EVENT_VERBS:
        return []  # "I had pancakes tonight" is no event worth a date
    if mention.day is not None and mention.day > today:
        return []
    vp = _clean_vp(m.group("vp"), mention.text)
    if not vp or len(vp.split()) > 7:
        return []
    d = s.draft("event", vp, "en.event", event_date=mention.day, when_text=mention.text)
    return [d] if d else []


_FREQ = (r"(?P<freq>(?i:every|each)\s+(?:single\s+)?(?i:morning|day|night|evening|week|weekend|month|monday|tuesday|"
         r"wednesday|thursday|friday|saturday|sunday|other day)|(?i:on)\s+(?i:weekends|mondays|tuesdays|wednesdays|"
         r"thursdays|fridays|saturdays|sundays))")
_RX_HABIT_AFTER = rx(r"\bI\s+(?:(?i:usually|always|often|normally)\s+)?(?P<vp>[a-z][^.,!?;]*?)\s+" + _FREQ + r"\b")
_RX_HABIT_BEFORE = rx(_FREQ + r",?\s+I\s+(?:(?i:usually|always|often|normally)\s+)?(?P<vp>[a-z][^.,!?;]*)")


def habits(s: EnSentence) -> list[Draft]:
    for rx in (_RX_HABIT_BEFORE, _RX_HABIT_AFTER):
        m = rx.search(s.text)
        if m is None:
            continue
        vp = CUT.sub("", m.group("vp")).strip()
        first = vp.split()[0].lower() if vp else ""
        if (not vp or first in PAST_IRREGULAR or first.endswith("ed") or first in NOT_EVENTS
                or first in ("will", "would", "used", "don't", "do", "can't", "can", "should", "'ll", "was", "wish", "want", "need")
                or len(vp.split()) > 6):
            return []
        vp = re.sub(r"^(?:'m|am)\s+", "", vp)
        generic = re.match(r"(?:drink|have|eat|play|watch|smoke|do|drinking|having|eating|playing|watching|smoking)\s+(.+)$", vp, re.I)
        key = en_key(generic.group(1)) if generic else en_key(vp)
        d = s.draft("habit", vp, "en.habit", detail=m.group("freq").lower(), category="", value_key=key)
        return [d] if d else []
    return []


_HABIT_FREQ = (r"(?P<freq>(?i:every\s+(?:single\s+)?(?:morning|day|night|evening|week|weekend)|daily|"
               r"(?:a few|several|once|twice|three|\d+)\s+(?:times\s+)?a\s+(?:day|week|month)))")
_RX_TAKEN_UP = rx(
    r"\bI(?:'ve| have)?\s+(?:also\s+|just\s+|recently\s+)?(?:started|taken up|took up|begun|began|picked up)\s+"
    r"(?P<vp>[a-z]+ing(?:\s+[a-z]+)?)(?:\s+" + _HABIT_FREQ + r")?"
)
_RX_BEEN_DOING = rx(r"\bI(?:'ve| have)\s+been\s+(?P<vp>[a-z]+ing(?:\s+[a-z]+)?)\s+" + _HABIT_FREQ)


def taking_up(s: EnSentence) -> list[Draft]:
    """"I started running every day", "I've also started stretching a few times a week", "I've been journaling
    every morning": an activity taken up (or kept up) is a habit."""
    for rx_ in (_RX_BEEN_DOING, _RX_TAKEN_UP):
        m = rx_.search(s.text)
        if m is None or re.search(r"\b(?:if|want|going to|should|stopped|quit)\b", s.text[: m.start()], re.I):
            continue
        vp = CUT.sub("", m.group("vp")).strip()
        words = vp.split()
        if not words or words[0].lower() in ("working", "going", "feeling", "getting", "thinking", "looking"):
            return []
        freq = (m.group("freq") or "").lower()
        if len(words) > 1 and not freq:
            vp = words[0]  # "started running lately" → running
        d = s.draft("habit", vp, "en.habit", detail=freq, category="", value_key=en_key(words[0]))
        return [d] if d else []
    return []


_RX_VISITED = [
    rx(r"\bI\s+(?:just\s+|finally\s+|also\s+)?(?:went|travelled|traveled|flew|drove|took a trip)\s+to\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    rx(r"\bI\s+(?:just\s+)?(?:got back|came back|returned)\s+from\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    rx(r"\bI\s+(?:also\s+)?(?:made it)\s+to\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    rx(r"\bI\s+spent\s+(?:a few|some|a couple of|two|three|four|five|\d+)\s+(?:days|nights|weeks)\s+in\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    rx(r"\bI\s+(?:just\s+|finally\s+)?visited\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    rx(r"\bI(?:'ve| have)\s+(?:already\s+)?been\s+to\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
]


def visited(s: EnSentence) -> list[Draft]:
    """"I went to Lisbon last weekend", "I just got back from Seoul", "Spent a few days in Prague": a place been to."""
    out: list[Draft] = []
    if re.search(r"\b(?:never|if|would|want|wish|going to|gonna|will|'ll|my (?:sister|brother|friend|mum|mom|dad))\b",
                 s.text, re.I):
        return out
    for rx_ in _RX_VISITED:
        for m in rx_.finditer(s.text):
            place = m.group("place")
            if place in WEEK_MONTH or place.split()[0] in ("The", "A", "My", "I"):
                continue
            d = s.draft("visited", place, "en.visited", value_key=place.lower())
            if d:
                out.append(d)
    return out
