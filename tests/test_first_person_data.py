"""bench.first_person_data: LoCoMo-format questions as the product's user asks them, about themself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.first_person_data import convert, first_person
from bench.locomo_data import SPEAKER_A, load

MINI = Path(__file__).parent / "data" / "mini_locomo.json"


@pytest.mark.parametrize("asked, mine", [
    ("What is the name of the dog Alice adopted?", "What is the name of the dog I adopted?"),
    ("What is the name of Alice's cat?", "What is the name of my cat?"),
    ("When did Alice adopt her dog?", "When did I adopt my dog?"),
    ("What sports does Alice play on weekends?", "What sports do I play on weekends?"),
    ("Which plants wouldn't be a bother to Alice?", "Which plants wouldn't be a bother to me?"),
    ("Alice's sister lives where?", "My sister lives where?"),
])
def test_questions_move_to_the_first_person(asked, mine):
    assert first_person(asked, "Alice") == mine


def test_a_conversation_keeps_the_askers_questions_and_unnames_their_turns(tmp_path):
    [sample] = [s for s in json.loads(MINI.read_text(encoding="utf-8")) if s["sample_id"] == "mini-en"]
    out = convert(sample)
    asked = [q["asked_as"] for q in out["qa"]]
    assert asked and all("Alice" in q and "Ben" not in q for q in asked)
    assert "What breed is Pepper?" not in asked and "Who teaches Ben's pottery class?" not in asked
    assert all("Alice" not in q["question"] for q in out["qa"])
    path = tmp_path / "1p.json"
    path.write_text(json.dumps([out]), encoding="utf-8")
    [conv] = load(path)
    mine = [t for t in conv.turns if t.speaker == SPEAKER_A]
    assert mine and all(not t.text.startswith("Alice:") for t in mine)  # the user's turns carry no name
    assert all(t.text.startswith("Ben:") for t in conv.turns if t.speaker != SPEAKER_A)
    # --named: the same questions, by name, over the conversation as it is
    named = convert(sample, named=True)
    assert [q["question"] for q in named["qa"]] == asked
    assert named["conversation"] == sample["conversation"]
