"""English patterns in time: plans and dated events, habits."""

from __future__ import annotations

import re

from .dates import find_date, local_day
from .draft import Draft
from .en_sentence import CUT, NOT_EVENTS, PAST_IRREGULAR, EnSentence, en_key, rx


# --- plans, dated events, habits ----------------------------------------------------------------------------

_RX_FUTURE = [
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
        vp = _clean_vp(m.group("vp"), mention.text)
        first = vp.split()[0].lower() if vp else ""
        if not vp or first in ("be", "try", "think", "see", "let", "probably", "maybe") or len(vp.split()) > 7:
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
    if verb in NOT_EVENTS or not (verb in PAST_IRREGULAR or verb.endswith("ed")):
        return []
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
