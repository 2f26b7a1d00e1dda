"""Recall returns each memory once (nodes.retrieval.dedup): a message said again in other case and punctuation is
quoted once, and an item that says no more than one ranked before it is folded into that one."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.dedup import normal_text, without_duplicates
from lumina_memory.nodes.retrieval.recall import recall

START = 1_780_000_000.0
DAY = 86_400.0
CAT = "I adopted a grey cat named Pebble last spring."
SAID = [("user", CAT), ("lumina", "Pebble is a lovely name!"),
        ("user", "My sister lives in Osaka and teaches piano."), ("lumina", "Osaka sounds nice."),
        ("user", "i adopted a GREY cat named pebble, last spring!!"), ("lumina", "Yes, Pebble."),
        ("user", "We planted tomatoes on the balcony."), ("lumina", "Fresh tomatoes are the best.")]


def _rows(user: str) -> list[dict]:
    return [{"user_id": user, "speaker": speaker, "text": text, "ts": START + (k // 2) * DAY + (k % 2) * 60,
             "source_id": f"m{k}"} for k, (speaker, text) in enumerate(SAID)]


def _quoted_texts(items) -> list[str]:
    """Every message the items quote, normalised, one entry per quote."""
    quoted = []
    for item in items:
        body = item["text"].split("] ", 1)[-1]
        quoted += [normal_text(line.split(": ", 1)[-1]) for line in body.replace(" / ", "\n").split("\n")]
    return quoted


@pytest.mark.slow
@pytest.mark.parametrize("purpose", ["question", "talking"])
def test_a_message_said_twice_in_other_case_and_punctuation_is_recalled_once(memory, purpose):
    replay(memory.graph, "dedup-user", _rows("dedup-user"), flush=True)
    items = recall(memory.services, "dedup-user", "What is the name of my cat?", purpose=purpose, budget=200)
    quoted = _quoted_texts(items)
    assert quoted.count(normal_text(CAT)) == 1, [i["text"] for i in items]
    assert len({_body for _body in quoted}) == len(quoted)  # nor is anything else quoted twice


def test_normal_text_reads_case_punctuation_and_width_alike():
    assert normal_text("I adopted a GREY cat, named Pebble!!") == normal_text("i adopted a grey cat named pebble")
    assert normal_text("ペブルという猫を飼った。") == normal_text("ペブルという猫を飼った")
    assert normal_text("ＡＢＣ　１２３") == "abc 123"  # full-width letters and spaces
    assert normal_text("I adopted a cat") != normal_text("I adopted a dog")
    assert normal_text("!!! ...") == ""


def _turn_item(turn_ids, text, tiers, score):
    return {"kind": "episode", "unit": "turns", "segment_id": "s", "turn_ids": turn_ids,
            "source_ids": turn_ids, "text": f"[2026-05-30] {text}", "tiers": tiers, "score": score}


def test_the_same_turn_reached_twice_is_one_item_with_both_tiers():
    first = _turn_item(["t1"], "We planted tomatoes on the balcony.", ["long-term"], 0.9)
    again = {**_turn_item(["t1"], "user: We planted tomatoes on the balcony", ["cold_log"], 0.2), "segment_id": "s2"}
    other = _turn_item(["t2"], "My sister lives in Osaka.", ["archive"], 0.5)
    out = without_duplicates([first, other, again])
    assert [i["turn_ids"] for i in out] == [["t1"], ["t2"]]
    assert out[0]["tiers"] == ["long-term", "cold_log"]


def test_a_turn_wholly_inside_a_later_segment_item_gives_way_to_it_at_its_rank():
    turn = _turn_item(["t1"], "We planted tomatoes on the balcony.", ["long-term"], 0.9)
    other = _turn_item(["t5"], "My sister lives in Osaka.", ["archive"], 0.5)
    segment = {"kind": "episode", "unit": "segment", "segment_id": "s", "turn_ids": ["t1", "t2"],
               "source_ids": ["t1", "t2"], "tiers": ["graph"], "score": 0.3,
               "text": "[2026-05-30] Gardening talk.\nWe planted tomatoes on the balcony.\nThey grew fast."}
    out = without_duplicates([turn, other, segment])
    assert [i["unit"] for i in out] == ["segment", "turns"]
    assert out[0]["tiers"] == ["graph", "long-term"]


def test_two_turn_items_shown_as_one_summary_are_one_item():
    # A faded memory (level 2) shows its summary in place of each of its turn items.
    a = _turn_item(["t1"], "Summary: the user talked about gardening.", ["archive"], 0.9)
    b = _turn_item(["t4"], "summary - the user talked about gardening", ["long-term"], 0.4)
    assert [i["turn_ids"] for i in without_duplicates([a, b])] == [["t1"]]


def test_different_memories_and_a_word_inside_another_word_are_all_kept():
    items = [_turn_item(["t1"], "Yes.", ["archive"], 0.9),
             _turn_item(["t2"], "Yesterday we went hiking.", ["archive"], 0.8),
             _turn_item(["t3"], "We planted tomatoes.", ["archive"], 0.7),
             {"kind": "fact", "text": "tomatoes: planted on the balcony", "tiers": ["knowledge"], "score": 0.6}]
    assert without_duplicates(items) == items


def test_a_faded_memory_s_own_text_is_not_folded_into_another_memory_sharing_its_words():
    # Level 3 shows a memory as its keywords; another memory that says those words is still another memory.
    full = {**_turn_item(["t1"], "My cat Mugi sleeps a lot these days.", ["long-term"], 0.9), "segment_id": "a",
            "level": 1}
    keywords = {**_turn_item(["t7"], "cat Mugi", ["long-term"], 0.5), "segment_id": "b", "level": 3,
                "from_record": False}
    assert without_duplicates([full, keywords]) == [full, keywords]
    # the same words quoted from the record (a deliberate recall of an archived memory) are a quote again
    quoted = {**keywords, "text": "[2026-05-30] cat Mugi sleeps a lot", "from_record": True}
    assert [i["segment_id"] for i in without_duplicates([full, quoted])] == ["a"]
