"""The held-out knowledge timelines keep their schema: both files load, they cover every attribute and enough
changes of single-valued attributes, and an edit that breaks a rule (an unknown attribute, a value nobody wrote,
two current values for one single-valued slot, days going back) is refused with TimelineDataError."""

from __future__ import annotations

import copy
import json

import pytest

from bench.knowledge_independent import (
    ATTRIBUTES, LANGUAGES, SINGLE_VALUED, TimelineDataError, attribute_counts, changes, load, summary,
)


@pytest.mark.parametrize("language", LANGUAGES)
def test_file_loads_and_covers_every_attribute(language):
    timelines = load(language)
    assert len(timelines) >= 25
    counts = attribute_counts(timelines)
    thin = {a: counts[a] for a in ATTRIBUTES if counts[a] < 2}
    assert not thin, f"attributes with fewer than 2 expected facts: {thin}"
    assert changes(timelines) >= 10


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_single_valued_slot_has_one_current_value(language):
    for timeline in load(language):
        current: dict[tuple[str, str], int] = {}
        for fact in timeline["expect"]:
            if fact["attribute"] in SINGLE_VALUED:
                key = (fact["subject"], fact["attribute"])
                current[key] = current.get(key, 0) + fact["current"]
        assert all(n == 1 for n in current.values()), (timeline["id"], current)


@pytest.mark.parametrize("language", LANGUAGES)
def test_values_and_answers_are_written_by_the_user(language):
    for timeline in load(language):
        said = "\n".join(turn["text"] for turn in timeline["turns"] if turn["speaker"] == "user")
        for fact in timeline["expect"]:
            assert fact["value"] in said, (timeline["id"], fact)
        for question in timeline["questions"]:
            assert question["answer"] in said, (timeline["id"], question)


def _first_with_change(timelines):
    return next(t for t in timelines if any(not f["current"] and f["attribute"] in SINGLE_VALUED for f in t["expect"]))


def _unknown_attribute(t):
    t["expect"][0]["attribute"] = "favourite_colour"


def _value_only_in_a_reply(t):
    t["turns"].append({"speaker": "lumina", "text": "I love jasmine tea.", "day": t["turns"][-1]["day"]})
    t["expect"].append({"subject": "user", "attribute": "likes", "value": "jasmine tea", "current": True})


def _two_current(t):
    for fact in t["expect"]:
        if fact["attribute"] in SINGLE_VALUED:
            fact["current"] = True


def _none_current(t):
    for fact in t["expect"]:
        if fact["attribute"] in SINGLE_VALUED:
            fact["current"] = False


def _day_goes_back(t):
    t["turns"][-1]["day"] = -1


def _speaker_unknown(t):
    t["turns"][0]["speaker"] = "narrator"


def _answer_nobody_said(t):
    t["questions"][0]["answer"] = "Reykjavik-on-Sea"


def _current_and_absent(t):
    fact = next(f for f in t["expect"] if f["current"])
    t["absent"] = [{k: fact[k] for k in ("subject", "attribute", "value")}]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("breaks", [
    _unknown_attribute, _value_only_in_a_reply, _two_current, _none_current, _day_goes_back, _speaker_unknown,
    _answer_nobody_said, _current_and_absent,
])
def test_a_broken_edit_is_refused(tmp_path, language, breaks):
    timelines = load(language)
    broken = copy.deepcopy(timelines)
    breaks(_first_with_change(broken))
    path = tmp_path / f"knowledge_independent_{language}.jsonl"
    path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in broken), encoding="utf-8")
    with pytest.raises(TimelineDataError):
        load(language, path)
    intact = tmp_path / "intact.jsonl"
    intact.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in timelines), encoding="utf-8")
    assert load(language, intact) == timelines


def test_a_line_that_is_not_json_names_its_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"id": "en-01"\n', encoding="utf-8")
    with pytest.raises(TimelineDataError, match="broken.jsonl:1"):
        load("en", path)


def test_summary_lists_every_attribute_for_both_languages():
    lines = summary().splitlines()
    assert lines[0].split() == ["attribute", *LANGUAGES]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:1 + len(ATTRIBUTES)]}
    assert set(rows) == set(ATTRIBUTES)
    assert all(int(n) >= 2 for counts in rows.values() for n in counts)
