"""English patterns: what chat users say about themselves and their life, read with regular expressions.

Each rule anchors on a subject (I, my sister, our dog Rex, a name already met) and a verb; the object is cut
at the first clause word (but, because, now, anymore …). Questions, wishes (I'd like), conditions (if I …)
and pronoun objects (I love it) yield nothing: a missed fact costs less than an invented one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from .dates import find_date, local_day
from .draft import Draft, Registry
from .models import USER
from .params import KnowledgeParams

_ADV = r"(?:(?:really|absolutely|totally|just|also|still|truly|honestly|actually|kinda|so|do|definitely|seriously|genuinely|simply|now|recently|finally)\s+)*"
_GAP = r"(?:\s+|(?='))"
_OBJ = r"(?P<obj>[^.,!?;:()\"]+)"
_SUBJ = (
    r"(?P<subj>\bI\b|\b(?i:my|our)\s+(?P<rel>[a-z]+)(?:,?\s+(?P<relname>[A-Z][a-z]+)(?![a-z]))?"
    r"|\b(?P<name>[A-Z][a-z]+)\b)"
)
_CUT = re.compile(
    r"\s+(?:and then|but|because|cause|so|since|when|whenever|while|although|though|if|as|now|anymore|any more|"
    r"these days|nowadays|lately|recently|too|again|as well|a lot|so much|very much|more than|at the moment|right now|instead|"
    r"lol|haha|though|ever since|for (?:years|months|ages|a while|now)|which|who|that)\b.*$",
    re.I,
)
_PLACE_CUT = re.compile(
    r"\s+(?:last|next|this|a few|in \d{4}|for|with|ago|since|because|but|and|now|anymore|any more|years?|months?|weeks?)\b.*$",
    re.I,
)
_DETERMINERS = re.compile(r"^(?:the|a|an|some|my|our|lots of|a lot of|all|any|many|much|two|three|\d+)\s+", re.I)
_PRONOUNS = frozenset("it that this them you him her those these one everything something nothing anything "
                      "myself yourself us me what how when where why who which the way there here".split())
_OTHERS = re.compile(r"^(?:your|his|her|their|its|our)\b", re.I)
_THINKING = frozenset("think say know believe guess suppose mean see hear talk chat".split())
_WEEK_MONTH = frozenset("Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June "
                        "July August September October November December Today Tomorrow Yesterday".split())
_PAST_IRREGULAR = frozenset("went ran ate had was were did saw met got took made flew bought drove swam wrote read sang "
                            "gave found left came became began drank slept spent told thought felt kept".split())
_NOT_EVENTS = frozenset("wanted needed loved liked hated used tried thought was were felt guess wish hoped "
                        "forgot remembered said told asked".split())


_IE_NOUNS = frozenset("movie cookie zombie selfie smoothie pie tie hoodie rookie brownie lie calorie indie goalie "
                      "veggie foodie newbie birdie sweetie".split())


def lemma(word: str) -> str:
    """A light English lemma of a noun: plurals to singular (movies → movie, cities → city)."""
    w = word.lower()
    if w.endswith("ies") and w[:-1] in _IE_NOUNS:
        return w[:-1]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and re.search(r"(?:ches|shes|xes|ses|zes)$", w):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def en_key(value: str) -> str:
    """Lower-cased lemmas: "Cats" and "cat" are one value."""
    return " ".join(lemma(w) for w in re.findall(r"[\w'&+-]+", _DETERMINERS.sub("", value)))


@dataclass
class EnSentence:
    text: str
    params: KnowledgeParams
    registry: Registry
    said_at: float
    zone: ZoneInfo

    def draft(self, attribute: str, value: str, pattern: str, **kw) -> Draft | None:
        value = _DETERMINERS.sub("", value.strip(" '\"-"))
        if not value or len(value) > self.params.max_value_chars:
            return None
        key = kw.pop("value_key", None) or en_key(value)
        category = kw.pop("category", None)
        if category is None:
            category = self.params.categories.get(key) or self.params.categories.get(key.split()[-1] if key else "", "")
        return Draft(attribute=attribute, value=value, value_key=key, pattern=pattern, category=category, **kw)

    def subject(self, m: re.Match[str]) -> str | None:
        """USER, a name or a relation noun; None when the subject is no one we can name."""
        if m.group("subj") == "I":
            return USER
        rel, relname, name = m.group("rel"), m.group("relname"), m.group("name")
        if rel is not None:
            attribute = self.params.relations.get(rel.lower())
            if attribute is None:
                return None
            if relname and relname not in self.params.not_names and relname not in _WEEK_MONTH:
                self.registry.add(relname, attribute, rel.lower())
                return relname
            return rel.lower()  # "my sister loves …": the relation as said, grounded in the sentence
        return name if name in self.registry.names else None


def _objects(raw: str, cut: re.Pattern[str] = _CUT, split: bool = True, max_words: int = 5) -> list[str]:
    """The noun phrases of a captured object: cut at clause words, determiners dropped, 'A and B' split."""
    raw = cut.sub("", raw.strip())
    parts = re.split(r"\s+(?:and|&)\s+|,\s*", raw) if split else [raw]
    out = []
    for part in parts:
        part = part.strip()
        if not part or _OTHERS.match(part):
            continue
        part = _DETERMINERS.sub("", part)
        part = re.sub(r"^to\s+", "", part)
        words = part.split()
        if not words or len(words) > max_words or words[0].lower() in _PRONOUNS or words[0].lower() in _THINKING:
            continue
        out.append(part)
    return out


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# --- likes and dislikes ------------------------------------------------------------------------------------

_LIKE_VERB = r"(?i:like|likes|love|loves|adore|adores|enjoy|enjoys|'m into|am into|is into|'s into|'m obsessed with|am obsessed with|is obsessed with|'m (?:a )?(?:big |huge )?fan of|am (?:a )?(?:big |huge )?fan of|'m crazy about|am crazy about|'m hooked on|am hooked on)"
_DISLIKE_VERB = r"(?i:hate|hates|dislike|dislikes|can't stand|cannot stand|can not stand|can't bear|detest|detests|loathe|loathes|'m not a fan of|am not a fan of|'m not into|am not into|'m not big on|am not big on|is not a fan of|isn't a fan of)"
_NEG = r"(?i:don't|do not|doesn't|does not|didn't)"
_NO_LONGER = r"(?i:no longer|don't really|do not really)"
_ANYMORE = r"\s+(?i:anymore|any more|these days|nowadays)\b"

_RX_NO_LONGER_LIKE = [
    _rx(_SUBJ + _GAP + _ADV + _NEG + r"\s+(?:really\s+)?(?i:like|love|enjoy)\s+" + _OBJ + _ANYMORE),
    _rx(_SUBJ + _GAP + r"(?i:'m not|am not|isn't|is not)\s+(?:really\s+)?(?i:into|a fan of)\s+" + _OBJ + _ANYMORE),
    _rx(_SUBJ + r"\s+(?i:no longer)\s+(?i:like|likes|love|loves|enjoy|enjoys)\s+" + _OBJ),
    _rx(_SUBJ + _GAP + r"(?i:'m no longer|am no longer|is no longer)\s+(?i:into|a fan of)\s+" + _OBJ),
    _rx(_SUBJ + r"\s+(?i:used to)\s+(?i:like|love|enjoy|be into)\s+" + _OBJ),
    _rx(_SUBJ + _GAP + r"(?i:'ve |have |has )?(?i:stopped|quit) (?i:liking|loving|enjoying)\s+" + _OBJ),
    _rx(_SUBJ + _GAP + r"(?i:'ve |have |has )?(?i:fallen|fell) out of love with\s+" + _OBJ),
]
_RX_NO_LONGER_DISLIKE = [
    _rx(_SUBJ + _GAP + _ADV + _NEG + r"\s+(?i:hate|dislike|mind)\s+" + _OBJ + _ANYMORE),
]
_RX_DONT_LIKE = _rx(_SUBJ + _GAP + _NEG + r"\s+(?:really\s+)?(?i:like|enjoy|love)\s+" + _OBJ)
_RX_LIKE = _rx(_SUBJ + _GAP + _ADV + r"(?<!')" + _LIKE_VERB + r"\s+" + _OBJ)
_RX_DISLIKE = _rx(_SUBJ + _GAP + _ADV + _DISLIKE_VERB + r"\s+" + _OBJ)


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
        for value in _objects(m.group("obj")):
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
    _rx(r"\b(?i:my)\s+(?i:favou?rite)\s+(?P<noun>[a-z]+)\s+(?i:is|are|has to be|would be)\s+" + _OBJ),
    _rx(_OBJ + r"\s+(?i:is|are)\s+(?i:my)\s+(?i:favou?rite)\s+(?P<noun>[a-z]+)\b"),
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
            objects = _objects(raw, split=False)
            if not objects:
                continue
            attribute = s.params.favourite_nouns.get(noun, "likes")
            d = s.draft(attribute, objects[0], "en.favourite", detail="" if attribute != "likes" else noun)
            if d:
                out.append(d)
    return out


# --- quitting and switching ----------------------------------------------------------------------------------

_RX_QUIT = _rx(
    r"\bI" + _GAP + r"(?i:'ve |have )?" + _ADV + r"(?i:quit|gave up|given up|stopped|cut out|kicked)\s+"
    r"(?!(?i:by|at|in|to|for|the car|working|there)\b)(?:(?i:drinking|eating|having|doing|playing|watching|smoking)\s+)?" + _OBJ
)
_RX_DONT_ANYMORE = _rx(
    r"\bI" + _GAP + r"(?i:don't|do not)\s+(?i:drink|eat|do|play|watch)\s+" + _OBJ + _ANYMORE
)
_RX_SWITCH_FROM = _rx(r"\b(?i:switched|changed|swapped|went|moved over)\s+from\s+(?P<old>[^.,!?;]+?)\s+to\s+" + _OBJ)
_RX_SWITCH_TO = _rx(r"\b(?i:switched|swapped|moved over|changed over)\s+to\s+" + _OBJ)
_RX_INSTEAD = _rx(
    r"\bI" + _GAP + _ADV + r"(?i:drink|eat|have|'m drinking|am drinking|'m having)\s+(?P<new>[^.,!?;]+?)\s+"
    r"(?:(?i:now|these days|nowadays)\s+)?(?i:instead of)\s+" + _OBJ
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

    for rx in (_RX_QUIT, _RX_DONT_ANYMORE):
        for m in rx.finditer(text):
            before = text[: m.start()].lower()
            if re.search(r"\b(?:if|want to|going to|gonna|should|will|'ll|trying to|try to)\b", before + " " + m.group(0).lower()[:12]):
                continue
            raw = m.group("obj")
            job = re.match(r"\s*(?:my\s+)?job(?:\s+at\s+(?P<at>[^.,!?;]+))?", raw, re.I)
            if job:
                if job.group("at"):
                    for value in _objects(job.group("at"), _PLACE_CUT, split=False):
                        add("works_at", value, "negative")
                continue
            for value in _objects(re.split(r"\s+(?:and|for)\s+(?:switched|moved|changed|went)\b", raw)[0]):
                add("likes", value, "negative")
                add("habit", value, "negative")
            tail = re.search(r"\bfor\s+([^.,!?;]+)$", raw)
            if tail and m.re is _RX_QUIT:
                for value in _objects(tail.group(1), split=False):
                    switch_to(value)
    for m in _RX_SWITCH_FROM.finditer(text):
        if re.search(r"\bmoved\b", m.group(0), re.I):
            continue
        for value in _objects(m.group("old"), split=False):
            add("likes", value, "negative")
        for value in _objects(m.group("obj"), split=False):
            switch_to(value)
    if not _RX_SWITCH_FROM.search(text):
        for m in _RX_SWITCH_TO.finditer(text):
            for value in _objects(m.group("obj"), split=False):
                switch_to(value)
    for m in _RX_INSTEAD.finditer(text):
        for value in _objects(m.group("new"), split=False):
            switch_to(value)
        for value in _objects(m.group("obj"), split=False):
            add("likes", value, "negative")
    return out


# --- identity, places, work --------------------------------------------------------------------------------

_NAME = r"(?P<value>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)"
_RX_NAME = [
    _rx(r"\b(?i:my name is|my name's|i'm called|i am called|name's)\s+" + _NAME),
    _rx(r"\b(?i:you can call me|just call me|call me)\s+(?P<value>[A-Z][\w'-]*)"),
]
_RX_REL_NAME_IS = _rx(r"\b(?i:my|our)\s+(?P<rel>[a-z]+)'s\s+name\s+is\s+(?P<value>[A-Z][\w'-]*)")
_RX_LIVES = _rx(
    _SUBJ + _GAP + _ADV + r"(?i:live|lives|'m living|am living|is living|'ve been living|have been living|'m based|am based)\s+in\s+" + _OBJ
)
_RX_NOT_LIVES = _rx(_SUBJ + _GAP + r"(?i:don't|do not|doesn't|does not|no longer)\s+(?i:live|lives)\s+in\s+" + _OBJ)
_RX_MOVED = _rx(
    _SUBJ + _GAP + r"(?i:'ve |have |has )?" + _ADV + r"(?i:moved|relocated)\s+(?:(?i:from)\s+(?P<old>[^.,!?;]+?)\s+)?(?i:to)\s+" + _OBJ
)
_RX_FROM = _rx(
    r"\bI" + _GAP + r"(?:(?i:'m|am)\s+(?:(?i:originally)\s+)?(?i:from)|(?i:come from|was born in|was born and raised in|grew up in))\s+" + _OBJ
)
_RX_WORKS = _rx(
    _SUBJ + _GAP + _ADV + r"(?i:work|works|'m working|am working|'ve been working|have been working|started working|got a job|landed a job|started a new job|got a new job)\s+(?i:at|for)\s+" + _OBJ
)
_RX_JOB = _rx(_SUBJ + _GAP + _ADV + r"(?i:work|works|'m working|am working)\s+as\s+(?:an?\s+)?" + _OBJ)


def identity_and_places(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    text = s.text

    def add(m: re.Match[str], attribute: str, raw: str, pattern: str, polarity: str = "positive") -> None:
        subject = s.subject(m) if "subj" in m.re.groupindex else USER
        if subject is None or re.search(r"\b(?:if|would|wish|want to|going to)\b[^.]*$", text[: m.start()], re.I):
            return
        for value in _objects(raw, _PLACE_CUT, split=False, max_words=4):
            if value.lower() in s.params.context_words:
                continue  # "from work", "in school" are no places of the kind
            d = s.draft(attribute, value, pattern, subject=subject, polarity=polarity)
            if d:
                out.append(d)

    for rx in _RX_NAME:
        for m in rx.finditer(text):
            value = m.group("value")
            if value.split()[0].lower() in _PRONOUNS or value in _WEEK_MONTH or value.lower() in ("not", "so", "very"):
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
        if re.search(_ANYMORE, text[m.start():]) or "no longer" in m.group(0).lower():
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

_RX_REL_NAME = _rx(r"\b(?i:my|our)\s+(?P<rel>[a-z]+),?\s+(?P<value>[A-Z][a-z]+)(?![a-z'])")
_RX_HAVE_NAMED = _rx(
    r"\bI" + _GAP + r"(?i:have|'ve got|have got|had|got)\s+(?i:a|an|one)\s+(?P<rel>[a-z]+)\s+(?i:named|called)\s+(?P<value>[A-Z][a-z]+)"
)
_AGE_END = r"(?=\s*(?:[.!,]|$|now|today|this year|and|but|next|years? old))"
_RX_AGE_USER = [
    _rx(r"\bI(?:'m| am)\s+(?:now\s+)?(?P<n>\d{1,3})(?:\s+years?\s+old)?" + _AGE_END),
    _rx(r"\bI\s+(?:just\s+)?turned\s+(?P<n>\d{1,3})(?!\s*(?:minutes|hours|days|%|percent|degrees))\b"),
]
_RX_AGE_OTHER = [
    _rx(_SUBJ + r"\s*(?:is|'s|is now|just turned|turned)\s+(?P<n>\d{1,2})(?:\s+years?\s+old)?" + _AGE_END),
    _rx(_SUBJ + r"\s+is\s+(?:a|an)\s+(?P<n>\d{1,2})[- ]years?[- ]old\b"),
]
_RX_HAS = _rx(
    r"\bI" + _GAP + _ADV + r"(?i:have|own|'ve got|have got|got|bought|'ve bought|have bought)\s+"
    r"(?P<det>(?i:a|an|one|two|three|four|\d+|my first|my own)\s+)?(?P<new>(?i:new)\s+)?" + _OBJ
)
_RX_HAS_NOT = _rx(
    r"\bI" + _GAP + _ADV + r"(?:(?i:sold|got rid of|gave away)\s+(?:(?i:my|the|our)\s+)?" + _OBJ + r"|"
    r"(?i:don't|do not)\s+(?i:have|own)\s+(?:(?i:a|an|my)\s+)?(?P<obj2>[^.,!?;]+?)" + _ANYMORE + r")"
)


def people_and_pets(s: EnSentence) -> list[Draft]:
    out: list[Draft] = []
    for rx in (_RX_REL_NAME, _RX_HAVE_NAMED):
        for m in rx.finditer(s.text):
            rel, value = m.group("rel").lower(), m.group("value")
            attribute = s.params.relations.get(rel)
            if attribute is None or value in s.params.not_names or value in _WEEK_MONTH:
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
        for value in _objects(m.group("obj"), split=False, max_words=3):
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
        for value in _objects(raw, split=False, max_words=3):
            head = lemma(value.split()[-1])
            if head in s.params.possessions or value.lower() in s.params.possessions:
                d = s.draft("has", value, "en.has", polarity="negative")
                if d:
                    out.append(d)
    return out


# --- plans, dated events, habits ----------------------------------------------------------------------------

_RX_FUTURE = [
    _rx(r"\bI(?:'m| am)\s+gonna\s+(?P<vp>[^.,!?;]+)"),
    _rx(r"\bI(?:'ll| will)\s+(?P<vp>[^.,!?;]+)"),
    _rx(r"\bI\s+(?:plan|intend|have)\s+to\s+(?P<vp>[^.,!?;]+)"),
    _rx(r"\bI(?:'m| am)\s+(?:planning|hoping)\s+to\s+(?P<vp>[^.,!?;]+)"),
    _rx(r"\bI(?:'m| am)\s+(?P<vp>(?:going|flying|heading|visiting|meeting|seeing|travell?ing|driving|moving|starting|taking|having|getting|leaving|running|playing|attending|hosting|doing)\b[^.,!?;]*)"),
    _rx(r"\bI(?:'ve| have)\s+(?:got\s+)?(?P<vp>(?:a|an|my)\s+[^.,!?;]*?(?:appointment|meeting|interview|exam|test|date|party|concert|match|game|trip|flight|class|lesson|checkup|check-up)\b[^.,!?;]*)"),
]
_RX_PAST = _rx(r"\bI\s+(?:just\s+|finally\s+)?(?P<vp>(?P<verb>[a-z]+)\b[^.,!?;]*)")


def _clean_vp(vp: str, when: str) -> str:
    vp = vp.replace(when, " ") if when else vp
    vp = re.sub(r"\b(?:on|at|this|next|last|in)\s*$", "", vp.strip(), flags=re.I)
    vp = re.sub(r"\s+(?:on|at)\s+(?=(?:and|but|so)\b|$)", " ", vp)
    vp = _CUT.sub("", vp)
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
    if verb in _NOT_EVENTS or not (verb in _PAST_IRREGULAR or verb.endswith("ed")):
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
_RX_HABIT_AFTER = _rx(r"\bI\s+(?:(?i:usually|always|often|normally)\s+)?(?P<vp>[a-z][^.,!?;]*?)\s+" + _FREQ + r"\b")
_RX_HABIT_BEFORE = _rx(_FREQ + r",?\s+I\s+(?:(?i:usually|always|often|normally)\s+)?(?P<vp>[a-z][^.,!?;]*)")


def habits(s: EnSentence) -> list[Draft]:
    for rx in (_RX_HABIT_BEFORE, _RX_HABIT_AFTER):
        m = rx.search(s.text)
        if m is None:
            continue
        vp = _CUT.sub("", m.group("vp")).strip()
        first = vp.split()[0].lower() if vp else ""
        if (not vp or first in _PAST_IRREGULAR or first.endswith("ed") or first in _NOT_EVENTS
                or first in ("will", "would", "used", "don't", "do", "can't", "can", "should", "'ll", "was", "wish", "want", "need")
                or len(vp.split()) > 6):
            return []
        vp = re.sub(r"^(?:'m|am)\s+", "", vp)
        generic = re.match(r"(?:drink|have|eat|play|watch|smoke|do|drinking|having|eating|playing|watching|smoking)\s+(.+)$", vp, re.I)
        key = en_key(generic.group(1)) if generic else en_key(vp)
        d = s.draft("habit", vp, "en.habit", detail=m.group("freq").lower(), category="", value_key=key)
        return [d] if d else []
    return []


RULES: tuple[Callable[[EnSentence], list[Draft]], ...] = (
    people_and_pets, identity_and_places, likes, favourite, quits_and_switches, ages, possessions, plans, habits,
)


def extract_en(text: str, params: KnowledgeParams, registry: Registry, said_at: float) -> list[Draft]:
    """Drafts from one English sentence; a question or a reported statement yields none."""
    text = re.sub(r"[’‘]", "'", text)
    text = re.sub(r"\bi(?=(?:'m|'ve|'ll|'d|\s))", "I", text)
    if "?" in text or re.match(r"\s*(?:do|does|did|are|is|can|could|would|will|what|who|where|when|why|how)\b", text, re.I):
        return []
    if re.search(r"\b(?:said|says|told me|thinks|heard)\b", text, re.I):
        return []
    s = EnSentence(text, params, registry, said_at, params.zone())
    drafts: list[Draft] = []
    for rule in RULES:
        drafts.extend(rule(s))
    return drafts
