"""bench.dependent_facts: the halves split the scenarios, and a scenario is scored from what learning stored."""

from __future__ import annotations

import json

import pytest

from bench import dependent_facts as bench


def test_the_halves_split_the_scenarios_per_language():
    dev, report = bench.scenarios("dev"), bench.scenarios("report")
    assert not {s["id"] for s in dev} & {s["id"] for s in report}
    everything = [json.loads(line) for line in bench.DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(dev) + len(report) == len(everything)
    for lang in bench.LANGUAGES:
        mine = [s for s in everything if s["lang"] == lang]
        assert len(mine) >= 15 and all(s["dependent"] and s["untouched"] and s["change"] for s in mine)


@pytest.mark.slow  # learning loads Sudachi and the embedder
def test_a_scenario_is_scored_from_the_stored_facts(tmp_path):
    from lumina_memory.nodes.knowledge.params import KnowledgeParams
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    archive = DuckDBArchive(tmp_path / "a.duckdb")
    try:
        scenario = {"id": "en90", "lang": "en", "before": ["I live in Osaka. I take the train from Umeda every morning.",
                                                             "I really love coffee."],
                    "change": ["I moved to Fukuoka last month."], "dependent": ["train from Umeda", "no such fact"],
                    "untouched": ["coffee"]}
        result = bench.run_scenario(archive.knowledge, scenario, KnowledgeParams())
        assert (result["caught"], result["missed"], result["wrongly_touched"], result["untouched_read"]) == (1, 0, 0, 1)
        assert result["not_read"] == ["no such fact"] and result["change_read"]
        # The same scenario with the routine said after the move: nothing rests on Osaka, so nothing is caught.
        later = {**scenario, "id": "en92", "before": ["I live in Osaka.", "I really love coffee."],
                 "change": ["I moved to Fukuoka last month.", "I take the train from Umeda every morning."]}
        result = bench.run_scenario(archive.knowledge, later, KnowledgeParams())
        assert (result["caught"], result["missed"]) == (0, 1)
        summary = bench.summarise([result])
        assert summary["en"]["caught"]["value"] == 0.0 and summary["ja"]["scenarios"] == 0
    finally:
        archive.close()
