"""The long-reply evaluation set of issue 19 (bench/longreply_data.py, tests/data/longreply_mini.json): LoCoMo's
format read by the harness's own loader, the mini file its script's output byte for byte, English and Japanese,
long markdown replies with code and lists, facts grounded in their evidence turns, updates with an earlier
different value, multi-hop across sessions, a deterministic generator and its degenerate giant reply."""

from __future__ import annotations

import importlib.util
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench import longreply_data as lr
from bench.locomo_data import CATEGORY_NAMES, load, parse_when
from nodes.text.chunking import count_tokens

DATA = Path(__file__).parent / "data"
MINI = DATA / "longreply_mini.json"
SESSION = re.compile(r"^session_(\d+)$")
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
NEVER = datetime(1970, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def mini() -> list[dict]:
    return json.loads(MINI.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def generated() -> list[dict]:
    return lr.generate(lr.DEFAULT_PER_LANGUAGE, lr.DEFAULT_SEED)


def _turns(sample: dict) -> dict[str, tuple[int, dict]]:
    """dia_id → (session number, turn), read from the raw JSON (not through the loader)."""
    out = {}
    for key, value in sample["conversation"].items():
        if (m := SESSION.match(key)) and isinstance(value, list):
            for turn in value:
                out[turn["dia_id"]] = (int(m.group(1)), turn)
    return out


def _replies(sample: dict) -> list[str]:
    degenerate = sample.get("degenerate_dia_id")
    return [t["text"] for dia, (_, t) in _turns(sample).items() if t["speaker"] == "Assistant" and dia != degenerate]


def test_mini_file_is_its_script_output_byte_for_byte():
    spec = importlib.util.spec_from_file_location("make_longreply", DATA / "make_longreply.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.build() == MINI.read_text(encoding="utf-8")


def test_mini_file_loads_with_the_harness_loader(mini):
    loaded = {c.sample_id: c for c in load(MINI)}
    assert sorted(loaded) == sorted(s["sample_id"] for s in mini)
    for sample in mini:
        conv = loaded[sample["sample_id"]]
        raw = _turns(sample)
        assert [t.dia_id for t in conv.turns] == list(raw)
        assert {t.speaker for t in conv.turns} == {"user", "lumina"}
        assert all(t.name == "Assistant" for t in conv.turns if t.speaker == "lumina")
        # every question of a category the loader scores is kept, with its evidence as written
        scored = [q for q in sample["qa"] if q["category"] in CATEGORY_NAMES]
        assert [(q.question, q.evidence) for q in conv.questions] == [(q["question"], q["evidence"]) for q in scored]


def test_mini_has_one_conversation_per_language_of_the_mini_size(mini):
    assert sorted(s["language"] for s in mini) == ["en", "ja"]
    for sample in mini:
        sessions = {n for n, _ in _turns(sample).values()}
        assert 4 <= len(sessions) <= 5
        assert 10 <= len(sample["qa"]) <= 14
        text = " ".join(t["text"] for _, t in _turns(sample).values())
        cjk_share = len(CJK.findall(text)) / len(text)
        assert cjk_share > 0.3 if sample["language"] == "ja" else cjk_share == 0
        assert sample["conversation"]["speaker_b"] == "Assistant"


def test_mini_reply_lengths_meet_the_spec(mini):
    for sample in mini:
        lengths = [count_tokens(r) for r in _replies(sample)]
        lo, hi = (200, 2000) if sample["language"] == "en" else (400, 3000)
        assert sum(lo <= n for n in lengths) >= 3, lengths
        assert all(lo <= n <= hi for n in lengths), lengths


def test_generated_reply_lengths_meet_the_spec(generated):
    for sample in generated:
        lengths = [count_tokens(r) for r in _replies(sample)]
        lo, hi = lr.DEFAULT.reply_tokens[sample["language"]]
        assert (lo, hi) == ((200, 2000) if sample["language"] == "en" else (400, 4000))
        assert all(lo <= n <= hi for n in lengths), (sample["sample_id"], lengths)
    # a skewed spread, not one length: some short, some long replies
    every = [count_tokens(r) for s in generated if s["language"] == "en" for r in _replies(s)]
    assert min(every) < 400 and max(every) > 1200


@pytest.mark.parametrize("which", ["mini", "generated"])
def test_replies_carry_code_blocks_lists_and_headings(which, request):
    for sample in request.getfixturevalue(which):
        replies = _replies(sample)
        assert all(r.count("```") % 2 == 0 for r in replies)  # fences come in pairs
        assert sum("```" in r for r in replies) >= 2
        assert any(re.search(r"^- \S", r, re.M) for r in replies)
        assert any(re.search(r"^\d+\. \S", r, re.M) for r in replies)
        assert any(re.search(r"^#{2,3} \S", r, re.M) for r in replies)


@pytest.mark.parametrize("which", ["mini", "generated"])
def test_session_dates_are_locomo_format_read_by_parse_when(which, request):
    for sample in request.getfixturevalue(which):
        conv = sample["conversation"]
        numbers = sorted(n for n, _ in _turns(sample).values())
        whens = [conv[f"session_{n}_date_time"] for n in sorted(set(numbers))]
        assert all(re.fullmatch(r"\d{1,2}:\d{2} [ap]m on \d{1,2} [A-Z][a-z]+, \d{4}", w) for w in whens), whens
        parsed = [parse_when(w, NEVER) for w in whens]
        assert NEVER not in parsed
        assert parsed == sorted(parsed) and len(set(p.date() for p in parsed)) == len(parsed)


@pytest.mark.parametrize("which", ["mini", "generated"])
def test_every_question_is_complete_and_its_evidence_exists(which, request):
    for sample in request.getfixturevalue(which):
        turns = _turns(sample)
        assert {q["category"] for q in sample["qa"]} == {1, 2, 3, 4, 6}
        for q in sample["qa"]:
            assert q["question"] and q["answer"] and q["evidence"]
            assert all(dia in turns for dia in q["evidence"]), q
            if q["category"] == 4:  # the fact is said in its evidence turn
                assert any(q["answer"] in turns[dia][1]["text"] for dia in q["evidence"]), q


@pytest.mark.parametrize("which", ["mini", "generated"])
def test_update_questions_have_an_earlier_different_value(which, request):
    for sample in request.getfixturevalue(which):
        turns = _turns(sample)
        updates = [q for q in sample["qa"] if q["category"] == 6]
        assert len(updates) >= 2
        for q in updates:
            u = q["update"]
            assert u["from"] != u["to"]
            (old,), (new,) = u["from_evidence"], u["to_evidence"]
            assert turns[old][0] < turns[new][0], q  # said in an earlier session
            assert u["from"] in turns[old][1]["text"] and u["to"] in turns[new][1]["text"]
            assert q["answer"] in (u["from"], u["to"]) and new in q["evidence"]
            if q["answer"] == u["to"]:
                assert q["evidence"] == [new]  # "now": the latest statement only
    if which == "mini" and 6 in CATEGORY_NAMES:  # the harness scores updates once its loader accepts category 6
        loaded = {c.sample_id: c for c in load(MINI)}
        for sample in request.getfixturevalue(which):
            want = [q["evidence"] for q in sample["qa"] if q["category"] == 6]
            assert [q.evidence for q in loaded[sample["sample_id"]].questions if q.category == 6] == want


@pytest.mark.parametrize("which", ["mini", "generated"])
def test_multi_hop_spans_sessions_and_temporal_answers_match_the_clock(which, request):
    for sample in request.getfixturevalue(which):
        turns = _turns(sample)
        conv = sample["conversation"]
        for q in sample["qa"]:
            sessions = {turns[dia][0] for dia in q["evidence"]}
            if q["category"] == 1:
                assert len(sessions) >= 2, q
            if q["category"] == 2 and len(q["evidence"]) == 1:  # "when": the date of the evidence session
                when = parse_when(conv[f"session_{sessions.pop()}_date_time"], NEVER)
                expected = (f"{when.year}年{when.month}月{when.day}日" if sample["language"] == "ja"
                            else f"{when.day} {when.strftime('%B')}, {when.year}")
                assert q["answer"] == expected, q


def test_facts_sit_at_the_start_middle_and_end_of_long_replies(generated):
    positions = []
    for sample in generated:
        turns = _turns(sample)
        for q in sample["qa"]:
            if q["category"] != 4 or turns[q["evidence"][0]][1]["speaker"] != "Assistant":
                continue
            text = turns[q["evidence"][0]][1]["text"]
            positions.append(text.index(q["answer"]) / len(text))
    assert len(positions) >= 20
    assert min(positions) < 0.2 and max(positions) > 0.8 and any(0.3 < p < 0.7 for p in positions)


def test_generated_set_has_the_default_size(generated):
    assert [s["language"] for s in generated] == ["en"] * 6 + ["ja"] * 6
    assert len({s["sample_id"] for s in generated}) == 12
    for sample in generated:
        turns = _turns(sample)
        sessions = sorted({n for n, _ in turns.values()})
        assert 8 <= len(sessions) <= 12
        assert 30 <= len(turns) <= 60
        assert 20 <= len(sample["qa"]) <= 30
        conv = sample["conversation"]
        first = parse_when(conv[f"session_{sessions[0]}_date_time"], NEVER)
        last = parse_when(conv[f"session_{sessions[-1]}_date_time"], NEVER)
        assert 27 <= (last - first).days <= 71  # 4–10 weeks


def test_generate_is_deterministic_per_seed():
    first = lr.dumps(lr.generate(2, seed=5))
    assert lr.dumps(lr.generate(2, seed=5)) == first
    assert lr.dumps(lr.generate(2, seed=6)) != first
    assert lr.generate(1, seed=5)[0] == json.loads(first)[0]  # a smaller set is a prefix, language by language


def test_one_degenerate_reply_per_language_of_the_asked_size(generated, tmp_path):
    lo, hi = lr.DEFAULT.degenerate_chars
    assert (lo, hi) == (60_000, 150_000)
    with_giant = [s for s in generated if "degenerate_dia_id" in s]
    assert sorted(s["language"] for s in with_giant) == ["en", "ja"]
    for sample in with_giant:
        turns = _turns(sample)
        session, giant = turns[sample["degenerate_dia_id"]]
        assert giant["speaker"] == "Assistant" and lo <= len(giant["text"]) <= hi
        assert all(len(t["text"]) < 30_000 for dia, (_, t) in turns.items() if dia != sample["degenerate_dia_id"])
        # a question whose fact is in a normal turn of the giant's session
        near = [q for q in sample["qa"] if q["category"] == 4
                and all(turns[d][0] == session and d != sample["degenerate_dia_id"] for d in q["evidence"])]
        assert near
        path = tmp_path / f"{sample['sample_id']}.json"
        path.write_text(json.dumps([sample], ensure_ascii=False), encoding="utf-8")
        (conv,) = load(path)  # the loader keeps the giant turn whole
        giant_turn = next(t for t in conv.turns if t.dia_id == sample["degenerate_dia_id"])
        assert giant["text"] in giant_turn.text


def test_cli_writes_a_file_the_harness_loader_reads(tmp_path, capsys):
    out = tmp_path / "longreply.json"
    assert lr.main(["--out", str(out), "--per-language", "1", "--seed", "3"]) == 0
    assert out.read_text(encoding="utf-8") == lr.dumps(lr.generate(1, 3))
    assert [c.sample_id for c in load(out)] == ["longreply-en-00", "longreply-ja-00"]
    assert "degenerate replies: longreply-en-00 D" in capsys.readouterr().out
