"""The seeded generator of the fact-update stories (``bench.knowledge_data`` describes them and their gold).

A story is drafted as beats — a user line with what it asserts, negates or only mentions (a distractor), led in
by a character prompt sometimes and answered by the character — placed in dated sessions by scenarios: a primary
one chosen by the story's index (``PRIMARY``; the first story of each language is coffee → tea), often a
secondary one on another attribute, one or two background facts, and one or two distractors. Small talk, greetings
and goodbyes are added around them. The gold is then replayed from what was said, in order, so it always agrees
with the turns; the questions are answered from that gold. Each story has its own random stream
(``random.Random(f"{seed}:{language}:{index}")``), so a set of n stories is the first n of any larger set.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Literal

from bench import knowledge_phrases as phrases
from bench.knowledge_phrases import Entry
from bench.knowledge_records import (
    ATTRIBUTES, CHARACTERS, LANGUAGES, MANY, ONE, Distractor, Fact, Story, StoryQuestion, StorySession, StoryTurn,
    SupersededFact,
)

DEFAULT_SEED = 18
DEFAULT_PER_LANGUAGE = 48
TURN_GAP_SECONDS = 30.0  # as bench.locomo_data.load spaces a session's turns


@dataclass
class _Event:
    op: Literal["assert", "negate", "distract"]
    attribute: str
    value: str
    aliases: tuple[str, ...] = ()
    subject: str = "user"
    kind: str = ""


@dataclass
class _Line:
    speaker: str
    text: str
    events: list[_Event] = field(default_factory=list)


@dataclass
class _Beat:
    lines: list[_Line]
    opening: bool = False  # an introduction, said before anything else in its session


@dataclass
class _Ask:
    form: Literal["current", "past", "list", "still"]
    attribute: str
    entry: Entry | None = None


_FACT_REPLIES = {"dislikes": "dislike", "visited": "travel", "plan": "plan", "pet": "pet", "pet_age": "pet",
                 "name": "noted", "from": "noted", "lives_in": "noted", "works_at": "noted", "sibling": "noted"}


def _reply_mode(attribute: str, mode: str) -> str:
    """How the character answers: to the change or the restatement itself, else to what kind of fact it was."""
    if mode in ("change", "implicit", "restate"):
        return {"implicit": "change"}.get(mode, mode)
    if attribute == "habit":
        return "quit" if mode == "negate" else "state"
    return _FACT_REPLIES.get(attribute, mode)


class _Draft:
    """One story being written: its random stream, sessions' dates, beats per session and questions to ask."""

    def __init__(self, language: str, index: int, seed: int, half: str | None = None) -> None:
        self.rng = random.Random(f"{seed}:{language}:{index}")
        self.language = language
        self.half = half  # None: every user line; "a"/"b": one half of each list (phrases.user_lines)
        self.story_id = f"{language}-{index:03d}"
        self.character = self.rng.choice(CHARACTERS)
        self.character_name = phrases.CHARACTER_NAMES[language][self.character]
        self.used: list[str] = [n.lower() for names in phrases.CHARACTER_NAMES.values() for n in names.values()]
        self.user_name = self._choose(phrases.USER_NAMES[language])
        self.dates: list[datetime] = []
        self.beats: list[list[_Beat]] = []
        self.asks: list[_Ask] = []
        self.scenarios: list[str] = []
        self.attributes: set[str] = set()
        self.sibling: tuple[str, str, str] | None = None  # (word said, subject code, name)
        self.pet: tuple[str, str] | None = None  # (kind, name)
        self._last_reply = ""

    @property
    def sessions(self) -> int:
        return len(self.dates)

    def set_dates(self, count: int, gap_days: tuple[int, int]) -> None:
        day = datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(days=self.rng.randrange(365))
        for i in range(count):
            if i:
                day += timedelta(days=self.rng.randint(*gap_days))
            self.dates.append(day.replace(hour=self.rng.randint(18, 23), minute=self.rng.randrange(0, 60, 5)))
        self.beats = [[] for _ in self.dates]

    def _clashes(self, value: str) -> bool:
        # No value may contain another one of the story ("tea" in "green tea"), so a value found in a turn
        # names one fact only.
        low = value.lower()
        return any(low in used or used in low for used in self.used)

    def _choose(self, values: Sequence[str]) -> str:
        value = self.rng.choice([v for v in values if not self._clashes(v)])
        self.used.append(value.lower())
        return value

    def pick(self, pool: str, wanted: str | None = None) -> Entry:
        entries = [e for e in phrases.POOLS[self.language][pool] if not self._clashes(e.value)]
        entry = next(e for e in entries if e.value == wanted) if wanted else self.rng.choice(entries)
        self.used.append(entry.value.lower())
        return entry

    def get_sibling(self) -> tuple[str, str, str]:
        if self.sibling is None:
            word, code, names = self.rng.choice(phrases.SIBLINGS[self.language])
            self.sibling = (word, code, self._choose(names))
        return self.sibling

    def reply(self, mode: str) -> _Line:
        options = phrases.REPLIES[self.language][self.character][mode]
        fresh = [o for o in options if o != self._last_reply] or options  # not the same words twice in a row
        self._last_reply = self.rng.choice(fresh)
        return _Line(self.character, self._last_reply)

    def say(self, session: int, attribute: str, mode: str, entry: Entry, *, old: Entry | None = None,
            prompt: str | None = None, events: list[_Event] | None = None, reply: str | None = None,
            opening: bool = False, **fmt: str) -> None:
        """A user line stating ``entry`` for ``attribute`` (led in by a character prompt if asked), and a reply."""
        lines = []
        if prompt:
            lines.append(_Line(self.character, self.rng.choice(phrases.PROMPTS[self.language][prompt][self.character])))
        templates = phrases.user_lines(self.language, attribute, mode, self.half)
        # one draw of fixed size whatever the half's length, so both halves tell the same story
        template = (self.rng.choice(templates) if self.half is None
                    else templates[int(self.rng.random() * len(templates))])
        text = template.format(v=entry.said, old=old.said if old else "", char=self.character_name, **fmt)
        op = "negate" if mode == "negate" else "assert"
        lines.append(_Line("user", text, events or [_Event(op, attribute, entry.value, entry.aliases)]))
        lines.append(self.reply(reply or _reply_mode(attribute, mode)))
        self.beats[session].append(_Beat(lines, opening))

    def maybe_prompt(self, attribute: str, chance: float = 0.4) -> str | None:
        known = attribute in phrases.PROMPTS[self.language]
        return attribute if known and self.rng.random() < chance else None

    def ask(self, form: str, attribute: str, entry: Entry | None = None) -> None:
        self.asks.append(_Ask(form, attribute, entry))


def _supersede(d: _Draft, attribute: str, wanted: Sequence[str] = ()) -> None:
    if attribute == "pet_age":
        return _pet_years(d)
    count = len(wanted) or (3 if d.sessions >= 4 and d.rng.random() < 0.3 else 2)
    sessions = sorted(d.rng.sample(range(d.sessions), count))
    entries = [d.pick(attribute, wanted[i] if i < len(wanted) else None) for i in range(count)]
    for i, (session, entry) in enumerate(zip(sessions, entries)):
        if i == 0:
            d.say(session, attribute, "state", entry, prompt=d.maybe_prompt(attribute))
        else:
            mode = "change" if d.rng.random() < 0.7 else "implicit"
            d.say(session, attribute, mode, entry, old=entries[i - 1], prompt=d.maybe_prompt("news", 0.3))
        between = range(session + 1, sessions[i + 1]) if i + 1 < count else range(0)
        if between and d.rng.random() < 0.35:  # said again before it changes: a merge inside a supersede
            d.say(d.rng.choice(between), attribute, "restate", entry)
    d.attributes.add(attribute)
    d.scenarios.append(f"supersede:{attribute}")
    d.ask("current", attribute)
    d.ask("past", attribute)


def _pet_years(d: _Draft) -> None:
    """A pet's age said at the first session and again at each session where a birthday has passed."""
    kind, pet = d.rng.choice(phrases.PET_KINDS[d.language][:3]), d.pick("pet")  # no ten-year-old hamsters
    d.pet = (kind, pet.value)
    age, since_birthday = d.rng.randint(1, 8), d.rng.randrange(365)
    events = [_Event("assert", "pet", pet.value), _Event("assert", "pet_age", str(age))]
    d.say(0, "pet_age", "state", Entry(str(age)), events=events, kind=kind, pet=pet.value)
    said = age
    for session in range(1, d.sessions):
        now = age + (since_birthday + (d.dates[session] - d.dates[0]).days) // 365
        if now > said:
            events = [_Event("assert", "pet", pet.value), _Event("assert", "pet_age", str(now))]  # names the pet again
            d.say(session, "pet_age", "change", Entry(str(now)), events=events, reply="celebrate", kind=kind, pet=pet.value)
            said = now
    assert said > age, "a pet story spans at least one birthday"
    d.attributes.update(("pet", "pet_age"))
    d.scenarios.append("supersede:pet_age")
    d.ask("current", "pet_age")
    d.ask("past", "pet_age")


def _accumulate(d: _Draft, attribute: str, count: int | None = None) -> None:
    count = count or d.rng.randint(3, 4)
    sessions = sorted(d.rng.sample(range(d.sessions), 2) + d.rng.choices(range(d.sessions), k=count - 2))
    has_more = "more" in phrases.USER_LINES[d.language][attribute]
    for i, session in enumerate(sessions):
        entry = d.pick(attribute)
        if i == 0:
            d.say(session, attribute, "state", entry, prompt=d.maybe_prompt(attribute))
        else:
            d.say(session, attribute, "more" if has_more else "state", entry)
    d.attributes.add(attribute)
    d.scenarios.append(f"accumulate:{attribute}")
    d.ask("list", attribute)


def _negate(d: _Draft, attribute: str) -> None:
    first = d.rng.randrange(d.sessions - 1)
    ended = d.rng.randrange(first + 1, d.sessions)
    gone = d.pick(attribute)
    d.say(first, attribute, "state", gone, prompt=d.maybe_prompt(attribute))
    if attribute == "likes":  # another like that must survive the negation
        kept, session = d.pick(attribute), d.rng.randrange(d.sessions)
        d.say(session, attribute, "more" if session >= first else "state", kept)
    d.say(ended, attribute, "negate", gone)
    if attribute == "habit" and d.rng.random() < 0.6:  # a new habit after the old one stopped
        d.say(d.rng.randrange(ended, d.sessions), attribute, "state", d.pick(attribute))
    d.attributes.add(attribute)
    d.scenarios.append(f"negate:{attribute}")
    d.ask("list", attribute)
    d.ask("still", attribute, gone)
    d.ask("past", attribute)


def _merge(d: _Draft, attribute: str | None = None) -> None:
    attribute = attribute or d.rng.choice([a for a in ("likes", "lives_in", "drink", "works_at") if a not in d.attributes])
    first = d.rng.randrange(d.sessions - 1)
    again = d.rng.randrange(first + 1, d.sessions)
    entry = d.pick(attribute)
    d.say(first, attribute, "state", entry, prompt=d.maybe_prompt(attribute))
    d.say(again, attribute, "restate", entry)
    if again + 1 < d.sessions and d.rng.random() < 0.3:
        d.say(d.rng.randrange(again + 1, d.sessions), attribute, "restate", entry)
    if attribute == "likes" and d.rng.random() < 0.5:
        d.say(d.rng.randrange(first, d.sessions), attribute, "more", d.pick(attribute))
    d.attributes.add(attribute)
    d.scenarios.append(f"merge:{attribute}")
    d.ask("list" if ATTRIBUTES[attribute] == MANY else "current", attribute)


def _distract(d: _Draft, line: phrases.DistractorLine) -> None:
    """One distractor beat in a random session: the value picked from the attribute's pool."""
    entry = d.pick(line.attribute)
    fmt = {"v": entry.said, "char": d.character_name}
    events: list[_Event] = []
    subject = {"character": d.character}.get(line.subject, line.subject)
    if line.subject == "sibling":
        word, subject, name = d.get_sibling()
        fmt.update(rel=word, sib=name)
        events.append(_Event("assert", "sibling", name))  # 「妹の美咲が…」 does tell the user has a sister
    events.append(_Event("distract", line.attribute, entry.value, subject=subject, kind=line.kind))
    lines = [_Line("user", line.text.format(**fmt), events)]
    if line.kind == "question" and line.subject == "character":
        taste = d.pick(line.attribute)
        said = d.rng.choice(phrases.CHARACTER_TASTES[d.language][d.character]).format(v=taste.said)
        lines.append(_Line(d.character, said, [_Event("distract", line.attribute, taste.value, subject=d.character,
                                                      kind="character")]))
        lines.append(_Line("user", d.rng.choice(phrases.REACTIONS[d.language])))
    else:
        lines.append(d.reply("ponder" if line.kind == "question" else "aside"))
    d.beats[d.rng.randrange(d.sessions)].append(_Beat(lines))


def _distractors(d: _Draft, count: int) -> None:
    """``count`` distractors of different kinds, each kind as likely as the others."""
    lines = phrases.DISTRACTORS[d.language]
    kinds = sorted({line.kind for line in lines})
    for kind in d.rng.sample(kinds, count):
        _distract(d, d.rng.choice([line for line in lines if line.kind == kind]))


def _distractor_focus(d: _Draft) -> None:
    """True facts next to distractors about the same attributes: where she lives, what she likes."""
    d.say(d.rng.randrange(d.sessions), "lives_in", "state", d.pick("lives_in"), prompt=d.maybe_prompt("lives_in"))
    d.say(d.rng.randrange(d.sessions), "likes", "state", d.pick("likes"), prompt=d.maybe_prompt("likes"))
    lines = phrases.DISTRACTORS[d.language]
    about_home = [line for line in lines if line.attribute == "lives_in"]
    chosen = d.rng.sample(about_home, 2)
    chosen.append(d.rng.choice([line for line in lines if line.attribute != "lives_in"]))
    for line in chosen:
        _distract(d, line)
    d.attributes.update(("lives_in", "likes"))
    d.scenarios.append("distractors")
    d.ask("current", "lives_in")
    d.ask("list", "likes")


def _background(d: _Draft) -> None:
    """One or two facts that do not change: a name, a hometown, a pet, dislikes, a sibling, a plan."""
    options = [o for o in ("name", "from", "pet", "dislikes", "sibling", "plan") if o not in d.attributes]
    for what in d.rng.sample(options, d.rng.randint(1, 2)):
        d.attributes.add(what)
        if what == "dislikes":  # an accumulating kind of its own
            _accumulate(d, "dislikes", d.rng.randint(2, 3))
            continue
        d.scenarios.append(f"background:{what}")
        if what == "name":
            d.say(0, "name", "state", Entry(d.user_name), opening=True)
            d.ask("current", "name")
        elif what == "from":
            d.say(d.rng.randrange(d.sessions), "from", "state", d.pick("from"))
            d.ask("current", "from")
        elif what == "pet":
            kind, pet = d.rng.choice(phrases.PET_KINDS[d.language]), d.pick("pet")
            d.pet = (kind, pet.value)
            d.say(d.rng.randrange(d.sessions), "pet", "state", pet, kind=kind)
            d.ask("list", "pet")
        elif what == "sibling":
            word, _, name = d.get_sibling()
            d.say(d.rng.randrange(d.sessions), "sibling", "state", Entry(name), rel=word)
        else:
            when = d.dates[-1] + timedelta(days=d.rng.randint(10, 60))
            said = f"{when.month}月{when.day}日" if d.language == "ja" else f"{when.day} {phrases.MONTHS_EN[when.month - 1]}"
            d.say(d.sessions - 1, "plan", "state", d.pick("plan"), date=said)
            d.ask("list", "plan")


# The first story of each language is the issue's own example, coffee → tea.
_CANONICAL = {"ja": ("コーヒー", "紅茶"), "en": ("coffee", "tea")}
PRIMARY: list[tuple[str, str | None]] = [
    ("supersede", "drink"), ("accumulate", "likes"), ("supersede", "lives_in"), ("negate", "likes"), ("merge", None),
    ("supersede", "pet_age"), ("supersede", "works_at"), ("accumulate", "visited"), ("distractors", None),
    ("supersede", "food"), ("negate", "habit"), ("supersede", "film"),
]
SECONDARY: list[tuple[str, str]] = [
    *(("supersede", a) for a in ("drink", "food", "film", "lives_in", "works_at")),
    *(("accumulate", a) for a in ("likes", "visited", "habit")),
    ("negate", "likes"), ("negate", "habit"), ("merge", "likes"), ("merge", "lives_in"), ("merge", "drink"),
]


def _run(d: _Draft, kind: str, attribute: str | None, wanted: Sequence[str] = ()) -> None:
    if kind == "supersede":
        _supersede(d, attribute, wanted)
    elif kind == "accumulate":
        _accumulate(d, attribute)
    elif kind == "negate":
        _negate(d, attribute)
    elif kind == "merge":
        _merge(d, attribute)
    else:
        _distractor_focus(d)


def build_story(language: str, index: int, seed: int = DEFAULT_SEED, half: str | None = None) -> Story:
    """Story ``index`` of ``language``: the same arguments always give the same story. ``half`` ("a" or "b")
    draws the user's lines from that half of the templates only; the story's plot is the same either way."""
    d = _Draft(language, index, seed, half)
    kind, attribute = PRIMARY[index % len(PRIMARY)]
    if attribute == "pet_age":
        d.set_dates(5, (120, 200))  # four gaps of at least 120 days: at least one birthday
    else:
        d.set_dates(d.rng.randint(3, 5), (5, 45))
    _run(d, kind, attribute, _CANONICAL[language] if index == 0 else ())
    if d.rng.random() < 0.85:
        choices = [(k, a) for k, a in SECONDARY if a not in d.attributes]
        _run(d, *d.rng.choice(choices))
    _background(d)
    if kind != "distractors":
        _distractors(d, d.rng.randint(1, 2))
    return _finish(d)


def generate(per_language: int = DEFAULT_PER_LANGUAGE, seed: int = DEFAULT_SEED,
             languages: Sequence[str] = LANGUAGES, half: str | None = None) -> list[Story]:
    """``per_language`` stories of each language; the first n of a larger set are the same as a set of n."""
    return [build_story(language, i, seed, half) for language in languages for i in range(per_language)]


def _render(d: _Draft) -> tuple[list[StorySession], list[tuple[StoryTurn, list[_Event]]]]:
    lang, char = d.language, d.character
    sessions, said = [], []
    for i, at in enumerate(d.dates):
        gap = "first" if i == 0 else "long" if (at - d.dates[i - 1]).days > 20 else "short"
        opener = d.rng.choice(phrases.OPENERS[lang][gap]).format(char=d.character_name)
        greeting = d.rng.choice(phrases.GREETINGS[lang][char][gap])
        beats = sorted(d.beats[i], key=lambda beat: not beat.opening)  # stable: introductions first
        items = [beat.lines for beat in beats]
        openings = sum(beat.opening for beat in beats)
        for user, replies in d.rng.sample(phrases.FILLERS[lang], d.rng.randint(0 if items else 1, 2)):
            items.insert(d.rng.randint(openings, len(items)), [_Line("user", user), _Line(char, replies[char])])
        lines = [_Line("user", opener), _Line(char, greeting)] + [line for item in items for line in item]
        if d.rng.random() < 0.8:
            lines += [_Line("user", d.rng.choice(phrases.CLOSINGS[lang]["user"])),
                      _Line(char, d.rng.choice(phrases.CLOSINGS[lang][char]))]
        turns = []
        for n, line in enumerate(lines):
            turn = StoryTurn(turn_id=f"D{i + 1}:{n + 1}", speaker=line.speaker, text=line.text,
                             at=at + timedelta(seconds=n * TURN_GAP_SECONDS))
            turns.append(turn)
            said.append((turn, line.events))
        sessions.append(StorySession(number=i + 1, at=at, turns=turns))
    return sessions, said


def _replay(said: Iterable[tuple[StoryTurn, list[_Event]]]) -> tuple[list[Fact], list[SupersededFact], list[Distractor]]:
    """The gold at the end of the story, from what was said in order: one-valued attributes supersede,
    many-valued ones accumulate, a negation ends its value, the same value again is a merge."""
    current: list[Fact] = []
    ended: list[SupersededFact] = []
    distractors: list[Distractor] = []
    for turn, events in said:
        for e in events:
            if e.op == "distract":
                distractors.append(Distractor(subject=e.subject, attribute=e.attribute, value=e.value,
                                              turn_id=turn.turn_id, kind=e.kind))
                continue
            same = [f for f in current if f.attribute == e.attribute and f.value == e.value]
            if e.op == "negate":
                assert same, f"negating {e.value!r} that is not current"
                current.remove(same[0])
                ended.append(SupersededFact(**same[0].model_dump(), valid_to=turn.at, ended_by=turn.turn_id,
                                            superseded_by=None, how="negate"))
            elif same:
                if turn.turn_id not in same[0].evidence:
                    same[0].evidence.append(turn.turn_id)
            else:
                if ATTRIBUTES[e.attribute] == ONE:
                    for old in [f for f in current if f.attribute == e.attribute]:
                        current.remove(old)
                        ended.append(SupersededFact(**old.model_dump(), valid_to=turn.at, ended_by=turn.turn_id,
                                                    superseded_by=e.value, how="supersede"))
                current.append(Fact(attribute=e.attribute, value=e.value, aliases=list(e.aliases),
                                    evidence=[turn.turn_id], valid_from=turn.at))
    return current, ended, distractors


def _question(d: _Draft, ask: _Ask, current: list[Fact], ended: list[SupersededFact]) -> StoryQuestion | None:
    template = phrases.QUESTIONS[d.language][ask.attribute][ask.form]
    text = template.format(pet=d.pet[1] if d.pet else "", v=ask.entry.said if ask.entry else "")
    tense = "past" if ask.form == "past" else "current"
    if ask.form in ("current", "list"):
        facts = sorted((f for f in current if f.attribute == ask.attribute), key=lambda f: f.valid_from)
        if not facts:
            return None
        answer = phrases.LIST_SEPARATOR[d.language].join(f.value for f in facts)
        evidence = list(dict.fromkeys(t for f in facts for t in f.evidence))
    elif ask.form == "past":
        before = [f for f in ended if f.attribute == ask.attribute]
        if not before:
            return None
        last = max(before, key=lambda f: f.valid_to)
        answer, evidence = last.value, list(last.evidence)
    else:
        gone = next(f for f in ended if f.attribute == ask.attribute and f.value == ask.entry.value)
        answer, evidence = phrases.NO[d.language], [gone.ended_by]
    category = 2 if tense == "past" else 1 if len(evidence) > 1 else 4
    return StoryQuestion(question=text, answer=answer, tense=tense, attribute=ask.attribute, evidence=evidence,
                         category=category)


def _finish(d: _Draft) -> Story:
    sessions, said = _render(d)
    current, ended, distractors = _replay(said)
    questions: dict[str, StoryQuestion] = {}
    for ask in d.asks:
        question = _question(d, ask, current, ended)
        if question and question.question not in questions:
            questions[question.question] = question
    accumulating = [f for f in current if ATTRIBUTES[f.attribute] == MANY]
    return Story(story_id=d.story_id, language=d.language, character=d.character, character_name=d.character_name,
                 user_name=d.user_name, scenarios=d.scenarios, sessions=sessions, current_facts=current,
                 superseded_facts=ended, accumulating_facts=accumulating, distractors=distractors,
                 questions=list(questions.values()))
