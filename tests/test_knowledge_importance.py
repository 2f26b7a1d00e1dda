"""P3: the notes' base values per kind and their modifiers."""

import pytest

from lumina_memory.nodes.knowledge.importance import importance, knowledge_importance


@pytest.mark.parametrize(("kind", "flags", "expected"), [
    ("episode", {}, 0.5), ("episode", {"request": True}, 0.7), ("episode", {"request": True, "emotional": True}, 0.8),
    ("procedure", {}, 0.3), ("procedure", {"goal": True, "failure": True}, 0.8),
    ("knowledge", {}, 0.2), ("knowledge", {"new_person": True}, 0.5), ("knowledge", {"new_person": True, "danger": True}, 0.9),
    ("semantic", {}, 0.6), ("knowledge", {"danger": True, "new_person": False}, 0.6),
])
def test_the_notes_values(kind, flags, expected):
    assert importance(kind, **flags) == pytest.approx(expected)


def test_capped_and_checked():
    assert importance("procedure", goal=True, failure=True) <= 1.0
    with pytest.raises(ValueError, match="no modifiers"):
        importance("episode", danger=True)
    with pytest.raises(ValueError, match="kind must be"):
        importance("dream")


def test_knowledge_items():
    assert knowledge_importance("likes", "コーヒー", "コーヒーが好き") == pytest.approx(0.2)
    assert knowledge_importance("pet", "モカ", "猫のモカ") == pytest.approx(0.5)
    assert knowledge_importance("has", "peanut allergy", "I have a peanut allergy") == pytest.approx(0.6)
