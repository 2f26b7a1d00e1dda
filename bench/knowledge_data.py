"""Fact-update stories in Japanese and English, written by this project for ``bench.knowledge`` (issue 18): the
records, a seeded generator, the loader, and a converter to the LoCoMo-like conversations the harness replays.

A story is one user's conversation with one character (Lumina, Clarisse or Nox) over 3–5 sessions dated weeks or
months apart (a pet's age over two years). In it the user states facts about herself, and later updates them:

- supersede — an attribute that holds one value at a time gets a new one (coffee → tea, Osaka → Fukuoka, a pet's
  age 2 → 3, a new job, a new favourite film); said with the old value named or not;
- accumulate — likes, places visited, habits add up and must NOT supersede each other;
- negate — "I don't like X anymore" / 「もう好きじゃない」 ends one value of an accumulating kind;
- merge — the same value said again in other words (one fact, several evidence turns);
- distractors — a value said without being the user's fact: about someone else ("my sister loves coffee",
  「友達が福岡に引っ越した」), hypothetical (「もし〜なら」), a question ("do you like jazz, Nox?"), a quote, a joke,
  a negation ("I've never been to Prague"), or the character's own taste.

Every story carries its gold, derived by replaying what was said (so it cannot disagree with the turns): the
current facts at the end, the superseded ones with when and by which turn they stopped, the accumulating ones
that must remain current, the distractors, and questions — current ("今好きな飲み物は？" → 紅茶) and past ("前は何を
飲んでた？" → コーヒー) — each naming its evidence turn ids.

Controlled attribute vocabulary (subject "user" for every gold fact; values are the strings said in the turn):

| attribute | holds | meaning |
|---|---|---|
| name | one | the user's name |
| from | one | where the user grew up |
| lives_in | one | the city the user lives in now |
| works_at | one | the user's workplace (bakery, city library, 市役所 …) |
| drink | one | what the user drinks as a habit (her current drink) |
| food | one | the user's favourite food |
| film | one | the user's favourite film |
| pet_age | one | the age in years of the user's pet (one pet with an age per story) |
| likes | many | things the user likes or is into |
| dislikes | many | things the user can't stand |
| visited | many | places the user has been to |
| habit | many | things the user does regularly |
| pet | many | a pet's name |
| sibling | many | a brother's or sister's name |
| plan | many | a place the user is going to (its date is in the turn) |

"one" attributes are superseded by a new value; "many" attributes accumulate and end only when negated.
Distractor subjects: sister, brother, friend, colleague, mother, the character's id, or user (for hypothetical,
question, joke and negated lines, where the user says the value without it being true of her).

Files: ``{"format": "lumina-knowledge-stories", "version": 1, "seed": …, "stories": [Story…]}``. The small fixed
set for the tests is written with ``python -m bench.knowledge_data --mini tests/data/knowledge_mini.json``; the
benchmark's set (48 stories per language) is generated on the fly or written with ``--out PATH``, and ``--locomo
PATH`` writes the same stories in LoCoMo's format (readable by ``bench.locomo_data.load`` and ``bench.locomo``).

API: ``generate(per_language=48, seed=18)`` / ``build_story(language, index, seed)`` → ``Story``;
``load_stories(path | stories | StorySet | None | "generated", languages=None)`` → ``list[Story]``;
``to_conversation(story)`` → ``bench.locomo_data.Conversation`` (replayable as ``bench.locomo`` replays LoCoMo);
``to_locomo(story)`` → one LoCoMo sample dict; ``dumps`` / ``write_stories`` for files. The records live in
``bench/knowledge_records.py``, the generator in ``bench/knowledge_story.py``, the lines and value pools in
``bench/knowledge_phrases.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from bench.knowledge_phrases import MONTHS_EN
from bench.knowledge_records import (
    ATTRIBUTES, CHARACTERS, FORMAT, LANGUAGES, MANY, ONE, Distractor, Fact, Story, StoryQuestion, StorySession,
    StorySet, StoryTurn, SupersededFact,
)
from bench.knowledge_story import DEFAULT_PER_LANGUAGE, DEFAULT_SEED, build_story, generate
from bench.locomo_data import Conversation, Question, Turn

__all__ = [
    "ATTRIBUTES", "CHARACTERS", "DEFAULT_PER_LANGUAGE", "DEFAULT_SEED", "FORMAT", "GENERATED", "LANGUAGES", "MANY",
    "MINI_PER_LANGUAGE", "ONE", "Distractor", "Fact", "Story", "StoryQuestion", "StorySession", "StorySet", "StoryTurn",
    "SupersededFact", "build_story", "dumps", "generate", "load_stories", "locomo_when", "main", "to_conversation",
    "to_locomo", "write_stories",
]

MINI_PER_LANGUAGE = 6
GENERATED = "generated"  # load_stories("generated"): the default generated set


def dumps(stories: Sequence[Story], seed: int = DEFAULT_SEED) -> str:
    return StorySet(seed=seed, stories=list(stories)).model_dump_json(indent=1) + "\n"


def write_stories(path: str | Path, stories: Sequence[Story], seed: int = DEFAULT_SEED) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(stories, seed), encoding="utf-8")
    return path


def load_stories(source: str | Path | StorySet | Iterable[Story | dict] | None = None, *,
                 languages: Sequence[str] | None = None) -> list[Story]:
    """Stories from a file this module wrote (a path), from stories already in hand (``generate()``'s list, a
    ``StorySet``, or their dicts), or — for ``None`` or ``"generated"`` — the default generated set."""
    if source is None or (isinstance(source, str) and source == GENERATED):
        stories = generate()
    elif isinstance(source, (str, Path)):
        stories = StorySet.model_validate_json(Path(source).read_text(encoding="utf-8")).stories
    elif isinstance(source, StorySet):
        stories = source.stories
    else:
        stories = [s if isinstance(s, Story) else Story.model_validate(s) for s in source]
    return [s for s in stories if languages is None or s.language in languages]


def locomo_when(at: datetime, language: str) -> str:
    """A session's date-time the way LoCoMo files write it (bench.locomo_data.parse_when reads both)."""
    if language == "ja":
        return f"{at.year}年{at.month}月{at.day}日 {at.hour}:{at.minute:02d}"
    hour = at.hour % 12 or 12
    return f"{hour}:{at.minute:02d} {'am' if at.hour < 12 else 'pm'} on {at.day} {MONTHS_EN[at.month - 1]}, {at.year}"


def to_locomo(story: Story) -> dict:
    """The story as one LoCoMo sample (speaker_a the user, speaker_b the character), plus its gold under
    ``knowledge`` (ignored by LoCoMo readers)."""
    conversation: dict = {"speaker_a": story.user_name, "speaker_b": story.character_name}
    for session in story.sessions:
        conversation[f"session_{session.number}_date_time"] = locomo_when(session.at, story.language)
        conversation[f"session_{session.number}"] = [
            {"speaker": story.user_name if t.speaker == "user" else story.character_name, "dia_id": t.turn_id,
             "text": t.text} for t in session.turns]
    qa = [{"question": q.question, "answer": q.answer, "evidence": q.evidence, "category": q.category}
          for q in story.questions]
    gold = story.model_dump(mode="json", exclude={"sessions"})
    return {"sample_id": story.story_id, "conversation": conversation, "qa": qa, "knowledge": gold}


def to_conversation(story: Story) -> Conversation:
    """The story as the harness's ``Conversation``: the same dia_ids, sessions and timestamps that
    ``bench.locomo_data.load`` gives for ``to_locomo(story)``, but each turn spoken by ``user`` or by the
    story's character (lumina/clarisse/nox) with its text as said, without the "Name: " prefix LoCoMo needs."""
    names = {"user": story.user_name, story.character: story.character_name}
    turns = [Turn(dia_id=t.turn_id, speaker=t.speaker, name=names[t.speaker], text=t.text, ts=t.at.timestamp(),
                  session=s.number) for s in story.sessions for t in s.turns]
    questions = [Question(q.question, list(q.evidence), q.category, q.answer) for q in story.questions]
    return Conversation(story.story_id, story.user_name, story.character_name, turns, questions)


def _summary(stories: Sequence[Story]) -> str:
    rows = []
    for language in LANGUAGES:
        mine = [s for s in stories if s.language == language]
        if mine:
            n = {name: sum(len(getattr(s, name)) for s in mine)
                 for name in ("current_facts", "superseded_facts", "accumulating_facts", "distractors", "questions")}
            rows.append(f"{language}: {len(mine)} stories, {sum(len(s.turns()) for s in mine)} turns, "
                        f"{n['current_facts']} current facts, {n['superseded_facts']} superseded, "
                        f"{n['accumulating_facts']} accumulating, {n['distractors']} distractors, "
                        f"{n['questions']} questions")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.knowledge_data", description=__doc__.splitlines()[0])
    parser.add_argument("--mini", type=Path, help=f"write the tests' small set ({MINI_PER_LANGUAGE} stories per language)")
    parser.add_argument("--out", type=Path, help="write the benchmark's set")
    parser.add_argument("--locomo", type=Path, help="write the benchmark's set in LoCoMo's format (with its gold)")
    parser.add_argument("--per-language", type=int, default=DEFAULT_PER_LANGUAGE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--half", choices=("a", "b"), help="user lines from one half of the templates only")
    args = parser.parse_args(argv)
    if not (args.mini or args.out or args.locomo):
        parser.error("nothing to write: give --mini, --out or --locomo")
    if args.mini:
        mini = generate(MINI_PER_LANGUAGE, args.seed)
        print(f"{write_stories(args.mini, mini, args.seed)}\n{_summary(mini)}")
    if args.out or args.locomo:
        stories = generate(args.per_language, args.seed, half=args.half)
        if args.out:
            print(f"{write_stories(args.out, stories, args.seed)}\n{_summary(stories)}")
        if args.locomo:
            args.locomo.parent.mkdir(parents=True, exist_ok=True)
            args.locomo.write_text(json.dumps([to_locomo(s) for s in stories], ensure_ascii=False, indent=1) + "\n",
                                   encoding="utf-8")
            print(args.locomo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
