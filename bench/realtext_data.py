"""A development set written from real long text (issue 46): user ↔ assistant conversations over months whose
assistant replies are real technical writing shipped inside installed packages, in LoCoMo's JSON format, so that
``python -m bench.locomo --data FILE`` and ``python -m bench.realtext`` read it unchanged.

- Assistant replies: Python's own reference (``pydoc_data.topics``) and docstrings of the standard library and
  installed libraries (bench.realtext_sources), kept as shipped: one to three texts a reply (a few of one library),
  hundreds to thousands of words, many with code.
- User turns: a request for an explanation of what the reply covers, often with a statement about the user's
  project: a fact (bench.longreply_data's kinds of fact and values), a change of it (some change twice), a
  correction that contradicts what the user said before, a preference, a standing instruction; some user turns
  first paste a stretch of real text, name a fact without its value, or give another value of the same kind said
  of someone else's project (never a value this conversation states).
- Sessions: 14–20 (DEFAULT) of 3–5 exchanges, 2–12 days apart: a conversation spans two to five months.
- Questions, each with message-level evidence (dia_ids) and ``kind`` (the issue's categories; ``category`` is the
  LoCoMo number it is scored under, bench.realtext_phrases.KIND_CATEGORY): extraction (a word inside a long reply,
  asked as a cloze of its passage), knowledge_update (the latest statement wins), contradiction (both statements),
  multi_session (facts from two sessions), summarisation (a value's whole history; the current state of three),
  event_ordering (which was said first; three in order), temporal (on what date; how many days between),
  preference, instruction. ``answer_in`` says where the answer is: ``turns`` (its parts are in the evidence turns'
  text) or ``dates`` (worked out from the evidence sessions' dates).
- Languages: ``en``, and ``ja`` with Japanese user turns and questions. No installed package, nor any checked on
  the package index, ships Japanese technical writing of reply length (the Japanese docstrings of jaconv, janome and
  jpholiday hold about 4,700 CJK characters in all), so the Japanese set's replies are the same English real text:
  each ``ja`` sample says so (``reply_language: "en"``).
- Split: every third conversation of each language (index 2, 5, 8 …) is ``split: "report"`` (held out: report
  only, never tuned on); the others are ``"dev"``.

- Long histories: ``--pad N`` appends to every session N times its own exchanges of filler (requests for an
  explanation of a real text not among the conversation's own replies; texts reused once those run out), after its
  own turns: the same dia_ids, statements, dates and questions in a history N+1 times as long. ``--pad 13`` makes
  realtext-en-05 1,736 turns, ~960k tokens.

    python -m bench.realtext_data --out /tmp/realtext.json [--per-language 9] [--seed 46] [--split dev|report|all]
        [--pad N] [--languages en,ja] [--only realtext-en-05]

A seed gives the same file byte for byte on a machine with the same package versions (each sample lists its
texts' names in ``sources``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bench import realtext_phrases as ph
from bench.longreply_data import SLOTS, locomo_when
from bench.realtext_questions import questions
from bench.realtext_sources import Source, pool

DEFAULT_PER_LANGUAGE = 9
DEFAULT_SEED = 46
LANGUAGES = ("en", "ja")
ASSISTANT = "Assistant"
USERS = {"en": ("Maya", "Liam", "Priya", "Jonah", "Elena", "Sam", "Noor", "Oskar", "Dana"),
         "ja": ("健二", "美咲", "拓也", "由美", "翔太", "彩", "直樹", "香織", "大輔")}
FACT_SLOTS = tuple(k for k in SLOTS if k != "deadline")  # "deadline" needs a project's deadline name


@dataclass(frozen=True)
class Size:
    sessions: tuple[int, int]
    exchanges: tuple[int, int]
    texts_per_reply: int  # at most this many real texts in one reply
    changed_twice: int  # facts stated, changed, changed again
    changed_once: int
    plain: int  # facts stated once
    extraction: int  # cloze questions
    pairs: int  # multi_session questions
    orderings: int
    temporal: int
    paste_share: float = 0.35  # user turns that paste real text first
    mention_share: float = 0.3  # user turns that name a fact without its value
    lookalike_share: float = 0.2  # user turns that give another value of a fact's kind, not this project's


DEFAULT = Size((14, 20), (3, 5), 3, 2, 1, 4, 10, 3, 3, 3)
TINY = Size((4, 5), (2, 3), 2, 1, 1, 3, 3, 1, 2, 2)
SIZES = {"default": DEFAULT, "tiny": TINY}


@dataclass
class Statement:
    """Something the user says about the project: ``kind`` state/update/contradict/prefer/instruct."""

    kind: str
    session: int
    slot: str = ""
    value: str = ""
    old: str = ""
    item: int = -1  # index into PREFERENCES / INSTRUCTIONS
    dia_id: str = ""


def _values(slot: str, language: str) -> tuple[str, ...]:
    values = SLOTS[slot].values
    return values[language] if isinstance(values, dict) else values


def _noun(slot: str, language: str) -> str:
    return SLOTS[slot].noun[language]


def _statements(rng: random.Random, language: str, sessions: int, size: Size) -> list[Statement]:
    slots = list(FACT_SLOTS)
    rng.shuffle(slots)
    out: list[Statement] = []

    def chain(slot: str, count: int, kinds: tuple[str, ...]) -> None:
        values = rng.sample(_values(slot, language), count)
        at = sorted(rng.sample(range(sessions), count))
        for i, (kind, value, session) in enumerate(zip(kinds, values, at)):
            out.append(Statement(kind, session, slot, value, values[i - 1] if i else ""))

    for _ in range(size.changed_twice):
        chain(slots.pop(), 3, ("state", "update", "update"))
    for _ in range(size.changed_once):
        chain(slots.pop(), 2, ("state", "update"))
    chain(slots.pop(), 2, ("state", "contradict"))
    for _ in range(size.plain):
        slot = slots.pop()
        out.append(Statement("state", rng.randrange(sessions), slot, rng.choice(_values(slot, language))))
    for kind, table in (("prefer", ph.PREFERENCES), ("instruct", ph.INSTRUCTIONS)):
        for item in rng.sample(range(len(table[language])), 2):
            out.append(Statement(kind, rng.randrange(sessions), item=item))
    return out


def _say(rng: random.Random, s: Statement, language: str) -> str:
    if s.kind == "prefer":
        return ph.PREFERENCES[language][s.item][0]
    if s.kind == "instruct":
        return ph.INSTRUCTIONS[language][s.item][0]
    table = {"state": ph.STATE, "update": ph.UPDATE, "contradict": ph.CONTRADICT}[s.kind]
    return ph.fill(rng.choice(table[language]), noun=_noun(s.slot, language), value=s.value, old=s.old)


def _paste(rng: random.Random, language: str, size: Size, texts: list[Source] | None = None) -> str:
    """Now and then a user pastes a stretch of real text (80–300 words, whole lines; from ``texts``, by default the
    whole pool) before saying anything."""
    if rng.random() >= size.paste_share:
        return ""
    text = rng.choice(texts or pool()).text.splitlines()
    start = rng.randrange(len(text))
    taken: list[str] = []
    words = rng.randint(80, 300)
    for line in text[start:]:
        taken.append(line)
        if len(" ".join(taken).split()) >= words:
            break
    return ph.fill(rng.choice(ph.PASTE[language]), text="\n".join(taken).strip()).strip()


def _aside(rng: random.Random, language: str, statements: list[Statement], size: Size) -> str:
    """A fact's noun without its value, or another value of that kind said of someone else's project: the words a
    question about the fact shares with turns that do not answer it. Never a value this conversation states."""
    facts = [s for s in statements if s.slot]
    roll = rng.random()
    if not facts or roll >= size.mention_share + size.lookalike_share:
        return ""
    slot = rng.choice(facts).slot
    noun = _noun(slot, language)
    if roll < size.mention_share:
        return ph.fill(rng.choice(ph.MENTION[language]), noun=noun, noun_cap=noun[:1].upper() + noun[1:])
    stated = {s.value for s in facts} | {s.old for s in facts}
    others = [v for v in _values(slot, language) if v not in stated]
    return ph.fill(rng.choice(ph.LOOKALIKE[language]), noun=noun, value=rng.choice(others)) if others else ""


def _group(source: Source) -> str:
    """Texts of one library (or Python's reference) go together in a reply."""
    return source.name.split(":")[0] + ":" + source.name.split(":")[1].split(".")[0]


def _replies(rng: random.Random, count: int, size: Size) -> list[list[Source]]:
    texts = list(pool())
    rng.shuffle(texts)
    used: set[str] = set()
    out = []
    for main in texts:
        if len(out) == count:
            break
        if main.name in used:
            continue
        used.add(main.name)
        parts = [main]
        more = rng.randint(0, size.texts_per_reply - 1)
        for other in texts:
            if len(parts) > more:
                break
            if other.name not in used and _group(other) == _group(main):
                used.add(other.name)
                parts.append(other)
        out.append(parts)
    return out


def _reply_text(parts: list[Source]) -> str:
    if len(parts) == 1:
        return parts[0].text
    return "\n\n".join(f"### {p.title}\n\n{p.text}" for p in parts)


def _filler_texts(reply_of: list[tuple[str, list[Source]]]) -> list[Source]:
    """The texts filler may use: the pool less every text of the conversation's own replies, so a passage that a
    question (generated, or written later for these turns) quotes from a reply stays the only copy of it."""
    held = {p.name for _, parts in reply_of for p in parts}
    return [t for t in pool() if t.name not in held]


def _pad(rng: random.Random, language: str, conv: dict, statements: list[Statement], texts: list[Source],
         pad: int, size: Size) -> list[str]:
    """Append to each session ``pad`` times its own exchanges of filler: the user asks for an explanation of a
    real text (sometimes after a paste, a mention or a look-alike aside, never a statement of a fact), the
    assistant replies with it. The session's own turns keep their dia_ids and text. Texts are drawn without
    replacement from ``texts`` and drawn again, in a new order and grouping, once all are used: a long padded
    conversation repeats replies. Returns the names of the texts used."""
    if not texts:
        raise ValueError("no texts left for filler: every text of the pool is one of the conversation's replies")
    user, used_names = conv["speaker_a"], []
    queue: list[Source] = []
    sessions = sorted((int(k.split("_")[1]), v) for k, v in conv.items()
                      if k.startswith("session_") and isinstance(v, list))
    for _, turns in sessions:
        for _ in range(pad * (len(turns) // 2)):
            while len(queue) <= size.texts_per_reply:
                more = list(texts)
                rng.shuffle(more)
                queue += more
            parts = [queue.pop(0)]
            # Up to one text more than a conversation's own replies: the texts left for filler are shorter ones,
            # and a padded default conversation of ~1,700 turns then holds about a million tokens, as real ones do.
            for _ in range(rng.randint(0, size.texts_per_reply)):  # of one library when the queue has one
                same = next((i for i, t in enumerate(queue) if _group(t) == _group(parts[0])), 0)
                parts.append(queue.pop(same))
            used_names += [p.name for p in parts]
            lines = [rng.choice(ph.GREETING[language]), _paste(rng, language, size, texts),
                     _aside(rng, language, statements, size), ph.fill(rng.choice(ph.ASK[language]),
                                                                      title=parts[0].title)]
            sep = "" if language == "ja" else " "
            turns.append({"speaker": user, "dia_id": f"{turns[-1]['dia_id'].split(':')[0]}:{len(turns) + 1}",
                          "text": sep.join(x for x in lines if x)})
            turns.append({"speaker": ASSISTANT, "dia_id": f"{turns[-1]['dia_id'].split(':')[0]}:{len(turns) + 1}",
                          "text": _reply_text(parts)})
    return used_names


def build_conversation(language: str, index: int, seed: int = DEFAULT_SEED, size: Size = DEFAULT,
                       pad: int = 0) -> dict:
    """One LoCoMo sample with ``language``, ``split``, ``reply_language``, ``sources``, ``conversation``, ``qa``.
    ``pad`` > 0 appends filler exchanges to every session (``_pad``) after the questions are made: the sample is
    the unpadded one plus those turns, ``pad`` and ``filler_sources`` (a long history of the same questions)."""
    rng = random.Random(f"realtext/{seed}/{language}/{index}")
    n = rng.randint(*size.sessions)
    when = datetime(2025, 1, 6, 9) + timedelta(days=rng.randint(0, 150))
    dates = []
    for _ in range(n):
        dates.append(when.replace(hour=rng.randint(8, 21), minute=rng.choice((0, 15, 30, 45))))
        when += timedelta(days=rng.randint(2, 12))
    statements = _statements(rng, language, n, size)
    by_session = [[s for s in statements if s.session == k] for k in range(n)]
    exchanges = [max(rng.randint(*size.exchanges), len(by_session[k])) for k in range(n)]
    replies = _replies(rng, sum(exchanges), size)
    user = USERS[language][index % len(USERS[language])]
    conv: dict = {"speaker_a": user, "speaker_b": ASSISTANT}
    reply_of: list[tuple[str, list[Source]]] = []
    r = 0
    for k in range(n):
        said: list[Statement | None] = [*by_session[k], *[None] * (exchanges[k] - len(by_session[k]))]
        rng.shuffle(said)
        turns = []
        for s in said:
            parts = replies[r]
            r += 1
            lines = [rng.choice(ph.GREETING[language]), _paste(rng, language, size)]
            said_here = [_aside(rng, language, statements, size)]
            if s is not None:
                s.dia_id = f"D{k + 1}:{len(turns) + 1}"
                said_here.append(_say(rng, s, language))
            rng.shuffle(said_here)
            lines += [*said_here, ph.fill(rng.choice(ph.ASK[language]), title=parts[0].title)]
            sep = "" if language == "ja" else " "
            turns.append({"speaker": user, "dia_id": f"D{k + 1}:{len(turns) + 1}",
                          "text": sep.join(x for x in lines if x)})
            dia = f"D{k + 1}:{len(turns) + 1}"
            turns.append({"speaker": ASSISTANT, "dia_id": dia, "text": _reply_text(parts)})
            reply_of.append((dia, parts))
        conv[f"session_{k + 1}_date_time"] = locomo_when(dates[k])
        conv[f"session_{k + 1}"] = turns
    qa = questions(rng, language, conv, statements, reply_of, dates, size)
    sample = {"sample_id": f"realtext-{language}-{index:02d}", "language": language,
              "split": "report" if index % 3 == 2 else "dev", "reply_language": "en",
              "sources": [p.name for _, parts in reply_of for p in parts], "conversation": conv, "qa": qa}
    if pad > 0:
        filler = random.Random(f"realtext/{seed}/{language}/{index}/pad")
        sample["pad"] = pad
        sample["filler_sources"] = _pad(filler, language, conv, statements, _filler_texts(reply_of), pad, size)
    return sample


def generate(per_language: int = DEFAULT_PER_LANGUAGE, seed: int = DEFAULT_SEED, size: Size = DEFAULT,
             split: str = "all", languages: tuple[str, ...] = LANGUAGES, pad: int = 0) -> list[dict]:
    """English conversations first, then Japanese; ``split`` keeps "dev", "report" or "all" of them."""
    samples = [build_conversation(language, i, seed, size, pad) for language in languages
               for i in range(per_language)]
    return [s for s in samples if split == "all" or s["split"] == split]


def dumps(samples: list[dict]) -> str:
    return json.dumps(samples, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realtext_data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "realtext.json"))
    parser.add_argument("--per-language", type=int, default=DEFAULT_PER_LANGUAGE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--split", choices=("dev", "report", "all"), default="all",
                        help="dev: the conversations to tune on; report: the held-out ones (every third)")
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    parser.add_argument("--pad", type=int, default=0,
                        help="append to each session N times its own exchanges of filler (a long history: the "
                             "same dia_ids and questions; replies repeat once the texts run out)")
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated, of: en, ja")
    parser.add_argument("--only", default="", help="keep only these sample_ids (comma-separated)")
    args = parser.parse_args(argv)
    languages = tuple(x for x in args.languages.split(",") if x)
    if unknown := set(languages) - set(LANGUAGES):
        parser.error(f"--languages: unknown {sorted(unknown)}")
    samples = generate(args.per_language, args.seed, SIZES[args.size], args.split, languages, args.pad)
    if args.only:
        samples = [s for s in samples if s["sample_id"] in set(args.only.split(","))]
    Path(args.out).write_text(dumps(samples), encoding="utf-8")
    turns = [t for s in samples for k, v in s["conversation"].items() if k.startswith("session_")
             and isinstance(v, list) for t in v]
    words = sum(len(t["text"].split()) for t in turns if t["speaker"] == ASSISTANT)
    print(f"wrote {args.out}: {len(samples)} conversations, {len(turns)} turns, {words} words of replies, "
          f"{sum(len(s['qa']) for s in samples)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
