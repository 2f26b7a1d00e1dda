"""A padded real-text conversation (bench.realtext_data ``pad``): filler exchanges appended after every session's
own turns make a long history of the same conversation, so every original turn keeps its dia_id and text and the
questions, dates and statements are unchanged (written questions are applied to padded files by dia_id). Filler
states no fact and never repeats a text of the conversation's own replies; its texts are reused once the rest of the
pool runs out."""

from __future__ import annotations

import random
import re

import pytest

from bench import realtext_data as rt
from bench.locomo_data import load
from bench.realtext_sources import pool

SESSION = re.compile(r"^session_(\d+)$")
PER_LANGUAGE = 2
SEED = 7


def _sessions(sample: dict) -> dict[str, list[dict]]:
    return {k: v for k, v in sample["conversation"].items() if SESSION.match(k) and isinstance(v, list)}


@pytest.fixture(scope="module")
def plain() -> list[dict]:
    return rt.generate(PER_LANGUAGE, seed=SEED, size=rt.TINY)


@pytest.fixture(scope="module")
def padded() -> list[dict]:
    return rt.generate(PER_LANGUAGE, seed=SEED, size=rt.TINY, pad=2)


def test_pad_zero_is_the_unpadded_file_byte_for_byte(plain):
    assert rt.dumps(rt.generate(PER_LANGUAGE, seed=SEED, size=rt.TINY, pad=0)) == rt.dumps(plain)
    assert not any("pad" in s or "filler_sources" in s for s in plain)


def test_padding_removed_gives_back_the_unpadded_sample(plain, padded):
    for p, s in zip(padded, plain):
        assert p["pad"] == 2 and p["filler_sources"]
        trimmed = {k: v for k, v in p.items() if k not in ("pad", "filler_sources")}
        trimmed["conversation"] = {k: (v[:len(s["conversation"][k])] if SESSION.match(k) else v)
                                   for k, v in p["conversation"].items()}
        assert rt.dumps([trimmed]) == rt.dumps([s])


def test_every_original_turn_keeps_its_dia_id_and_text_and_sessions_grow_by_pad(plain, padded):
    for p, s in zip(padded, plain):
        assert set(_sessions(p)) == set(_sessions(s))
        for key, turns in _sessions(s).items():
            longer = _sessions(p)[key]
            assert len(longer) == 3 * len(turns)
            by_id = {t["dia_id"]: t for t in longer}
            assert len(by_id) == len(longer)  # no dia_id twice
            for t in turns:
                assert by_id[t["dia_id"]] == t
            filler = longer[len(turns):]
            assert [t["speaker"] for t in filler] == [s["conversation"]["speaker_a"], rt.ASSISTANT] * len(turns)
            assert [t["dia_id"] for t in filler] == [f"D{key.split('_')[1]}:{i}"
                                                       for i in range(len(turns) + 1, len(longer) + 1)]


def test_filler_states_no_fact_and_keeps_extraction_passages_unique(plain, padded):
    for p, s in zip(padded, plain):
        originals = {t["dia_id"] for v in _sessions(s).values() for t in v}
        filler = [t for v in _sessions(p).values() for t in v if t["dia_id"] not in originals]
        user_filler = " ".join(t["text"] for t in filler if t["speaker"] != rt.ASSISTANT)
        said = {q["answer"] for q in s["qa"] if q["kind"] in ("knowledge_update", "preference", "instruction")}
        assert said and not any(value in user_filler for value in said)
        everything = "\n".join(t["text"] for v in _sessions(p).values() for t in v)
        for q in (q for q in p["qa"] if q["kind"] == "extraction"):
            left, right = re.search(r"…(.*)___(.*?)…", q["question"], re.S).groups()
            assert everything.count(f"{left}{q['answer']}{right}") == 1, q


def test_filler_never_repeats_a_text_of_the_conversations_own_replies(plain, padded):
    """A question written later for an original reply quotes it: that quote must stay in one turn."""
    texts = {t.name: t.text for t in pool()}
    for p, s in zip(padded, plain):
        assert not set(p["filler_sources"]) & set(s["sources"])
        originals = {t["dia_id"] for v in _sessions(s).values() for t in v}
        filler = "\n".join(t["text"] for v in _sessions(p).values() for t in v if t["dia_id"] not in originals)
        assert not any(texts[name] in filler for name in s["sources"])


def test_filler_needs_texts_left_over():
    sample = rt.build_conversation("en", 0, seed=SEED, size=rt.TINY)
    with pytest.raises(ValueError, match="no texts left for filler"):
        rt._pad(random.Random(1), "en", sample["conversation"], [], [], 1, rt.TINY)


def test_filler_replies_are_real_texts_reused_when_the_pool_runs_out():
    texts = {t.name: t for t in pool()}
    sample = rt.build_conversation("en", 0, seed=SEED, size=rt.TINY)
    few = list(texts.values())[:3]
    used = rt._pad(random.Random(1), "en", sample["conversation"], [], few, 3, rt.TINY)
    assert set(used) == {t.name for t in few} and len(used) > len(set(used))
    replies = [t["text"] for v in _sessions(sample).values() for t in v if t["speaker"] == rt.ASSISTANT]
    for name in used:
        assert any(texts[name].text in r for r in replies)


def test_the_harness_loader_reads_a_padded_file_with_the_same_questions(plain, padded, tmp_path):
    path = tmp_path / "padded.json"
    path.write_text(rt.dumps(padded), encoding="utf-8")
    for conv, p, s in zip(load(path), padded, plain):
        assert len(conv.turns) == 3 * sum(len(v) for v in _sessions(s).values())
        assert [q.question for q in conv.questions] == [q["question"] for q in s["qa"]]
        stamps = [t.ts for t in conv.turns]
        assert stamps == sorted(stamps)
