"""The real-text development set (bench/realtext_data.py): deterministic from its seed, replies that are real text
shipped in installed packages, every question's evidence turns present and holding the answer, a Japanese set
whose user side is Japanese, and a held-out split disjoint from the development one. A tiny configuration."""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest

from bench import realtext_data as rt
from bench.locomo_data import CATEGORY_NAMES, load
from bench.realtext_phrases import KIND_CATEGORY
from bench.realtext_questions import date_answer
from bench.realtext_sources import cloze, pool

KANA = re.compile(r"[\u3040-\u30ff]")
SESSION = re.compile(r"^session_(\d+)$")
PER_LANGUAGE = 3  # index 2 of each language is held out


@pytest.fixture(scope="module")
def samples() -> list[dict]:
    return rt.generate(PER_LANGUAGE, seed=5, size=rt.TINY)


def _turns(sample: dict) -> dict[str, tuple[int, dict]]:
    return {t["dia_id"]: (int(m.group(1)), t) for k, v in sample["conversation"].items()
            if (m := SESSION.match(k)) and isinstance(v, list) for t in v}


def test_same_seed_same_bytes_other_seed_other_set(samples):
    again = rt.generate(PER_LANGUAGE, seed=5, size=rt.TINY)
    assert rt.dumps(again) == rt.dumps(samples)
    assert rt.dumps(rt.generate(PER_LANGUAGE, seed=6, size=rt.TINY)) != rt.dumps(samples)


def test_replies_are_real_text_from_installed_packages(samples):
    texts = {s.name: s.text for s in pool()}
    assert any(name.startswith("pydoc:") for name in texts) and any(name.startswith("doc:langgraph") for name in texts)
    for sample in samples:
        replies = [t["text"] for _, t in _turns(sample).values() if t["speaker"] == rt.ASSISTANT]
        assert replies and len(sample["sources"]) >= len(replies)
        for name in sample["sources"]:  # every text used is in some reply, unchanged
            assert any(texts[name] in reply for reply in replies), name
        assert max(len(r.split()) for r in replies) >= 300


def test_every_question_has_its_evidence_and_its_answer_there(samples):
    kinds = set()
    for sample in samples:
        turns = _turns(sample)
        dates = {k: sample["conversation"][f"session_{k}_date_time"] for k in {s for s, _ in turns.values()}}
        for qa in sample["qa"]:
            kinds.add(qa["kind"])
            assert qa["category"] == KIND_CATEGORY[qa["kind"]] and qa["category"] in CATEGORY_NAMES
            assert qa["evidence"] and all(e in turns for e in qa["evidence"]), qa
            text = "\n".join(turns[e][1]["text"] for e in qa["evidence"])
            if qa["answer_in"] == "turns":
                for part in qa["answer"].split(", "):
                    assert part in text, (qa, part)
            else:  # a date or a count of days worked out from the evidence sessions' dates
                sessions = [turns[e][0] for e in qa["evidence"]]
                when = [load_date(dates[s]) for s in sessions]
                expected = (date_answer(when[0], sample["language"]) if len(when) == 1
                            else str((when[-1].date() - when[0].date()).days))
                assert expected in qa["answer"], qa
    assert kinds == set(KIND_CATEGORY)


def load_date(value: str) -> datetime:
    from bench.locomo_data import parse_when

    return parse_when(value, datetime(1970, 1, 1))


def test_updates_ask_for_the_latest_statement(samples):
    for sample in samples:
        turns = _turns(sample)
        for qa in (q for q in sample["qa"] if q["kind"] == "knowledge_update"):
            (evidence,) = qa["evidence"]
            session, turn = turns[evidence]
            later = [t["text"] for d, (s, t) in turns.items() if t["speaker"] != rt.ASSISTANT
                     and (s, int(d.split(":")[1])) > (session, int(evidence.split(":")[1]))]
            assert qa["answer"] in turn["text"] and not any(qa["answer"] in t for t in later)


def test_extraction_points_at_one_passage_of_a_long_reply(samples):
    for sample in samples:
        turns = _turns(sample)
        for qa in (q for q in sample["qa"] if q["kind"] == "extraction"):
            reply = turns[qa["evidence"][0]][1]
            assert reply["speaker"] == rt.ASSISTANT and qa["answer"] in reply["text"]
            assert "___" in qa["question"] and qa["answer"] not in qa["question"].split("___")[0][-2:]


def test_cloze_window_is_unique_and_none_without_prose():
    import random

    text = " ".join(f"word{i}" for i in range(40)) + "\n" + "short line"
    c = cloze(random.Random(1), text)
    assert c is not None and text.count(f"{c.left}{c.word}{c.right}") == 1
    assert cloze(random.Random(1), "    code only\n    x = 1\n") is None


def test_japanese_set_is_japanese_and_says_its_replies_are_english(samples):
    ja = [s for s in samples if s["language"] == "ja"]
    assert len(ja) == PER_LANGUAGE
    for sample in ja:
        assert sample["reply_language"] == "en"
        users = [t["text"] for _, t in _turns(sample).values() if t["speaker"] != rt.ASSISTANT]
        assert users and all(KANA.search(u) for u in users)
        assert all(KANA.search(q["question"]) for q in sample["qa"])
    for sample in (s for s in samples if s["language"] == "en"):
        assert not any(KANA.search(q["question"]) for q in sample["qa"])


def test_held_out_split_is_disjoint_and_covers_every_language(samples):
    dev = rt.generate(PER_LANGUAGE, seed=5, size=rt.TINY, split="dev")
    report = rt.generate(PER_LANGUAGE, seed=5, size=rt.TINY, split="report")
    dev_ids, report_ids = {s["sample_id"] for s in dev}, {s["sample_id"] for s in report}
    assert dev_ids and report_ids and not dev_ids & report_ids
    assert dev_ids | report_ids == {s["sample_id"] for s in samples}
    assert {s["language"] for s in report} == set(rt.LANGUAGES)


def test_the_harness_loader_reads_it(samples, tmp_path):
    path = tmp_path / "realtext.json"
    path.write_text(rt.dumps(samples), encoding="utf-8")
    convs = load(path)
    assert [c.sample_id for c in convs] == [s["sample_id"] for s in samples]
    for conv, sample in zip(convs, samples):
        assert not conv.unreadable_dates
        assert len(conv.questions) == len(sample["qa"])
        stamps = [t.ts for t in conv.turns]
        assert stamps == sorted(stamps) and stamps[-1] - stamps[0] > 7 * 86400
    assert json.loads(path.read_text(encoding="utf-8"))[0]["split"] in ("dev", "report")


def test_same_set_whatever_the_process_imported_before():
    """The texts are read from installed modules: a submodule imported elsewhere first must not change them."""
    import subprocess
    import sys

    script = ("import hashlib, {pre}; from bench import realtext_data as rt; "
              "print(hashlib.sha256(rt.dumps(rt.generate(1, seed=5, size=rt.TINY)).encode()).hexdigest())")
    plain, busy = (subprocess.run([sys.executable, "-c", script.format(pre=pre)], capture_output=True, text=True,
                                  check=True).stdout for pre in ("sys", "duckdb.bytes_io_wrapper, langchain_core.messages.content"))
    assert plain.strip() and plain == busy
