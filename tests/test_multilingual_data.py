"""bench.multilingual_data: Korean, Arabic, Hindi, German, Spanish and Thai chat in LoCoMo's format, loadable by the harness, each
question's evidence the turn that says its answer, and every turn giving terms to the keyword channels."""

from __future__ import annotations

import json

from bench.locomo_data import load
from bench.multilingual_data import LANGUAGES, _ko_particles, generate
from lumina_memory.nodes.text.tokenize import terms


def test_the_set_is_loadable_and_each_answer_is_in_its_evidence(tmp_path):
    data = generate(per_language=1, seed=3)
    assert generate(per_language=1, seed=3) == data  # a seed gives the same set
    assert [c["language"] for c in data] == list(LANGUAGES)
    path = tmp_path / "ml.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    for sample, conv in zip(data, load(str(path), None)):
        by_id = {t.dia_id: t for t in conv.turns}
        assert len(conv.questions) == 8
        for q, raw in zip(conv.questions, sample["qa"]):
            (evidence,) = q.evidence
            assert raw["answer"] in by_id[evidence].text
            # the answer is said once by the user; the friend's look-alike says another value
            assert sum(raw["answer"] in t.text for t in conv.turns if t.speaker == "user") >= 1
        assert all(terms(t.text.split(": ", 1)[1]) for t in conv.turns), sample["sample_id"]


def test_korean_particles_follow_the_final_consonant():
    assert _ko_particles("부산<로> 가") == "부산으로 가" and _ko_particles("제주도<로> 가") == "제주도로 가"
    assert _ko_particles("강릉<로>") == "강릉으로" and _ko_particles("수영<를>") == "수영을"
    assert _ko_particles("'아몬드'<라는>") == "'아몬드'라는" and _ko_particles("3월 14일<야>") == "3월 14일이야"
