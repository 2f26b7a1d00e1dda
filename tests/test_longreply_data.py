"""The long-reply evaluation set of issue 19 (bench/longreply_data.py, tests/data/longreply_mini.json): LoCoMo's
format read by the harness's own loader, the mini file its script's output byte for byte, English and Japanese,
long markdown replies with code and lists, facts grounded in their evidence turns, updates with an earlier
different value, multi-hop across sessions, a deterministic generator and its degenerate giant reply."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench import longreply_data as lr
from bench.locomo_data import CATEGORY_NAMES, load, parse_when
from lumina_memory.nodes.text.token_count import count_tokens

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


# ---------------------------------------------------------------------------------------------------- HARD profile
# The set the size and clutter of a real assistant history: 22–30 sessions, ~200–300 turns, look-alike values in
# most replies, sessions that return to the same topic; ranking, not the budget, decides.


@pytest.fixture(scope="module")
def hard() -> list[dict]:
    return lr.generate(2, lr.DEFAULT_SEED, lr.HARD)


def _dates(sample: dict) -> list[datetime]:
    conv = sample["conversation"]
    numbers = sorted({n for n, _ in _turns(sample).values()})
    return [parse_when(conv[f"session_{n}_date_time"], NEVER) for n in numbers]


def _slot_of(question: str, sample: dict) -> lr.Slot:
    """The kind of fact a question names: the longest noun of any slot found in it."""
    language = sample["language"]
    deadline = lr.SCENARIOS[language][int(sample["sample_id"][-2:]) % len(lr.SCENARIOS[language])]["deadline"]
    nouns = {lr._fill(s.noun[language], deadline=deadline): s for s in lr.ALL_SLOTS.values()}
    return nouns[max((n for n in nouns if n in question), key=len)]


def test_hard_set_has_the_hard_size(hard):
    assert [s["language"] for s in hard] == ["en", "en", "ja", "ja"]
    for sample in hard:
        turns = _turns(sample)
        dates = _dates(sample)
        assert 22 <= len(dates) <= 30
        assert 200 <= len(turns) <= 300, len(turns)
        assert 59 <= (dates[-1] - dates[0]).days <= 121  # 2–4 months
        assert dates == sorted(dates) and len({d.date() for d in dates}) == len(dates)
        per_session = Counter(n for n, _ in turns.values())
        assert all(6 <= c <= 14 for c in per_session.values()), per_session  # 3–6 exchanges (+ the giant's)
        assert 30 <= len(sample["qa"]) <= 45
        assert {q["category"] for q in sample["qa"]} == {1, 2, 3, 4, 6}
        assert sample["conversation"]["speaker_b"] == "Assistant"
    # the hard set uses the further kinds of fact, and more of them than the default set
    keys = {_slot_of(q["question"], s).key for s in hard for q in s["qa"] if q["category"] == 4}
    assert keys & set(lr.HARD_SLOTS) and len(keys) > 14


def test_hard_reply_lengths_and_markdown(hard):
    for sample in hard:
        lo, hi = lr.HARD.reply_tokens[sample["language"]]
        replies = _replies(sample)
        lengths = [count_tokens(r) for r in replies]
        assert all(lo <= n <= hi for n in lengths), (sample["sample_id"], min(lengths), max(lengths))
        assert sum(lengths) / len(lengths) > 1.5 * lo  # long replies, not padding at the minimum
        assert all(r.count("```") % 2 == 0 for r in replies)
        assert sum("```" in r for r in replies) > len(replies) / 2
        assert any(re.search(r"^#{2,3} \S", r, re.M) for r in replies)
    giants = [s for s in hard if "degenerate_dia_id" in s]
    assert sorted(s["language"] for s in giants) == ["en", "ja"]
    for sample in giants:
        lo, hi = lr.HARD.degenerate_chars
        assert lo <= len(_turns(sample)[sample["degenerate_dia_id"]][1]["text"]) <= hi


def test_hard_questions_have_existing_evidence_and_grounded_facts(hard, tmp_path):
    for sample in hard:
        turns = _turns(sample)
        for q in sample["qa"]:
            assert q["question"] and q["answer"] and q["evidence"]
            assert all(dia in turns for dia in q["evidence"]), q
            sessions = {turns[dia][0] for dia in q["evidence"]}
            if q["category"] == 4:  # the fact is said in its evidence turn
                (dia,) = q["evidence"]
                assert q["answer"] in turns[dia][1]["text"], q
            if q["category"] == 1:
                assert 2 <= len(sessions) <= 3, q
        path = tmp_path / f"{sample['sample_id']}.json"
        path.write_text(json.dumps([sample], ensure_ascii=False), encoding="utf-8")
        (conv,) = load(path)
        assert [q.evidence for q in conv.questions] == [q["evidence"] for q in sample["qa"]]  # all scored


def test_hard_multi_hop_reaches_three_sessions_and_values_change_twice(hard):
    three = [q for s in hard for q in s["qa"] if q["category"] == 1
             and len({_turns(s)[d][0] for d in q["evidence"]}) == 3]
    assert len(three) >= 2 * len(hard)  # three-fact questions and three-step histories
    for sample in hard:
        turns = _turns(sample)
        for q in (q for q in sample["qa"] if q["category"] == 6):
            u = q["update"]
            (old,), (new,) = u["from_evidence"], u["to_evidence"]
            assert u["from"] != u["to"] and turns[old][0] < turns[new][0], q
            assert u["from"] in turns[old][1]["text"] and u["to"] in turns[new][1]["text"]
            assert q["answer"] in (u["from"], u["to"]) and new in q["evidence"]
            if q["answer"] == u["to"]:
                assert q["evidence"] == [new]
            sessions = [turns[d][0] for d in q["evidence"]]
            assert sessions == sorted(sessions)  # evidence in the order it was said
    assert any(len(q["evidence"]) == 3 for s in hard for q in s["qa"] if q["category"] == 6)  # "originally"


def test_hard_replies_carry_look_alike_values_of_the_facts_asked(hard):
    """Most replies hold 1–3 sentences written like a fact (the same template) with another value of the same
    kind, said of another context; nearly every single-hop fact has such a look-alike elsewhere."""
    for sample in hard:
        language = sample["language"]
        contexts = lr.hard_text.TEXT[language]["contexts"]
        turns = _turns(sample)
        replies = _replies(sample)
        per_reply = [sum(r.count(c) for c in contexts) for r in replies]
        assert sum(n >= 1 for n in per_reply) >= 0.7 * len(replies), sample["sample_id"]
        assert sum(n >= 2 for n in per_reply) >= 0.3 * len(replies)
        facts = [q for q in sample["qa"] if q["category"] == 4]
        with_look_alike = 0
        for q in facts:
            slot = _slot_of(q["question"], sample)
            if slot.key in lr.DATE_SLOTS:
                continue
            values = slot.values[language] if isinstance(slot.values, dict) else slot.values
            others = [v for v in values if v != q["answer"]]
            lines = [line for dia, (_, t) in turns.items() if dia not in q["evidence"]
                     for line in re.split(r"(?<=\.)\s+|(?<=。)|\n", t["text"]) if any(c in line for c in contexts)]
            with_look_alike += any(v in line for line in lines for v in others)
            # the fact's value itself is never a distractor's
            assert not any(q["answer"] in line for line in lines), q
        assert with_look_alike >= 0.9 * sum(_slot_of(q["question"], sample).key not in lr.DATE_SLOTS for q in facts)


def test_hard_sessions_return_to_the_same_topic(hard):
    for sample in hard:
        topics = lr.TOPICS[sample["language"]]
        conv = sample["conversation"]
        opened = Counter()
        for key, turns in conv.items():
            if SESSION.match(key):
                first = next(t["text"] for t in turns if t["speaker"] != "Assistant" and any(
                    x["ask"] in t["text"] for x in topics))
                opened[next(x["title"] for x in topics if x["ask"] in first)] += 1
        assert len(opened) == len(topics) and min(opened.values()) >= 2, opened


def test_hard_facts_sit_mostly_in_the_middle_of_long_replies(hard):
    positions, lengths = [], []
    for sample in hard:
        turns = _turns(sample)
        lo = lr.HARD.reply_tokens[sample["language"]][0]
        for q in sample["qa"]:
            text = turns[q["evidence"][0]][1]["text"]
            if q["category"] == 4 and turns[q["evidence"][0]][1]["speaker"] == "Assistant":
                positions.append(text.index(q["answer"]) / len(text))
                lengths.append(count_tokens(text) / lo)
    assert len(positions) >= 20
    assert sum(0.2 < p < 0.8 for p in positions) > len(positions) / 2
    assert min(lengths) >= lr.HARD.hard.fact_reply_min


def test_hard_is_deterministic_per_seed_and_leaves_the_default_alone(tmp_path):
    first = lr.dumps(lr.generate(1, seed=5, profile=lr.HARD))
    assert lr.dumps(lr.generate(1, seed=5, profile=lr.HARD)) == first
    assert lr.dumps(lr.generate(1, seed=6, profile=lr.HARD)) != first
    assert lr.dumps(lr.generate(1, seed=5)) != first
    out = tmp_path / "hard.json"
    assert lr.main(["--out", str(out), "--per-language", "1", "--seed", "5", "--profile", "hard"]) == 0
    assert out.read_text(encoding="utf-8") == first
    default = tmp_path / "default.json"
    assert lr.main(["--out", str(default), "--per-language", "1", "--seed", "5"]) == 0
    assert default.read_text(encoding="utf-8") == lr.dumps(lr.generate(1, seed=5))


def test_no_fact_value_hides_in_the_filler_or_in_another_value():
    """A value is found only where a fact or a distractor says it: not in code blocks or topic sentences
    ("MIT" in "COMMIT;", port 8000 in the nginx block), and not inside another value ("GPL-3.0" in "AGPL-3.0")."""
    filler = json.dumps([lr.TOPICS, lr.CODE, lr.TEXT, lr.PREFERENCES, lr.hard_text.TEXT, lr.DEGENERATE_ASK],
                        ensure_ascii=False)
    for language in lr.LANGUAGES:
        values = [v for s in lr.ALL_SLOTS.values()
                  for v in (s.values[language] if isinstance(s.values, dict) else s.values)]
        assert len(values) == len(set(values))
        assert [v for v in values if v in filler] == []
        assert [(v, w) for v in values for w in values if v != w and v in w] == []


def test_hard_temporal_questions_name_an_unchanged_fact_without_its_value(hard):
    """"When did we settle the staging domain?", not "… register stg.brightcart.io …": the value's words would
    lead straight to the one turn that holds it."""
    asked = 0
    for sample in hard:
        facts = {q["evidence"][0]: q["answer"] for q in sample["qa"] if q["category"] == 4}
        for q in (q for q in sample["qa"] if q["category"] == 2):
            for dia in q["evidence"]:
                if dia in facts:
                    asked += 1
                    assert facts[dia] not in q["question"], q
    assert asked >= len(hard)
