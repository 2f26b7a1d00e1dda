"""The ablation's statistics (bench.ablation_stats) on invented per-question numbers: a paired bootstrap over
conversations, and leave-one-conversation-out."""

from __future__ import annotations

import random

import pytest

from bench.ablation import never_help, removal_candidates
from bench.ablation_stats import contribution, includes_zero, leave_one_out, per_question_sums


def _rows(per_conv: dict[str, list[float]]) -> list[dict]:
    return [{"conv": c, "recall": r, "hit": r >= 1.0} for c, scores in per_conv.items() for r in scores]


def test_a_switch_that_always_adds_one_has_interval_one_to_one():
    rng = random.Random(3)
    off = {f"c{i}": [0.0] * rng.randint(3, 40) for i in range(6)}
    full = {c: [1.0] * len(v) for c, v in off.items()}
    ci = contribution(per_question_sums(_rows(full)), per_question_sums(_rows(off)), "recall")
    assert (ci["delta"], ci["lo"], ci["hi"]) == (1.0, 1.0, 1.0)
    hit = contribution(per_question_sums(_rows(full)), per_question_sums(_rows(off)), "hit")
    assert (hit["lo"], hit["hi"]) == (1.0, 1.0)


def test_a_zero_effect_switch_has_an_interval_around_zero():
    # Per conversation the switch helps some questions and hurts others; over conversations it nets to zero.
    rng = random.Random(11)
    off, full = {}, {}
    for i in range(8):
        base = [rng.random() for _ in range(30)]
        shift = 0.2 if i % 2 else -0.2
        off[f"c{i}"] = base
        full[f"c{i}"] = [min(1.0, max(0.0, b + shift)) for b in base]
    ci = contribution(per_question_sums(_rows(full)), per_question_sums(_rows(off)), "recall")
    assert ci["lo"] < 0 < ci["hi"]
    assert includes_zero(ci)
    assert ci["lo"] <= ci["delta"] <= ci["hi"]


def test_a_switch_that_helps_one_conversation_only_is_not_sure():
    off = {f"c{i}": [0.5] * 20 for i in range(5)}
    full = dict(off, c0=[1.0] * 20)  # +0.5 on one conversation in five, nothing elsewhere
    ci = contribution(per_question_sums(_rows(full)), per_question_sums(_rows(off)), "recall")
    assert ci["delta"] == pytest.approx(0.1)
    assert ci["lo"] == 0.0 and ci["hi"] > 0.1  # resampling conversations: draws without c0 give 0
    # Resampling questions instead would give a narrow interval away from 0; conversations are the unit.


def test_the_interval_is_paired_and_reproducible():
    rng = random.Random(5)
    off = {f"c{i}": [rng.random() for _ in range(25)] for i in range(6)}
    # Conversations differ a lot in level, but the switch adds exactly 0.05 everywhere: pairing removes the levels.
    off = {c: [v * (0.2 + 0.15 * i) for v in vs] for i, (c, vs) in enumerate(off.items())}
    full = {c: [v + 0.05 for v in vs] for c, vs in off.items()}
    a = contribution(per_question_sums(_rows(full)), per_question_sums(_rows(off)), "recall")
    b = contribution(per_question_sums(_rows(full)), per_question_sums(_rows(off)), "recall")
    assert a == b
    assert a["lo"] == pytest.approx(0.05) and a["hi"] == pytest.approx(0.05)


def test_unpaired_inputs_are_refused():
    full = per_question_sums(_rows({"a": [1.0], "b": [1.0]}))
    with pytest.raises(ValueError, match="same conversations"):
        contribution(full, per_question_sums(_rows({"a": [0.0]})), "recall")
    with pytest.raises(ValueError, match="same questions"):
        contribution(full, per_question_sums(_rows({"a": [0.0, 0.0], "b": [0.0]})), "recall")


def test_leave_one_out_scores_each_choice_on_the_held_out_conversation():
    off = {f"c{i}": [0.5] * 10 for i in range(4)}
    # Helps on c0..c2, hurts on c3: chosen on the others, the switch is always kept; c3 pays for it.
    full = {"c0": [0.6] * 10, "c1": [0.6] * 10, "c2": [0.6] * 10, "c3": [0.35] * 10}
    loco = leave_one_out(per_question_sums(_rows(full)), per_question_sums(_rows(off)), "recall")
    assert all(h["keep"] for h in loco["held_out"].values())
    assert loco["held_out"]["c3"]["gain"] == pytest.approx(-0.15)
    assert loco["gain"] == pytest.approx((0.1 * 3 - 0.15) / 4)
    assert (loco["agree"], loco["conversations"]) == (3, 4)


def test_removal_candidates_need_zero_inside_every_interval_of_every_set():
    def ci(lo, hi):
        return {"recall": {"delta": (lo + hi) / 2, "lo": lo, "hi": hi}}

    sets = [
        {"budgets": [256, 1024], "contributions": {"a": {"256": ci(-0.01, 0.01), "1024": ci(-0.02, 0.0)},
                                                   "b": {"256": ci(-0.01, 0.01), "1024": ci(0.01, 0.03)}}},
        {"budgets": [32], "contributions": {"a": {"32": ci(0.0, 0.0)}, "b": {"32": ci(-0.1, 0.1)}}},
    ]
    assert removal_candidates(sets) == ["a"]


def test_never_help_lists_a_switch_recall_is_better_without():
    def ci(lo, hi):
        return {"recall": {"delta": (lo + hi) / 2, "lo": lo, "hi": hi}}

    sets = [{"budgets": [256, 1024], "contributions": {"hurts": {"256": ci(-0.03, -0.01), "1024": ci(-0.01, 0.01)},
                                                       "mixed": {"256": ci(-0.03, -0.01), "1024": ci(0.01, 0.02)},
                                                       "idle": {"256": ci(0.0, 0.0), "1024": ci(-0.01, 0.01)}}}]
    assert never_help(sets) == ["hurts"]
