"""The written-question loader (bench/realtext_written.py): written questions replace a generated conversation's
template ones, a question whose quote is not in its evidence turn (or whose evidence is not a turn) is dropped and
counted, kinds map to LoCoMo categories, conversations without written questions are left out, the file it writes
is read by bench.locomo's loader, and the questions committed in bench/data all pass their own checks."""

from __future__ import annotations

import json
import re

import pytest

from bench import realtext_data as rt
from bench import realtext_written as rw
from bench.locomo_data import load
from bench.realtext_phrases import KIND_CATEGORY

PER_LANGUAGE = 2
SEED = 5


@pytest.fixture(scope="module")
def samples() -> list[dict]:
    return rt.generate(PER_LANGUAGE, SEED, rt.TINY, "dev", ("en",))


def _written(tmp_path, conversations: dict) -> list:
    path = tmp_path / "realtext_written_test.json"
    path.write_text(json.dumps({"version": 1, "conversations": conversations}), encoding="utf-8")
    return [path]


def _question(kind: str, evidence: dict[str, str], text: str = "What did you say about it?") -> dict:
    return {"question": text, "answer": "x", "kind": kind, "answer_in": "turns", "evidence": list(evidence),
            "quotes": evidence}


def _exact_quote(sample: dict) -> tuple[str, str]:
    """The first six-word run of some turn, copied from its text as a writer copies a quote."""
    for dia, text in rw.turn_texts(sample).items():
        if m := re.search(r"[A-Za-z]+(?: [A-Za-z]+){5}", text):
            return dia, m.group(0)
    raise AssertionError("no turn with six words in a row")


def test_written_questions_replace_template_ones_and_a_bad_quote_is_dropped_and_counted(tmp_path, samples):
    sample = samples[0]
    dia, quote = _exact_quote(sample)
    paths = _written(tmp_path, {sample["sample_id"]: {"qa": [
        _question("extraction", {dia: quote}, "Good one?"),
        _question("preference", {dia: quote + " and words that are not there"}, "Bad one?"),
    ]}})
    out, dropped = rw.build("dev", languages=("en",), per_language=PER_LANGUAGE, seed=SEED, size=rt.TINY,
                            paths=paths)
    assert [s["sample_id"] for s in out] == [sample["sample_id"]]
    assert [q["question"] for q in out[0]["qa"]] == ["Good one?"]
    assert dropped.total == 1 and dropped.reasons == {f"quote not in {dia}": 1}
    assert "Bad one?" in dropped.details[0]
    assert out[0]["conversation"] == sample["conversation"]  # the conversation itself is the generated one


def test_evidence_that_is_not_a_turn_or_has_no_quote_is_dropped(tmp_path, samples):
    sample = samples[0]
    dia, quote = _exact_quote(sample)
    missing = {"question": "No quote?", "answer": "x", "kind": "temporal", "answer_in": "dates",
               "evidence": [dia], "quotes": {}}
    paths = _written(tmp_path, {sample["sample_id"]: {"qa": [
        _question("instruction", {"D99:1": "anything at all"}, "No such turn?"), missing,
        _question("chitchat", {dia: quote}, "Unknown kind?")]},
        "realtext-en-77": {"qa": [_question("extraction", {dia: quote}, "No such conversation?")]}})
    out, dropped = rw.build("dev", languages=("en",), per_language=PER_LANGUAGE, seed=SEED, size=rt.TINY,
                            paths=paths)
    assert out == []  # nothing usable left: the conversation is not kept
    assert dropped.reasons == {"evidence D99:1 is not a turn": 1, f"no quote for {dia}": 1,
                               "unknown kind 'chitchat'": 1, "no such conversation": 1}


def test_categories_follow_the_kind_and_conversations_without_written_questions_are_left_out(tmp_path, samples):
    first, second = samples[0], samples[1]
    assert second["split"] == "dev"
    dia, quote = _exact_quote(first)
    paths = _written(tmp_path, {first["sample_id"]: {"qa": [_question(k, {dia: quote}, f"About {k}?")
                                                           for k in KIND_CATEGORY]}})
    out, dropped = rw.build("dev", languages=("en",), per_language=PER_LANGUAGE, seed=SEED, size=rt.TINY,
                            paths=paths)
    assert dropped.total == 0
    assert [s["sample_id"] for s in out] == [first["sample_id"]]  # the second has none written
    assert [(q["kind"], q["category"]) for q in out[0]["qa"]] == list(KIND_CATEGORY.items())
    assert all(q["answer_in"] == "turns" and q["evidence"] == [dia] for q in out[0]["qa"])


def test_the_written_file_is_read_by_the_locomo_loader(tmp_path, samples):
    sample = samples[0]
    dia, quote = _exact_quote(sample)
    paths = _written(tmp_path, {sample["sample_id"]: {"qa": [_question("multi_session", {dia: quote}, "Both?")]}})
    out, _ = rw.build("dev", languages=("en",), per_language=PER_LANGUAGE, seed=SEED, size=rt.TINY, paths=paths)
    path = tmp_path / "written.json"
    path.write_text(rt.dumps(out), encoding="utf-8")
    (conv,) = load(path)
    assert conv.sample_id == sample["sample_id"]
    assert [(q.question, list(q.evidence), q.category) for q in conv.questions] == [
        ("Both?", [dia], KIND_CATEGORY["multi_session"])]


@pytest.mark.parametrize("content", ["not json {", json.dumps({"version": 2, "conversations": {}}),
                                     json.dumps({"version": 1, "conversations": {"realtext-en-00": {}}})])
def test_a_file_not_in_the_writers_format_is_a_named_error(tmp_path, content):
    path = tmp_path / "realtext_written_bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(rw.WrittenQuestionsError, match="realtext_written_bad.json"):
        rw.read_files([path])


def test_every_committed_written_question_is_well_formed():
    """Kind, answer_in, evidence ids and a quote for each: checked against the quotes themselves, which holds
    whatever package versions generate the conversations here."""
    written = rw.read_files(sorted(rw.DATA_DIR.glob(rw.PATTERN)))
    assert sum(len(qa) for qa in written.values()) >= 250
    bad = []
    for sample_id, questions in written.items():
        for name, qa in questions:
            texts = {dia: str(qa.get("quotes", {}).get(dia, "")) for dia in qa.get("evidence", [])}
            why = rw.problem(qa, texts) or ("" if all(re.fullmatch(r"D\d+:\d+", d) for d in texts) else "odd id")
            if why:
                bad.append((name, sample_id, why, qa.get("question")))
    assert bad == []


def test_committed_questions_hold_where_their_versions_are_installed_and_a_run_elsewhere_says_so(tmp_path, capsys):
    """Where the recorded package versions are installed, no written question is dropped; where they are not, the
    command names each version that differs (the conversations are made from those packages' texts)."""
    drift = rw.version_drift()
    if not drift:
        _out, dropped = rw.build("all")
        assert dropped.details == []
    assert rw.main(["--split", "report", "--out", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    for name, (recorded, here) in drift.items():
        assert f"{name} {recorded} here {here}" in err
    assert ("warning:" in err) == bool(drift)


def test_a_version_that_differs_from_the_record_is_named(tmp_path):
    record = json.loads(rw.VERSIONS.read_text(encoding="utf-8"))
    record["packages"]["numpy"] = "0.0.1"
    path = tmp_path / "versions.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert rw.version_drift(path)["numpy"][0] == "0.0.1"


def test_bench_realtext_asks_the_written_questions_and_reuses_kept_data(tmp_path, monkeypatch):
    """``python -m bench.realtext --questions written --keep-data DIR``: only conversations with written questions
    are run, with those questions; a second run reuses the kept, complete data dir (no ingest) and scores the same."""
    from bench import realtext

    sample = rt.generate(1, rt.DEFAULT_SEED, rt.TINY, "dev", ("en",))[0]
    dia, quote = _exact_quote(sample)
    data = tmp_path / "data"
    data.mkdir()
    _written(data, {sample["sample_id"]: {"qa": [_question("extraction", {dia: quote}, f"What was {quote}?")]}})
    monkeypatch.setattr(rw, "DATA_DIR", data)
    argv = ["--split", "dev", "--language", "en", "--per-language", "1", "--size", "tiny", "--questions", "written",
            "--keep-data", str(tmp_path / "kept"), "--budget", "512", "--diagnose-budget", "0"]
    reports = []
    for run in ("first", "again"):
        assert realtext.main([*argv, "--out", str(tmp_path / run)]) == 0
        reports.append(json.loads((tmp_path / f"{run}.json").read_text(encoding="utf-8")))
    first, again = reports
    assert first["conversations"] == [sample["sample_id"]] and first["questions"] == 1
    assert first["question_set"] == "written"
    assert first["ingest"]["turns"] == len(rw.turn_texts(sample)) and again["ingest"]["turns"] == 0
    assert [r["recall"] for r in again["rows"]] == [r["recall"] for r in first["rows"]]
    assert any(r["system"] == "lumina" and r["recall"] == 1.0 for r in first["rows"])
