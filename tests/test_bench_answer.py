"""answer@B: whether the gold answer's own text is in the context packed into B tokens (bench.common.answer_found),
beside evidence recall, which credits an excerpt of a long turn with the whole turn. The matcher on its own, then
the harness on the long-reply mini set (tests/data/longreply_mini.json) through the real graph, stores and
baselines."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from bench import locomo
from bench.common import answer_found, answer_parts, normalise_text
from bench.locomo_data import load

LONGREPLY_MINI = Path(__file__).parent / "data" / "longreply_mini.json"
ANSWER = re.compile(r"^ANSWER answer=(?P<answer>\d+\.\d+) baseline_best=(?P<best>\d+\.\d+) "
                    r"questions=(?P<questions>\d+) without_answer=(?P<without>\d+)$")


# --- the matcher --------------------------------------------------------------------------------------------------

def test_normalisation_is_nfkc_casefolded_and_collapses_whitespace():
    assert normalise_text("ＰｏｓｔｇｒｅＳＱＬ\u3000１６\n\t on  Port") == "postgresql 16 on port"
    assert answer_found("PostgreSQL 16", ["We went with ｐｏｓｔｇｒｅｓｑｌ\n  16 in the end."]) == 1.0
    assert answer_found("Straße", ["we moved to the STRASSE office"]) == 1.0  # case-folded, not only lower-cased


def test_an_absent_answer_scores_zero_and_an_empty_one_is_left_out():
    assert answer_found("Valkey 8", ["The cache is Redis 7.", "The port is 6379."]) == 0.0
    assert answer_found("Valkey 8", []) == 0.0
    assert answer_found("", ["anything"]) is None
    assert answer_found(" 、 ", ["anything"]) is None  # separators only: nothing to look for


def test_a_value_inside_a_longer_number_or_word_is_not_found():
    assert answer_found("1 GB", ["the limit went to 11 GB"]) == 0.0
    assert answer_found("1 GB", ["the limit went to 1 GB."]) == 1.0
    assert answer_found("RQ", ["we run Arq for jobs"]) == 0.0
    assert answer_found("2月2日", ["締め切りは12月2日"]) == 0.0
    assert answer_found("Netdata", ["監視はNetdataに決めた"]) == 1.0  # a CJK neighbour is not a longer word


def test_english_multi_part_answers_score_the_share_of_parts_found():
    assert answer_parts("PostgreSQL 16; Python 3.12") == ["postgresql 16", "python 3.12"]
    assert answer_parts("Dramatiq and Celery; picked Dramatiq") == ["dramatiq", "celery"]
    assert answer_parts("first 512 MB, later 1 GB") == ["512 mb", "1 gb"]
    assert answer_parts("Redis, Celery, and Django") == ["redis", "celery", "django"]
    assert answer_parts("1,000 requests") == ["1,000 requests"]  # a thousands comma is not a separator
    context = ["The production database is PostgreSQL 16.", "Unrelated: the cache is Valkey 8."]
    assert answer_found("PostgreSQL 16; Python 3.12", context) == 0.5
    assert answer_found("PostgreSQL 16 and Valkey 8", context) == 1.0
    assert answer_found("first 512 MB, later 1 GB", ["now 1 GB"]) == 0.5


def test_japanese_parts_joined_by_touten_and_to():
    assert answer_parts("Netdata、田中さん") == ["netdata", "田中さん"]
    assert answer_parts("GrafanaとZabbix。Grafanaに決めた") == ["grafana", "zabbix"]
    assert answer_parts("最初は12月8日、その後8月19日") == ["12月8日", "8月19日"]
    context = ["監視ツールはNetdataにしました。", "レビューは佐藤さんにお願いします。"]
    assert answer_found("Netdata、田中さん", context) == 0.5
    assert answer_found("Netdataと佐藤さん", context) == 1.0
    assert answer_found("最初は12月8日、その後8月19日", ["締め切りは８月１９日に変わった"]) == 0.5  # NFKC digits
    assert answer_found("田中さん", context) == 0.0


# --- the harness on the long-reply mini set ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    out = tmp_path_factory.mktemp("answer") / "report.json"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = locomo.main(["--data", str(LONGREPLY_MINI), "--budget", "512,64", "--no-ablation", "--no-mem0",
                            "--quiet", "--json", str(out)])
    assert code == 0
    return buffer.getvalue(), json.loads(out.read_text(encoding="utf-8"))


def test_every_system_has_answer_figures_in_range(harness):
    _stdout, report = harness
    questions = load(LONGREPLY_MINI)
    with_answer = sum(1 for c in questions for q in c.questions if answer_parts(q.answer))
    assert report["questions_without_answer"] == report["questions"] - with_answer
    assert set(report["results"]) == {"lumina", "bm25", "vectors", "rrf"}
    for system, per in report["results"].items():
        for budget in ("512", "64"):
            s = per[budget]
            assert 0.0 <= s["answer"] <= 1.0 and s["answer_n"] == with_answer, (system, budget, s)
            for name, cat in s["by_category"].items():
                assert 0.0 <= cat["answer"] <= 1.0, (system, budget, name, cat)
            # Overall answer@B is the mean over the same questions the categories split.
            counted = sum(c["answer_n"] for c in s["by_category"].values())
            weighted = sum(c["answer_n"] * c["answer"] for c in s["by_category"].values() if c["answer_n"]) / counted
            assert counted == with_answer and weighted == pytest.approx(s["answer"], abs=1e-3)


def test_a_larger_budget_packs_at_least_as_many_answers(harness):
    _stdout, report = harness
    ours = report["results"]["lumina"]
    assert ours["64"]["answer"] <= ours["512"]["answer"]
    assert ours["512"]["answer"] > 0  # the long-reply set's answers are values the packed text can hold


def test_answer_line_and_table_are_printed(harness):
    stdout, report = harness
    lines = stdout.strip().splitlines()
    assert lines[-1].startswith("RESULT ")  # RESULT stays last
    match = ANSWER.match(lines[-2])
    assert match, lines[-2]
    first = report["results"]["lumina"]["512"]
    assert float(match["answer"]) == pytest.approx(first["answer"], abs=1e-4)
    assert int(match["questions"]) == first["answer_n"]
    assert int(match["without"]) == report["questions_without_answer"]
    best = max(per["512"]["answer"] for s, per in report["results"].items() if s != "lumina")
    assert float(match["best"]) == pytest.approx(best, abs=1e-4)
    for budget in ("512", "64"):
        assert f"answer@B at B = {budget}:" in stdout
    header = next(line for line in lines if line.startswith("| system | answer@B | recall@B |"))
    row = next(line for line in lines if line.startswith("| lumina | ") and line.count("|") == header.count("|"))
    assert row.startswith(f"| lumina | {first['answer']:.3f} | {first['recall']:.3f} |"), row
