"""English patterns for a life: names, places, work, people and pets, ages, possessions."""

from __future__ import annotations

import re

from ..text.noun_lemma import noun_lemma
from .draft import Draft
from .en_sentence import (
    ADV, ANYMORE, GAP, OBJ, PLACE_CUT, PRONOUNS, SUBJ, WEEK_MONTH, EnSentence, noun_phrases, rx,
)
from .models import USER


# --- identity, places, work --------------------------------------------------------------------------------

_NAME = r"(?P<value>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)"
_RX_NAME = [
    rx(r"\b(?i:my name is|my name's|i'm called|i am called|name's)\s+" + _NAME),
    rx(r"\b(?i:you can call me|just call me|call me)\s+(?P<value>[A-Z][\w'-]*)"),
]
_RX_REL_NAME_IS = rx(r"\b(?i:my|our)\s+(?P<rel>[a-z]+)'s\s+name\s+is\s+(?P<value>[A-Z][\w'-]*)")
_BE = r"(?:(?i:'m|am|'re|are|'s|is|'ve been|have been|has been|'d been|had been)\s+)?"
_RX_LIVES = rx(
    SUBJ + GAP + _BE + ADV + r"(?i:live|lives|living|based|settled|staying)\s+(?i:in|near|just outside|outside)\s+" + OBJ
)
_RX_NOT_LIVES = rx(SUBJ + GAP + r"(?i:don't|do not|doesn't|does not|no longer)\s+(?i:live|lives)\s+in\s+" + OBJ)
# moved / relocated / finished moving (any tense that says it happened), "to" or "into … in" a place
_RX_MOVED = rx(
    SUBJ + GAP + r"(?i:'ve |have |has |had |'d )?" + ADV
    + r"(?i:moved|relocated|(?:done|finished|finally)\s+moving|moved house|moved back)\s+"
    r"(?:(?i:from)\s+(?P<old>[^.,!?;]+?)\s+)?(?i:to|into|over to|back to)\s+" + OBJ
)
_RX_FROM = rx(
    r"\bI" + GAP + r"(?:(?i:'m|am)\s+(?:(?i:originally)\s+)?(?i:from)|(?i:come from|was born in|was born and raised in|grew up in))\s+" + OBJ
)
_RX_WORKS = rx(
    SUBJ + GAP + ADV + r"(?i:work|works|'m working|am working|'ve been working|have been working|started working|got a job|landed a job|started a new job|got a new job)\s+(?i:at|for)\s+" + OBJ
)
_RX_JOB = rx(SUBJ + GAP + ADV + r"(?i:work|works|'m working|am working)\s+as\s+(?:an?\s+)?" + OBJ)


_CAPITALISED = re.compile(r"(?:the\s+)?[A-Z][\w'-]*(?:\s+(?:(?:of|upon|de|la|le)\s+)?[A-Z][\w'-]*)*")
_IN_PLACE = re.compile(r"\b(?:in|near|outside)\s+(" + _CAPITALISED.pattern + ")")


def place(raw: str) -> str:
    """A place named in an object: its capitalised run ("Austin at the end of last month" → Austin; "a flat in
    Leeds" → Leeds); the object unchanged when it names none."""
    raw = raw.strip()
    m = _CAPITALISED.match(raw)
    if m:
        return m.group(0)
    m = _IN_PLACE.search(raw)
    return m.group(1) if m else raw


def identity_and_places(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    text = s.text

    def add(m: re.Match[str], attribute: str, raw: str, pattern: str, polarity: str = "positive") -> None:
        subject = USER
        if "subj" in m.re.groupindex:
            subject = s.subject(m, we=attribute == "lives_in")
        if subject is None or re.search(r"\b(?:if|would|wish|want to|going to)\b[^.]*$", text[: m.start()], re.I):
            return
        if attribute in ("lives_in", "from"):
            raw = place(raw)
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


# "our puppy is called Maple", "my new cat's named Olive"; "we named her Maple" beside a pet noun
_RX_REL_CALLED = rx(r"\b(?i:my|our)\s+(?:(?i:new|little|rescue)\s+)?(?P<rel>[a-z]+)(?:\s+is|'s)?\s+(?i:called|named)\s+"
                    r"(?P<value>[A-Z][a-z]+)(?![a-z'])")
_RX_NAMED_IT = rx(r"\b(?:I|(?i:we|and))\s+(?:(?i:finally|just|have|'ve)\s+)*(?i:named|called)\s+(?i:him|her|it|them)\s+"
                  r"(?P<value>[A-Z][a-z]+)(?![a-z'])")
_PET_NOUN = re.compile(r"\b(?P<rel>dog|puppy|pup|cat|kitten|rabbit|bunny|hamster|parrot|budgie|tortoise|turtle|"
                       r"guinea pig|ferret|horse|pony|lizard|snake|fish)s?\b", re.I)


def people_and_pets(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    for m in _RX_NAMED_IT.finditer(s.text):
        pet = _PET_NOUN.search(s.text[: m.start()]) or _PET_NOUN.search(s.text)
        value = m.group("value")
        if pet and s.params.relations.get(pet.group("rel").lower()) == "pet" and value not in WEEK_MONTH:
            rel = pet.group("rel").lower()
            s.registry.add(value, "pet", rel)
            d = s.draft("pet", value, "en.named", detail=rel, value_key=value.lower())
            if d:
                out.append(d)
    for rx in (_RX_REL_NAME, _RX_HAVE_NAMED, _RX_REL_CALLED):
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
            head = noun_lemma(value.split()[-1])
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
            head = noun_lemma(value.split()[-1])
            if head in s.params.possessions or value.lower() in s.params.possessions:
                d = s.draft("has", value, "en.has", polarity="negative")
                if d:
                    out.append(d)
    return out


# --- the same facts in chattier words ----------------------------------------------------------------------------

_PLACE = r"(?P<obj>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
# "I'm Noah." / "I'm Noah, nice to meet you": a capitalised word alone after "I'm" that is no other kind of word
_RX_NAME_ALONE = rx(r"\bI(?:'m| am)\s+(?P<value>[A-Z][a-z]+)(?=\s*(?:[,.!]|$|(?i:by the way|btw|here)\b))")
_NOT_A_NAME = re.compile(r"(?:ish|ese|ing|ful|ous)$")  # English, Japanese, Fine … are not names
# the user's home (place, flat, apartment …) in a place: a possessive and a noun of the kind
_RX_HOME_IN = rx(r"\b(?i:my|our)\s+(?:(?i:new|little|tiny|own|first)\s+)?(?i:place|flat|apartment|house|home|room|"
                 r"studio|condo|bedsit|digs|address)\s+(?:(?i:is)\s+)?(?i:in|near|outside)\s+" + _PLACE)
# settling into a place, a lease or a house taken in one: "settling into Boise", "signed a lease in Tucson"
_RX_SETTLED = rx(r"\b(?:I|(?i:we))" + GAP + r"(?:(?i:'re|are|'m|am|'ve|have|just|finally|now|slowly|gradually|still)\s+)*(?i:settling|settled)\s+"
                 r"(?i:in|into)\s+" + _PLACE + r"|\b(?:I|(?i:we))" + GAP + r"(?:(?i:'ve|have|just|finally)\s+)*"
                 r"(?i:signed a lease|bought a (?:house|flat|place|home)|closed on (?:a|the|our) (?:house|flat|place|home))"
                 r"\s+(?i:in)\s+" + _PLACE.replace("obj", "obj2"))
# a job, position or role got, landed, started … at a place; "my (new) job at …"
_RX_JOB_AT = [
    rx(r"\b(?:I|(?i:we))" + GAP + r"(?:(?i:'ve|have|just|recently|finally|also)\s+)*(?i:got|landed|started|took|"
       r"accepted|began|found|have|'ve got)\s+(?:(?i:a|an|the|my)\s+)?(?:(?i:new|first|part-time|full-time)\s+)?"
       r"(?i:job|position|role|post|gig)\s+(?i:at|with)\s+" + OBJ),
    rx(r"\b(?i:my)\s+(?:(?i:new|current)\s+)?(?i:job|workplace|role|position)\s+(?i:at|with)\s+" + OBJ),
    rx(r"\b(?:and\s+)?(?i:started|began)\s+(?:(?i:working\s+)?)at\s+" + OBJ),
    # joined / was hired by / accepted an offer from an organisation named with a capital
    rx(r"\bI" + GAP + r"(?:(?i:'ve|have|just|recently|finally|officially)\s+)*(?i:joined|been hired by|got hired by|"
       r"was hired by|accepted an offer from|signed with)\s+(?P<obj>(?:the\s+)?[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*)"),
]
_RX_LEFT_JOB = rx(r"\bI\s+(?:just\s+)?(?:left|quit)\s+my\s+job\s+(?:at|with)\s+(?P<obj>[^.,!?;]+?)(?:\s+and\b|[.,!?;]|$)")
_RX_IS_MY = rx(r"\b(?P<value>[A-Z][a-z]+)\s+is\s+my\s+(?P<rel>[a-z]+)\b")
# a known name and an age in years in one clause: "Biscuit, my dog, 4 years old now", "Luna's birthday: 3 years old"
_RX_NAMED_AGE = rx(r"\b(?P<value>[A-Z][a-z]+)\b(?=[^.!?;]{0,40}?\b(?P<n>\d{1,2})\s+years?\s+old\b)")


def life_in_words(s: EnSentence) -> list[Draft]:
    """"I'm Noah.", "my flat in Leeds", "I landed a job at …", "Biscuit is my dog", a known name's age in years."""
    out: list[Draft] = []
    text = s.text

    def add(attribute: str, raw: str, pattern: str, polarity: str = "positive", subject: str = USER, **kw) -> None:
        for value in noun_phrases(raw, PLACE_CUT, split=False, max_words=4)[:1]:
            d = s.draft(attribute, value, pattern, polarity=polarity, subject=subject, **kw)
            if d:
                out.append(d)

    for m in _RX_NAME_ALONE.finditer(text):
        value = m.group("value")
        if value not in WEEK_MONTH and value not in s.params.not_names and not _NOT_A_NAME.search(value.lower()):
            add("name", value, "en.name", value_key=value.lower())
    if not re.search(r"\b(?:if|would|wish|want|moving to|friend|sister|brother|mum|mom)\b", text, re.I):
        for m in _RX_HOME_IN.finditer(text):
            add("lives_in", m.group("obj"), "en.lives")
        for m in _RX_SETTLED.finditer(text):
            add("lives_in", m.group("obj") or m.group("obj2"), "en.lives")
    left = list(_RX_LEFT_JOB.finditer(text))
    for m in left:
        add("works_at", m.group("obj"), "en.works", "negative")
    for rx_ in _RX_JOB_AT:
        for m in rx_.finditer(text):
            if rx_ is _RX_JOB_AT[2] and not left and not re.search(r"\b(?:job|work|position|role)\b", text, re.I):
                continue  # "started at" names a workplace only beside a job
            if rx_ is _RX_JOB_AT[1] and re.search(r"\b(?:left|quit|lost|leaving|quitting|hate|hated)\s+$",
                                                   text[: m.start()], re.I):
                continue  # "I quit my job at …" ends the job
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
