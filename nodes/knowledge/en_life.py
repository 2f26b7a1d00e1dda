"""English patterns for a life: names, places, work, people and pets, ages, possessions."""

from __future__ import annotations

import re

from .draft import Draft
from .en_sentence import (
    ADV, ANYMORE, GAP, OBJ, PLACE_CUT, PRONOUNS, SUBJ, WEEK_MONTH, EnSentence, lemma, noun_phrases, rx,
)
from .models import USER


# --- identity, places, work --------------------------------------------------------------------------------

_NAME = r"(?P<value>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)"
_RX_NAME = [
    rx(r"\b(?i:my name is|my name's|i'm called|i am called|name's)\s+" + _NAME),
    rx(r"\b(?i:you can call me|just call me|call me)\s+(?P<value>[A-Z][\w'-]*)"),
]
_RX_REL_NAME_IS = rx(r"\b(?i:my|our)\s+(?P<rel>[a-z]+)'s\s+name\s+is\s+(?P<value>[A-Z][\w'-]*)")
_RX_LIVES = rx(
    SUBJ + GAP + ADV + r"(?i:live|lives|'m living|am living|is living|'ve been living|have been living|'m based|am based)\s+in\s+" + OBJ
)
_RX_NOT_LIVES = rx(SUBJ + GAP + r"(?i:don't|do not|doesn't|does not|no longer)\s+(?i:live|lives)\s+in\s+" + OBJ)
_RX_MOVED = rx(
    SUBJ + GAP + r"(?i:'ve |have |has )?" + ADV + r"(?i:moved|relocated)\s+(?:(?i:from)\s+(?P<old>[^.,!?;]+?)\s+)?(?i:to)\s+" + OBJ
)
_RX_FROM = rx(
    r"\bI" + GAP + r"(?:(?i:'m|am)\s+(?:(?i:originally)\s+)?(?i:from)|(?i:come from|was born in|was born and raised in|grew up in))\s+" + OBJ
)
_RX_WORKS = rx(
    SUBJ + GAP + ADV + r"(?i:work|works|'m working|am working|'ve been working|have been working|started working|got a job|landed a job|started a new job|got a new job)\s+(?i:at|for)\s+" + OBJ
)
_RX_JOB = rx(SUBJ + GAP + ADV + r"(?i:work|works|'m working|am working)\s+as\s+(?:an?\s+)?" + OBJ)


def identity_and_places(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    text = s.text

    def add(m: re.Match[str], attribute: str, raw: str, pattern: str, polarity: str = "positive") -> None:
        subject = s.subject(m) if "subj" in m.re.groupindex else USER
        if subject is None or re.search(r"\b(?:if|would|wish|want to|going to)\b[^.]*$", text[: m.start()], re.I):
            return
        for value in noun_phrases(raw, PLACE_CUT, split=False, max_words=4):
            if value.lower() in s.params.context_words:
                continue  # "from work", "in school" are no places of the kind
            d = s.draft(attribute, value, pattern, subject=subject, polarity=polarity)
            if d:
                out.append(d)

    for rx in _RX_NAME:
        for m in rx.finditer(text):
            value = m.group("value")
            if value.split()[0].lower() in PRONOUNS or value in WEEK_MONTH or value.lower() in ("not", "so", "very"):
                continue
            d = s.draft("name", value, "en.name", value_key=value.lower())
            if d:
                out.append(d)
    for m in _RX_REL_NAME_IS.finditer(text):
        attribute = s.params.relations.get(m.group("rel").lower())
        if attribute:
            s.registry.add(m.group("value"), attribute, m.group("rel").lower())
            d = s.draft(attribute, m.group("value"), "en.named", detail=m.group("rel").lower(), value_key=m.group("value").lower())
            if d:
                out.append(d)
    not_lives = list(_RX_NOT_LIVES.finditer(text))
    for m in not_lives:
        if re.search(ANYMORE, text[m.start():]) or "no longer" in m.group(0).lower():
            add(m, "lives_in", m.group("obj"), "en.lives", "negative")
    if not not_lives:
        for m in _RX_LIVES.finditer(text):
            add(m, "lives_in", m.group("obj"), "en.lives")
    for m in _RX_MOVED.finditer(text):
        add(m, "lives_in", m.group("obj"), "en.moved")
    for m in _RX_FROM.finditer(text):
        add(m, "from", m.group("obj"), "en.from")
    for m in _RX_WORKS.finditer(text):
        add(m, "works_at", m.group("obj"), "en.works")
    for m in _RX_JOB.finditer(text):
        add(m, "job", m.group("obj"), "en.job")
    return out


# --- people and pets, ages, possessions ------------------------------------------------------------------------

_RX_REL_NAME = rx(r"\b(?i:my|our)\s+(?P<rel>[a-z]+),?\s+(?P<value>[A-Z][a-z]+)(?![a-z'])")
_RX_HAVE_NAMED = rx(
    r"\b(?:I|(?i:we))" + GAP + r"(?:(?i:just)\s+)?"
    r"(?i:have|'ve got|have got|had|got|adopted|'ve adopted|have adopted|rescued|brought home)\s+"
    r"(?i:a|an|one)\s+(?:(?i:new|little|rescue|tiny)\s+)?(?P<rel>[a-z]+)\s+(?i:named|called)\s+(?P<value>[A-Z][a-z]+)"
)
_AGE_END = r"(?=\s*(?:[.!,]|$|now|today|this year|and|but|next|years? old))"
_RX_AGE_USER = [
    rx(r"\bI(?:'m| am)\s+(?:now\s+)?(?P<n>\d{1,3})(?:\s+years?\s+old)?" + _AGE_END),
    rx(r"\bI\s+(?:just\s+)?turned\s+(?P<n>\d{1,3})(?!\s*(?:minutes|hours|days|%|percent|degrees))\b"),
]
_RX_AGE_OTHER = [
    rx(SUBJ + r"\s*(?:is|'s|is now|just turned|turned)\s+(?P<n>\d{1,2})(?:\s+years?\s+old)?" + _AGE_END),
    rx(SUBJ + r"\s+is\s+(?:a|an)\s+(?P<n>\d{1,2})[- ]years?[- ]old\b"),
]
_RX_HAS = rx(
    r"\bI" + GAP + ADV + r"(?i:have|own|'ve got|have got|got|bought|'ve bought|have bought)\s+"
    r"(?P<det>(?i:a|an|one|two|three|four|\d+|my first|my own)\s+)?(?P<new>(?i:new)\s+)?" + OBJ
)
_RX_HAS_NOT = rx(
    r"\bI" + GAP + ADV + r"(?:(?i:sold|got rid of|gave away)\s+(?:(?i:my|the|our)\s+)?" + OBJ + r"|"
    r"(?i:don't|do not)\s+(?i:have|own)\s+(?:(?i:a|an|my)\s+)?(?P<obj2>[^.,!?;]+?)" + ANYMORE + r")"
)


def people_and_pets(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    for rx in (_RX_REL_NAME, _RX_HAVE_NAMED):
        for m in rx.finditer(s.text):
            rel, value = m.group("rel").lower(), m.group("value")
            attribute = s.params.relations.get(rel)
            if attribute is None or value in s.params.not_names or value in WEEK_MONTH:
                continue
            s.registry.add(value, attribute, rel)
            d = s.draft(attribute, value, "en.named", detail=rel, value_key=value.lower())
            if d:
                out.append(d)
    return out


def ages(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    if re.search(r"\b(?:will be|'ll be|going to be|gonna be)\b", s.text, re.I):
        return out
    for rx in _RX_AGE_USER:
        for m in rx.finditer(s.text):
            out.append(Draft(attribute="age", value=m.group("n"), value_key=m.group("n"), pattern="en.age"))
    for rx in _RX_AGE_OTHER:
        for m in rx.finditer(s.text):
            subject = s.subject(m)
            if subject is None or subject == USER:
                continue
            out.append(Draft(attribute="age", value=m.group("n"), value_key=m.group("n"), pattern="en.age", subject=subject))
    return out


def possessions(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    text = s.text
    if re.search(r"\b(?:if|would|wish|want|need|going to|gonna|should)\b", text, re.I):
        return out
    for m in _RX_HAS.finditer(text):
        if re.match(r"\s*(?:to|got to)\b", m.group("obj"), re.I):
            continue
        for value in noun_phrases(m.group("obj"), split=False, max_words=3):
            head = lemma(value.split()[-1])
            if s.params.relations.get(head) == "pet":
                d = s.draft("pet", head, "en.pet_kept", detail=head, value_key=head)
            elif head in s.params.possessions or value.lower() in s.params.possessions or (
                m.group("new") and re.search(r"\b(?:bought|got)\b", m.group(0), re.I)
            ):
                d = s.draft("has", value, "en.has")
            else:
                continue
            if d:
                out.append(d)
    for m in _RX_HAS_NOT.finditer(text):
        raw = m.group("obj") or m.group("obj2") or ""
        for value in noun_phrases(raw, split=False, max_words=3):
            head = lemma(value.split()[-1])
            if head in s.params.possessions or value.lower() in s.params.possessions:
                d = s.draft("has", value, "en.has", polarity="negative")
                if d:
                    out.append(d)
    return out


# --- the same facts in chattier words ----------------------------------------------------------------------------

_PLACE = r"(?P<obj>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
_RX_NAME_BTW = rx(r"\bI(?:'m| am)\s+(?P<value>[A-Z][a-z]+),?\s+(?i:by the way|btw)\b")
_RX_ITS_NAME = rx(r"^\s*(?:It's|I'm)\s+(?P<value>[A-Z][a-z]+)\s*[.!]?\s*$")
_RX_HOME_IN = [
    rx(r"\b(?i:my)\s+(?:(?i:new)\s+)?(?i:place|flat|apartment|house|home|room)\s+in\s+" + _PLACE),
    rx(r"\b(?i:life|living)\s+in\s+" + _PLACE + r"\s+(?i:is|has been)\b"),
    rx(r"\b(?i:still living|still live)\s+in\s+" + _PLACE),
    rx(r"\b(?i:done|finished)\s+moving\s+(?:(?i:from)\s+[^.,!?;]+?\s+)?(?i:to)\s+" + _PLACE),
]
_RX_JOB_AT = [
    rx(r"\bI(?:'ve| have)\s+got\s+a\s+(?:new\s+)?job\s+(?:at|with)\s+" + OBJ),
    rx(r"\b(?i:my)\s+new\s+job\s+(?:at|with)\s+" + OBJ),
    rx(r"\b(?:and\s+)?started\s+(?:a new job\s+)?at\s+" + OBJ),
    rx(r"^\s*(?i:work)\s+at\s+(?P<obj>[^.,!?;]+?)\s+(?i:is)\b"),
]
_RX_LEFT_JOB = rx(r"\bI\s+(?:just\s+)?(?:left|quit)\s+my\s+job\s+(?:at|with)\s+(?P<obj>[^.,!?;]+?)(?:\s+and\b|[.,!?;]|$)")
_RX_AT_NOW = rx(r"^\s*I(?:'m| am)\s+at\s+" + OBJ)
_RX_IS_MY = rx(r"\b(?P<value>[A-Z][a-z]+)\s+is\s+my\s+(?P<rel>[a-z]+)\b")
_RX_NAMED_AGE = rx(r"\b(?P<value>[A-Z][a-z]+)(?:'s birthday|\s+is\s+my\s+[a-z]+)?,\s+(?P<n>\d{1,2})\s+years?\s+old\b")


def life_in_words(s: EnSentence) -> list[Draft]:
    """"I'm Noah, by the way", "My flat in Leeds …", "I've got a job at …", "New job! I'm at …", "Biscuit is my dog"."""
    out: list[Draft] = []
    text = s.text

    def add(attribute: str, raw: str, pattern: str, polarity: str = "positive", subject: str = USER, **kw) -> None:
        for value in noun_phrases(raw, PLACE_CUT, split=False, max_words=4)[:1]:
            d = s.draft(attribute, value, pattern, polarity=polarity, subject=subject, **kw)
            if d:
                out.append(d)

    for m in _RX_NAME_BTW.finditer(text):
        add("name", m.group("value"), "en.name")
    if s.asked == "name":
        for m in _RX_ITS_NAME.finditer(text):
            add("name", m.group("value"), "en.name")
    if not re.search(r"\b(?:if|would|wish|want|moving to|friend|sister|brother|mum|mom)\b", text, re.I):
        for rx_ in _RX_HOME_IN:
            for m in rx_.finditer(text):
                add("lives_in", m.group("obj"), "en.lives")
    left = list(_RX_LEFT_JOB.finditer(text))
    for m in left:
        add("works_at", m.group("obj"), "en.works", "negative")
    for rx_ in _RX_JOB_AT:
        for m in rx_.finditer(text):
            if rx_ is _RX_JOB_AT[2] and not left and "job" not in text.lower():
                continue  # "started at" names a workplace only beside a job
            add("works_at", m.group("obj"), "en.works")
    if re.match(r"^\s*(?:a\s+)?new job\b", text, re.I):
        s.registry.asked = "works_at"  # "New job!" then "I'm at a bakery now."
    if s.asked == "works_at":
        for m in _RX_AT_NOW.finditer(text):
            add("works_at", m.group("obj"), "en.works")
    for m in _RX_IS_MY.finditer(text):
        rel, value = m.group("rel").lower(), m.group("value")
        attribute = s.params.relations.get(rel)
        if attribute and value not in s.params.not_names and value not in WEEK_MONTH:
            s.registry.add(value, attribute, rel)
            out.append(Draft(attribute=attribute, value=value, value_key=value.lower(), pattern="en.named", detail=rel))
    for m in _RX_NAMED_AGE.finditer(text):
        if m.group("value") in s.registry.names:
            n = m.group("n")
            out.append(Draft(attribute="age", value=n, value_key=n, pattern="en.age", subject=m.group("value")))
    return out
