"""Tuning on one half of a set's conversations and reporting on the other (bench.ablation ``--half``), and the
before/after table of two saved runs (bench.ablation_compare), on invented per-conversation sums."""

from __future__ import annotations

import random

import pytest

from bench.ablation import in_half
from bench.ablation_compare import render, rows
from bench.locomo_data import Conversation


def _convs(n: int) -> list[Conversation]:
    return [Conversation(sample_id=f"c{k}", speaker_a="A", speaker_b="B", turns=[], questions=[]) for k in range(n)]


def test_the_halves_split_a_set_in_file_order_without_overlap():
    convs = _convs(7)
    even, odd = in_half(convs, "even"), in_half(convs, "odd")
    assert [c.sample_id for c in even] == ["c0", "c2", "c4", "c6"]
    assert [c.sample_id for c in odd] == ["c1", "c3", "c5"]
    assert in_half(convs, "all") == convs


def test_an_unknown_half_is_refused_by_name():
    with pytest.raises(ValueError, match="half"):
        in_half(_convs(2), "first")


def _run(recall_of: dict[str, dict[str, list[float]]], budget: int = 128) -> dict:
    """A saved ablation run (bench.ablation's JSON) of one set: per configuration, per conversation, the sums."""
    sums = {config: {str(budget): {conv: {"n": len(scores), "recall": sum(scores), "hit": sum(s == 1.0 for s in scores)}
                                   for conv, scores in per_conv.items()}}
            for config, per_conv in recall_of.items()}
    return {"sets": [{"set": "invented", "budgets": [budget], "sums": sums}]}


def test_before_and_after_are_paired_by_conversation():
    rng = random.Random(5)
    before_full = {f"c{i}": [float(rng.random() < 0.6) for _ in range(rng.randint(4, 12))] for i in range(6)}
    plain = {c: [1.0] * len(v) for c, v in before_full.items()}
    after_full = {c: [1.0 for _ in v] for c, v in before_full.items()}  # the change answers every question
    table = rows(_run({"full": before_full, "plain": plain}), _run({"full": after_full, "plain": plain}))
    (row,) = table
    n = sum(map(len, before_full.values()))
    assert row["full_before"] == pytest.approx(sum(map(sum, before_full.values())) / n)
    assert row["full_after"] == 1.0
    gain = row["after_minus_before"]
    assert gain["lo"] <= gain["delta"] <= gain["hi"] and gain["lo"] > 0
    # after the change full equals plain on every question: that difference is exactly zero
    assert (row["minus_plain_after"]["lo"], row["minus_plain_after"]["hi"]) == (0.0, 0.0)
    assert row["minus_plain_before"]["hi"] < 0
    assert "| invented | 128 |" in render(table)


def test_a_set_or_budget_only_one_run_has_is_left_out():
    one = _run({"full": {"c0": [1.0]}}, budget=32)
    other = _run({"full": {"c0": [0.0]}}, budget=128)
    assert rows(one, other) == []
