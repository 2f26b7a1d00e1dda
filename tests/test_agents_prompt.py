"""The cognitive controller's prompt (P1): every section within its share of the budget, the split adjustable per
call, lowest-ranked items dropped first, the working memory as compact valid JSON, and Japanese text cut between
characters, never inside one."""

from __future__ import annotations

import json

import pytest

from lumina_memory.nodes.agents.prompt import assemble_prompt, cut_to_tokens
from lumina_memory.nodes.text.token_count import count_tokens, token_spans
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_agents import AgentParams

P = AgentParams()
WM = {"agent_id": "agent_001", "location": {"x": 100, "y": 64, "z": -200, "biome": "forest"},
      "inventory_summary": "木のツルハシ, パン x3, 石炭 x5", "health": 18,
      "nearby_agents": [{"id": "agent_042", "name": "Lila", "distance": 5, "activity": "farming"}],
      "active_goals": ["鉄インゴットを精錬する", "Lilaと協力する"], "cc_broadcast": "農場エリアで採掘を継続。"}
MEMORIES = [f"記憶{i}: Lilaと北の洞窟で鉄を{i}個掘った。" for i in range(200)]


def _sections(**extra) -> dict:
    return {"system": "あなたは村人カイです。勤勉で、仲間を大切にする。", "working_memory": WM,
            "goals": ["Smelt iron ingots", "Help Lila with the harvest"], "social": ["Lila (5 m, farming)"],
            "memories": MEMORIES, "alerts": ["Night falls in 2 minutes."], **extra}


def test_the_default_budget_is_the_notes_split_and_every_section_stays_within_its_share():
    got = assemble_prompt(_sections(), params=P)
    assert got.budget == {"system": 410, "working_memory": 1229, "goals": 614, "social": 614, "memories": 819,
                          "alerts": 410}
    assert all(got.tokens_by_section[k] <= got.budget[k] for k in got.tokens_by_section)
    assert count_tokens(got.text) == sum(got.tokens_by_section.values()) <= 4096
    assert got.tokens_by_section["memories"] > 700  # filled close to its share


def test_lowest_ranked_memories_are_dropped_first():
    got = assemble_prompt(_sections(), params=P)
    kept = [m for m in MEMORIES if m in got.text.split("\n")]
    assert kept == MEMORIES[: len(kept)] and 0 < len(kept) < len(MEMORIES)
    assert got.dropped == [f"memories[{i}]" for i in range(len(kept), len(MEMORIES))]
    assert got.cut == []


def test_the_split_is_adjustable_per_call():
    alert_lines = [f"Alert {i}: zombies at the north gate, move the children inside now." for i in range(60)]
    normal = assemble_prompt(_sections(alerts=alert_lines), params=P)
    emergency = assemble_prompt(_sections(alerts=alert_lines), adjust={"alerts": 3.0}, params=P)
    assert emergency.budget["alerts"] > normal.budget["alerts"] * 2
    assert emergency.budget["memories"] < normal.budget["memories"]
    assert emergency.tokens_by_section["alerts"] > normal.tokens_by_section["alerts"]
    assert sum(emergency.budget.values()) == 4096
    shares = {"system": 1, "working_memory": 1, "goals": 1, "social": 1, "memories": 6, "alerts": 0}
    memories_first = assemble_prompt(_sections(), total=2000, shares=shares, params=P)
    assert memories_first.budget["memories"] == 1200 and memories_first.budget["alerts"] == 0
    assert "Night falls" not in memories_first.text and memories_first.dropped[-1] == "alerts[0]"
    social = assemble_prompt(_sections(), situation="social", params=P)
    assert social.budget["social"] > normal.budget["social"]


def test_the_settings_set_the_total_and_shares():
    small = AgentParams(prompt_tokens=1000, prompt_shares={"system": 0.5, "working_memory": 0.5, "goals": 0,
                                                           "social": 0, "memories": 0, "alerts": 0})
    got = assemble_prompt({"system": "s", "working_memory": WM, "memories": MEMORIES}, params=small)
    assert got.budget["system"] == 500 and got.budget["memories"] == 0
    assert got.tokens_by_section["memories"] == 0 and len(got.dropped) == len(MEMORIES)


def test_the_working_memory_is_compact_json_and_loses_its_last_keys_first():
    got = assemble_prompt({"working_memory": WM}, params=P)
    body = got.text.split("\n", 1)[1]
    assert json.loads(body) == WM and ", " not in body.replace("木のツルハシ, パン x3, 石炭 x5", "")
    tight = assemble_prompt({"working_memory": WM}, total=120, params=P)  # 36 tokens for the section
    body = tight.text.split("\n", 1)[1]
    doc = json.loads(body)
    assert list(doc) == list(WM)[: len(doc)] and 0 < len(doc) < len(WM)
    assert tight.dropped == [f"working_memory.{k}" for k in list(WM)[len(doc):]]
    assert tight.tokens_by_section["working_memory"] <= tight.budget["working_memory"]


def test_japanese_is_cut_on_token_boundaries_never_inside_a_character():
    text = "北の洞窟でリラと一緒に鉄を掘った。🍞パンを三つ焼いた。" * 50
    for budget in (1, 7, 33, 100):
        cut = cut_to_tokens(text, budget)
        assert count_tokens(cut) <= budget and text.startswith(cut)
        assert len(cut) in {end for _, end in token_spans(text)}
        cut.encode("utf-8")
    got = assemble_prompt({"system": text, "alerts": ["Storm coming over the hills, " * 40]}, total=300, params=P)
    assert got.cut == ["system[0]", "alerts[0]"]
    assert got.tokens_by_section["system"] == got.budget["system"]
    assert got.text.split("\n\n")[0] == cut_to_tokens(text, got.budget["system"])
    assert cut_to_tokens("Storm coming", 1) == "Storm"
    assert cut_to_tokens("", 5) == "" and cut_to_tokens("abc", 0) == ""


def test_english_items_keep_their_order_and_empty_sections_cost_nothing():
    got = assemble_prompt({"goals": ["first goal", "", "second goal"], "social": [], "alerts": "  "}, params=P)
    assert got.text == "## Goals\nfirst goal\nsecond goal"
    assert got.tokens_by_section == {"goals": 6, "social": 0, "alerts": 0}


@pytest.mark.parametrize("sections, field", [
    ({"system": "ok\ud800"}, "system[0]"), ({"memories": ["fine", "bad \udfff"]}, "memories[1]"),
    ({"working_memory": {"note": "bad \ud83d"}}, "working_memory"), ({"working_memory": {"k\udc00": 1}},
                                                                    "working_memory.k\udc00"),
    ({"memories": ["fine", 42]}, "memories[1]"), ({"alerts": ["ok", "bell\x07"]}, "alerts[1]"),
    ({"'; DROP TABLE x; --": "x"}, "sections"),
    ({"../system": "x"}, "sections"),
])
def test_bad_input_is_a_named_error(sections, field):
    with pytest.raises(InvalidInput) as err:
        assemble_prompt(sections, params=P)
    assert err.value.field == field


@pytest.mark.parametrize("kwargs, field", [({"total": 0}, "total"), ({"total": "4096"}, "total"),
                                           ({"adjust": {"weather": 2.0}}, "shares"),
                                           ({"shares": {"system": -1, "alerts": 1}}, "shares"),
                                           ({"situation": "panic"}, "shares")])
def test_bad_budgets_are_named_errors(kwargs, field):
    with pytest.raises(InvalidInput) as err:
        assemble_prompt({"system": "x"}, params=P, **kwargs)
    assert err.value.field == field


def test_huge_values_stay_within_the_budget():
    got = assemble_prompt({"system": "word " * 100_000, "memories": ["長い記憶" * 5000] * 3,
                           "working_memory": {"notes": "x " * 50_000}}, params=P)
    assert got.tokens_by_section["system"] == 410 and got.tokens_by_section["memories"] == 819
    assert got.tokens_by_section["working_memory"] == 0 and got.dropped[0] == "working_memory.notes"
    assert count_tokens(got.text) <= 4096
