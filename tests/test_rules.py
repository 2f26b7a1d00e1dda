"""Pure decision functions, tested alone."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.boundary_rules import BoundaryInput, BoundaryRules, decide, opens_with_shift_phrase
from lumina_memory.nodes.character_select import choose_character, named_characters
from lumina_memory.nodes.domain import detect_domain
from lumina_memory.nodes.text.emotion import analyse
from lumina_memory.nodes.text.importance import importance, novelty, relatedness
from lumina_memory.nodes.text.keywords import extract_keywords
from lumina_memory.nodes.text.tokenize import nouns, terms
from lumina_memory.nodes.upsert_long_term import promotion_threshold
from lumina_memory.stores.settings import LuminaSettings

RULES = BoundaryRules(similarity_threshold=0.3, similarity_min_turns=3, idle_seconds=600, max_turns=12,
                      shift_phrases=LuminaSettings().shift_phrases)


def _inp(**kw):
    base = dict(open_turns=5, idle_seconds=30.0, similarity=0.9, text="うん、そうだね", speaker="user",
                domain_before="", domain_now="")
    return BoundaryInput(**{**base, **kw})


def test_first_turn_never_closes():
    assert not decide(_inp(open_turns=0, idle_seconds=99999), RULES).close


@pytest.mark.parametrize(
    "kw, reason",
    [
        (dict(idle_seconds=601), "idle"),
        (dict(open_turns=12), "turn_cap"),
        (dict(text="ところで、明日の予定は？"), "shift_phrase"),
        (dict(text="By the way, did you see it?"), "shift_phrase"),
        (dict(domain_before="movie", domain_now="food"), "domain_change"),
        (dict(similarity=0.1), "low_similarity"),
    ],
)
def test_each_rule_closes_and_is_named(kw, reason):
    decision = decide(_inp(**kw), RULES)
    assert decision.close and decision.reason == reason and decision.verdicts[reason]


def test_nothing_fires_on_an_ordinary_turn():
    decision = decide(_inp(), RULES)
    assert not decision.close and decision.reason == "" and not any(decision.verdicts.values())


def test_similarity_is_not_judged_on_a_young_segment():
    assert not decide(_inp(open_turns=2, similarity=0.0), RULES).close


def test_idle_exactly_at_the_limit_stays_open():
    assert not decide(_inp(idle_seconds=600), RULES).close


def test_shift_phrase_only_counts_near_the_start():
    phrases = LuminaSettings().shift_phrases
    assert opens_with_shift_phrase("そういえば、猫は元気？", phrases)
    assert not opens_with_shift_phrase("昨日見た映画がとても良くて、長い話になるけど、ところで", phrases)


@pytest.mark.parametrize(
    "text, expected",
    [("ノクス、どう思う？", "nox"), ("Clarisse, what do you think?", "clarisse"), ("ルミナ教えて", "lumina")],
)
def test_a_named_character_answers(text, expected):
    assert choose_character(text, {"lumina": 0, "clarisse": 0, "nox": 9}) == expected


def test_otherwise_the_quietest_character_answers():
    assert choose_character("今日は疲れた", {"lumina": 3, "clarisse": 1, "nox": 2}) == "clarisse"
    assert choose_character("今日は疲れた", {}, requested="nox") == "nox"
    assert named_characters("ノクスとルミナ") == ["nox", "lumina"]


def test_domain_needs_clear_evidence():
    assert detect_domain("映画館で映画を観た") == "movie"
    assert detect_domain("映画") == ""  # one cue is not enough
    assert detect_domain("今日はいい天気") == ""


def test_japanese_tokenisation_keeps_compounds_and_drops_particles():
    assert "東京駅" in terms("東京駅で待ち合わせ")
    assert "で" not in terms("東京駅で待ち合わせ")
    assert nouns("猫のモカは3歳") == ["猫", "モカ"]


def test_english_words_are_stemmed_terms_and_only_nouns_are_keyword_candidates():
    text = "I walked to Tokyo and felt happy. Happy dogs, happy cats!"
    # Stop words go, the rest is lower-cased and stemmed (Snowball: happy → happi, walked → walk, dogs → dog);
    # a word repeated is a term each time.
    assert terms(text) == ["walk", "tokyo", "felt", "happi", "happi", "dog", "happi", "cat"]
    assert terms("happy dogs") == terms("a happy dog") and terms("I walk") == terms("walked")
    # Sudachi tags "happy" as an adjectival noun (形状詞), so it is a term but never a keyword candidate,
    # however often it comes back; stop words ("I", "to", "and") are neither.
    assert nouns(text) == ["walked", "tokyo", "felt", "dogs", "cats"]


def test_keywords_prefer_repeated_nouns():
    kws = extract_keywords(["猫のモカが好き", "モカは茶トラ", "モカのおやつ"], 3)
    assert kws[0] == "モカ"


def test_emotion_lexicon_reads_valence_and_negation():
    assert analyse("すごく嬉しい！").valence > 0.3
    assert analyse("プレゼンが不安で緊張する").valence < -0.3
    assert analyse("不安じゃない").valence > analyse("不安だ").valence
    assert analyse("明日は火曜日").valence == 0.0


def test_importance_formula_follows_l8():
    assert importance(1.0, 1.0, 1.0, 10) == 1.0
    assert importance(0.0, 0.0, 0.0, 0) == 0.0
    assert importance(-0.5, 0.0, 0.0, 0) == pytest.approx(0.2)
    assert novelty([0.9, 0.85, 0.2], 0.8, 5) == pytest.approx(0.6)
    assert relatedness([0.9, 0.6, 0.3, 0.1]) == pytest.approx(0.6)


def test_only_the_top_seventy_percent_is_promoted():
    history = [i / 100 for i in range(100)]
    assert promotion_threshold(history, 0.7) == pytest.approx(0.297, abs=0.01)
    assert promotion_threshold(history[:5], 0.7) == 0.0  # too little history to judge


def test_boundary_decision_as_dict_matches_dataclasses_asdict():
    from dataclasses import asdict

    from lumina_memory.nodes.boundary_rules import BoundaryDecision

    for decision in (BoundaryDecision(True, "idle", {"idle": True, "turn_cap": False}, 0.12, 900.0),
                     BoundaryDecision(False, "", {"first_turn": True})):
        as_dict = decision.as_dict()
        assert as_dict == asdict(decision)  # a field added later must be added to as_dict too
        as_dict["verdicts"]["idle"] = "changed"
        assert decision.verdicts.get("idle") != "changed"  # a copy, not the decision's own dict
