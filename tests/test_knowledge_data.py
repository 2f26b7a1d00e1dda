"""The fact-update stories of bench/knowledge_data.py (issue 18's evaluation set): deterministic, at least 40 stories
per language, every gold fact grounded in the turn that states it, supersessions in order, accumulating facts kept,
distractors never the user's facts, questions on the gold, the mini file the generator's own output, and the
LoCoMo conversion read back by the harness's reader as the converter says."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from bench import knowledge_data as kd
from bench.locomo_data import load as load_locomo

MINI = Path(__file__).parent / "data" / "knowledge_mini.json"


@pytest.fixture(scope="module")
def stories() -> list[kd.Story]:
    return kd.generate()


def _position(story: kd.Story) -> dict[str, int]:
    return {t.turn_id: i for i, t in enumerate(story.turns())}


def _said(value: str, text: str, language: str) -> bool:
    """The value as a word of the text (a number not inside a longer number; English on word edges)."""
    if value.isdigit():
        return re.search(rf"(?<!\d){value}(?!\d)", text) is not None
    if language == "en":
        return re.search(rf"(?<!\w){re.escape(value.lower())}(?!\w)", text.lower()) is not None
    return value in text


def test_the_vocabulary_table_documents_every_attribute():
    rows = re.findall(r"^\| (\w+) \| (one|many) \|", kd.__doc__, flags=re.MULTILINE)
    assert dict(rows) == kd.ATTRIBUTES
    used = {f.attribute for s in kd.generate(12) for f in s.current_facts + s.superseded_facts}
    assert used == set(kd.ATTRIBUTES)


def test_generation_is_deterministic_and_a_smaller_set_is_a_prefix():
    first, again = kd.generate(8), kd.generate(8)
    assert kd.dumps(first) == kd.dumps(again)
    assert kd.dumps(kd.generate(8, seed=kd.DEFAULT_SEED + 1)) != kd.dumps(first)
    small = kd.generate(3)
    assert [s.story_id for s in small] == [f"{lang}-{i:03d}" for lang in kd.LANGUAGES for i in range(3)]
    by_id = {s.story_id: s for s in first}
    assert all(s == by_id[s.story_id] for s in small)


def test_default_set_has_at_least_40_stories_per_language_with_every_kind_of_update(stories):
    per_language = Counter(s.language for s in stories)
    assert per_language["ja"] >= 40 and per_language["en"] >= 40
    for language in kd.LANGUAGES:
        mine = [s for s in stories if s.language == language]
        kinds = Counter(tag.split(":")[0] for s in mine for tag in s.scenarios)
        assert kinds["supersede"] >= 20 and kinds["accumulate"] >= 8 and kinds["negate"] >= 6
        assert kinds["merge"] >= 4 and kinds["distractors"] >= 4
        superseded = Counter(f.attribute for s in mine for f in s.superseded_facts if f.how == "supersede")
        assert {"drink", "lives_in", "pet_age", "works_at", "film", "food"} <= set(superseded)
        assert {f.attribute for s in mine for f in s.superseded_facts if f.how == "negate"} == {"likes", "habit"}
        assert {d.kind for s in mine for d in s.distractors} == {
            "other_person", "hypothetical", "question", "quote", "joke", "negated", "character"}
        assert {s.character for s in mine} == set(kd.CHARACTERS)
        merged = [f for s in mine for f in s.current_facts + s.superseded_facts if len(f.evidence) > 1]
        assert len(merged) >= 8
    for story in stories:
        assert story.questions, story.story_id
        assert story.distractors, story.story_id
        assert 3 <= len(story.sessions) <= 5
        assert all(b.at > a.at for a, b in zip(story.sessions, story.sessions[1:]))


def test_every_gold_fact_is_grounded_in_a_user_turn_that_states_it(stories):
    for story in stories:
        turns = {t.turn_id: t for t in story.turns()}
        for fact in story.current_facts + story.superseded_facts + story.accumulating_facts:
            assert fact.subject == "user" and fact.attribute in kd.ATTRIBUTES
            assert fact.evidence, (story.story_id, fact)
            for turn_id in fact.evidence:
                turn = turns[turn_id]
                assert turn.speaker == "user", (story.story_id, turn_id)
                assert fact.value in turn.text, (story.story_id, fact.value, turn.text)
            assert fact.valid_from == turns[fact.evidence[0]].at
        for distractor in story.distractors:
            turn = turns[distractor.turn_id]
            assert distractor.value in turn.text, (story.story_id, distractor)
            assert turn.speaker == (story.character if distractor.kind == "character" else "user")


def test_a_value_is_said_only_in_the_turns_its_gold_names(stories):
    """Nothing else in a story (small talk, replies, other facts) says a gold value, so the gold is complete."""
    for story in stories:
        where: dict[str, set[str]] = {}
        for fact in story.current_facts + story.superseded_facts:
            where.setdefault(fact.value, set()).update(fact.evidence)
        for fact in story.superseded_facts:
            where[fact.value].add(fact.ended_by)  # "I quit coffee! I'm on tea now." names the old value
        for distractor in story.distractors:
            where.setdefault(distractor.value, set()).add(distractor.turn_id)
        for value, allowed in where.items():
            found = {t.turn_id for t in story.turns() if _said(value, t.text, story.language)}
            assert found <= allowed, (story.story_id, value, found - allowed)


def test_supersessions_keep_history_in_order(stories):
    for story in stories:
        position = _position(story)
        everything = story.current_facts + story.superseded_facts
        for old in story.superseded_facts:
            assert position[old.evidence[0]] < position[old.ended_by]
            assert old.valid_to == story.turn(old.ended_by).at > old.valid_from
            if old.how == "negate":
                assert old.superseded_by is None and kd.ATTRIBUTES[old.attribute] == kd.MANY
                continue
            assert kd.ATTRIBUTES[old.attribute] == kd.ONE  # an accumulating fact is never superseded
            successor = [f for f in everything if f.attribute == old.attribute and f.value == old.superseded_by]
            assert len(successor) == 1 and successor[0].evidence[0] == old.ended_by
            assert successor[0].valid_from == old.valid_to
            first_old = min(i for i, t in enumerate(story.turns()) if old.value in t.text)
            first_new = min(i for i, t in enumerate(story.turns()) if old.superseded_by in t.text)
            assert first_old < first_new
        for attribute in {f.attribute for f in story.current_facts}:
            if kd.ATTRIBUTES[attribute] == kd.ONE:
                assert sum(f.attribute == attribute for f in story.current_facts) == 1


def test_accumulating_facts_are_the_current_many_valued_ones(stories):
    total = 0
    for story in stories:
        expected = [f for f in story.current_facts if kd.ATTRIBUTES[f.attribute] == kd.MANY]
        assert story.accumulating_facts == expected
        total += sum(1 for f in expected if f.attribute in ("likes", "visited", "habit", "dislikes"))
    assert total >= 200  # enough for a rate of wrong supersessions to mean something


def test_distractors_never_name_a_value_of_the_users_own_facts(stories):
    for story in stories:
        own = {(f.attribute, f.value) for f in story.current_facts + story.superseded_facts}
        values = {f.value for f in story.current_facts + story.superseded_facts}
        for distractor in story.distractors:
            assert (distractor.attribute, distractor.value) not in own
            assert distractor.value not in values
            if distractor.kind in ("question", "character") and distractor.subject != "user":
                assert distractor.subject == story.character


def test_questions_ask_for_the_gold_answer_with_its_evidence(stories):
    pasts = 0
    for story in stories:
        ids = set(_position(story))
        separator = "、" if story.language == "ja" else ", "
        for q in story.questions:
            assert q.evidence and set(q.evidence) <= ids, (story.story_id, q)
            assert q.category == (2 if q.tense == "past" else 1 if len(q.evidence) > 1 else 4)
            if q.tense == "past":
                pasts += 1
                old = [f for f in story.superseded_facts if f.attribute == q.attribute and f.value == q.answer]
                assert old and q.evidence == old[0].evidence
                # the current answer about the same attribute is something else
                now = [f.value for f in story.current_facts if f.attribute == q.attribute]
                assert q.answer not in now
            elif q.answer in ("いいえ", "no"):
                negated = [f for f in story.superseded_facts if f.how == "negate" and q.evidence == [f.ended_by]]
                assert negated and negated[0].attribute == q.attribute
            else:
                facts = [f for f in story.current_facts if f.attribute == q.attribute]
                assert q.answer.split(separator) == [f.value for f in facts]
                assert q.evidence == [t for f in facts for t in f.evidence]
        supersede_kinds = {tag.split(":")[1] for tag in story.scenarios if tag.startswith("supersede:")}
        for attribute in supersede_kinds:
            tenses = {q.tense for q in story.questions if q.attribute == attribute}
            assert tenses == {"current", "past"}, (story.story_id, attribute)
    assert pasts >= 80


def test_the_first_story_of_each_language_is_coffee_then_tea(stories):
    for language, (old, new, now_q, past_q) in {"ja": ("コーヒー", "紅茶", "今好きな飲み物は？", "前は何を飲んでた？"),
                                                 "en": ("coffee", "tea", "What do I drink these days?",
                                                        "What did I use to drink?")}.items():
        story = next(s for s in stories if s.story_id == f"{language}-000")
        drink = [f for f in story.current_facts if f.attribute == "drink"]
        assert [f.value for f in drink] == [new]
        assert [(f.value, f.superseded_by) for f in story.superseded_facts if f.attribute == "drink"] == [(old, new)]
        answers = {q.question: q.answer for q in story.questions}
        assert answers[now_q] == new and answers[past_q] == old


def test_mini_file_is_the_generators_own_output(tmp_path):
    assert MINI.read_text(encoding="utf-8") == kd.dumps(kd.generate(kd.MINI_PER_LANGUAGE))
    out = tmp_path / "mini.json"
    assert kd.main(["--mini", str(out)]) == 0
    assert out.read_bytes() == MINI.read_bytes()
    loaded = kd.load_stories(MINI)
    assert loaded == kd.generate(kd.MINI_PER_LANGUAGE)
    assert Counter(s.language for s in loaded) == {"ja": kd.MINI_PER_LANGUAGE, "en": kd.MINI_PER_LANGUAGE}


def test_load_stories_takes_a_path_the_stories_or_nothing(tmp_path):
    mini = kd.generate(2)
    assert kd.load_stories(mini) == mini
    assert kd.load_stories([s.model_dump(mode="json") for s in mini]) == mini
    assert kd.load_stories(kd.StorySet(seed=kd.DEFAULT_SEED, stories=mini), languages=["en"]) == mini[2:]
    path = kd.write_stories(tmp_path / "two.json", mini)
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == kd.FORMAT
    assert kd.load_stories(path, languages=["ja"]) == mini[:2]
    default = kd.load_stories(kd.GENERATED)
    assert len(default) == 2 * kd.DEFAULT_PER_LANGUAGE and kd.load_stories(None) == default


def test_locomo_conversion_reads_back_through_the_harness_reader(tmp_path):
    stories = kd.load_stories(MINI)
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([kd.to_locomo(s) for s in stories], ensure_ascii=False), encoding="utf-8")
    read = {c.sample_id: c for c in load_locomo(path)}
    assert set(read) == {s.story_id for s in stories}
    for story in stories:
        ours, theirs = kd.to_conversation(story), read[story.story_id]
        assert [t.dia_id for t in ours.turns] == [t.dia_id for t in theirs.turns] == [t.turn_id for t in story.turns()]
        assert [t.ts for t in ours.turns] == [t.ts for t in theirs.turns]
        assert [t.session for t in ours.turns] == [t.session for t in theirs.turns]
        for mine, reader in zip(ours.turns, theirs.turns):
            # the reader maps speaker_b to "lumina" and prefixes the name; ours keeps the real character
            assert reader.text == f"{mine.name}: {mine.text}"
            assert mine.speaker in ("user", story.character)
            assert reader.speaker == ("user" if mine.speaker == "user" else "lumina")
        assert [(q.question, q.evidence, q.category, q.answer) for q in ours.questions] == \
               [(q.question, q.evidence, q.category, q.answer) for q in theirs.questions]
        assert len(ours.questions) == len(story.questions)


def test_template_halves_are_disjoint_and_keep_the_plot():
    """Half a (the rules' development half) and half b (held out) share no user line, every template is in one of
    them, and a story drawn from either half has the same gold facts as the same story drawn from the other."""
    from bench import knowledge_phrases as phrases

    for language, attributes in phrases.USER_LINES.items():
        for attribute, modes in attributes.items():
            for mode, lines in modes.items():
                a = phrases.user_lines(language, attribute, mode, "a")
                b = phrases.user_lines(language, attribute, mode, "b")
                assert a and b and not set(a) & set(b), (language, attribute, mode)
                assert set(lines) <= set(a) | {t for m in modes for t in phrases.user_lines(language, attribute, m, "b")}
    with pytest.raises(ValueError, match="half"):
        phrases.user_lines("en", "drink", "state", "c")
    for language in kd.LANGUAGES:
        for index in range(4):
            half_a, half_b = (kd.build_story(language, index, half=h) for h in ("a", "b"))
            facts = [sorted((f.attribute, f.value) for f in s.current_facts) for s in (half_a, half_b)]
            assert facts[0] == facts[1]
            user_a = {t.text for t in half_a.turns() if t.speaker == "user"}
            user_b = {t.text for t in half_b.turns() if t.speaker == "user"}
            assert user_a != user_b
