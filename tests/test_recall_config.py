"""Recall's configuration is a typed model (stores/settings_recall.py): one switch per channel and stage, each with
a ``recall_*`` setting, named presets, and a misspelt switch is an error naming it rather than a silent no-op."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.settings import LuminaSettings
from lumina_memory.stores.settings_recall import CHANNELS, PRESETS, SWITCHES, Channel, RecallConfig, Stage


def test_every_switch_has_a_setting_and_the_defaults_turn_every_part_on():
    settings = LuminaSettings()
    assert len(SWITCHES) == 17 and set(SWITCHES) == set(RecallConfig.model_fields)
    assert {f"recall_{name}" for name in SWITCHES} <= set(LuminaSettings.model_fields)
    assert RecallConfig.from_settings(settings) == PRESETS["default"] == RecallConfig()
    assert all(RecallConfig.from_settings(settings).switches().values())


def test_a_misspelt_switch_is_a_validation_error_naming_it():
    with pytest.raises(ValidationError, match="turn_dens"):
        RecallConfig(turn_dens=False)
    with pytest.raises(ValidationError, match="knowlege"):
        RecallConfig().without(["knowlege"])
    for removed in ("turn_dense", "segment_dense", "function_words", "when"):  # parts removed from recall
        with pytest.raises(ValidationError, match=removed):
            RecallConfig().without([removed])
    with pytest.raises(ValidationError, match="grpah"):
        RecallConfig.only(["grpah"])
    with pytest.raises(ValueError, match="unknown recall preset 'plan'.*plain"):
        RecallConfig.preset("plan")


def test_switches_off_by_name_or_enum_and_presets():
    off = RecallConfig().without([Channel.GRAPH, "mmr"]).without(Stage.CROSSLINGUAL)
    assert [name for name, on in off.switches().items() if not on] == ["graph", "mmr", "crosslingual"]
    assert CHANNELS == tuple(c.value for c in Channel) and SWITCHES[: len(CHANNELS)] == CHANNELS
    plain = RecallConfig.preset("plain").switches()
    assert [name for name, on in plain.items() if on] == ["turn_content", "turn_keyword"]
    assert RecallConfig.preset("episodes") == RecallConfig().without(["knowledge", "procedures"])


def test_a_weight_setting_of_zero_turns_its_switch_off(monkeypatch):
    monkeypatch.setenv("LUMINA_RECALL_KEYWORD_CONTEXT", "0")
    monkeypatch.setenv("LUMINA_RECALL_CROSSLINGUAL", "false")
    config = RecallConfig.from_settings(LuminaSettings())
    assert not config.keyword_context and not config.crosslingual and config.turn_keyword


TEXTS = ("Tending the allotment garden calms me; the allotment garden is my favourite place.", "Lovely.",
         "Rain again today.", "Nice.", "Last Sunday I planted tomatoes at the allotment garden!", "Great!",
         "I baked bread.", "Yum.", "The allotment garden club meets often, the allotment garden people are kind.")
QUESTION = "When did I work at the allotment garden?"


def _garden(memory) -> None:
    replay(memory.graph, "mika", [{"user_id": "mika", "speaker": "lumina" if n % 2 else "user", "text": text,
                                   "ts": 1_790_000_000.0 + 600 * n, "source_id": f"m:{n}"}
                                  for n, text in enumerate(TEXTS)], flush=True)


def _ranked(memory, **kwargs) -> list[tuple[str, ...]]:
    """The source ids of each item, in rank order."""
    items = recall(memory.services, "mika", QUESTION, purpose="question", budget=64, **kwargs)
    return [tuple(i["source_ids"]) for i in items]


def test_a_switch_set_in_the_settings_acts_like_turning_it_off_per_call(memory_factory):
    on = memory_factory()
    _garden(on)
    off = memory_factory(recall_knowledge=False)
    _garden(off)
    assert _ranked(off) == _ranked(on, disabled=("knowledge",)) != _ranked(on)  # no fact item leads
    assert _ranked(on, config=RecallConfig().without(["knowledge"])) == _ranked(off)
    assert _ranked(off, config=RecallConfig()) == _ranked(on)  # a config given replaces the settings' switches
    with pytest.raises(ValidationError, match="whne"):
        recall(on.services, "mika", QUESTION, disabled=("whne",))
    plain = recall(on.services, "mika", QUESTION, purpose="question", limit=3, config=RecallConfig.preset("plain"))
    assert plain and {t for i in plain for t in i["tiers"]} <= {"long-term", "archive"}
