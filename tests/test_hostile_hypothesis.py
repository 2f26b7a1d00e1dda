"""Generated hostile input (hypothesis) through the graph, the CLI's ingest and the LangGraph store: accepted,
or refused naming the field; never a crash, a partial write, or a change to another user's data (issue 16).
The same trials at scale: `python -m bench.hostile --examples 10000`.

Each test runs its trials and then checks its own outcomes, so no test depends on another having run first."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from bench import hostile as H
from lumina_memory.graphs.lumina_store import make_store

from .conftest import Memory, make_settings

BOUNDED = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def victim_memory(tmp_path_factory):
    mem = Memory(tmp_path_factory.mktemp("hostile"))
    snapshot = H.seed_victim_graph(mem)
    yield mem, snapshot
    mem.close()


@pytest.fixture(scope="module")
def victim_store(tmp_path_factory):
    settings_ = make_settings(tmp_path_factory.mktemp("hostile-store"))
    store = make_store(settings_)
    store.put(H.VICTIM_NS, H.VICTIM_KEY, H.VICTIM_VALUE)
    yield store
    store.close()


def _reached_both_outcomes(outcomes: Counter) -> None:
    """Generators that never produced a refusal (or never a valid input) would have tested nothing."""
    assert "accepted" in outcomes, outcomes
    assert len({o for o in outcomes if o.startswith("rejected:")}) >= 2, outcomes


def test_hostile_input_through_the_graph(victim_memory):
    mem, snapshot = victim_memory
    outcomes: Counter = Counter()

    @settings(max_examples=150, **BOUNDED)
    @given(kind=st.sampled_from(["turn", "message", "transcript"]), user_id=H.hostile_ids, speaker=H.hostile_speakers,
           text=H.hostile_texts, ts=H.hostile_ts, source_id=st.one_of(st.none(), H.hostile_ids))
    def trial(kind, user_id, speaker, text, ts, source_id):
        outcomes[H.graph_trial(mem, snapshot, kind, user_id, speaker, text, ts, source_id)] += 1

    trial()
    _reached_both_outcomes(outcomes)


def test_hostile_lines_through_the_cli_ingest(victim_memory, tmp_path_factory):
    mem, snapshot = victim_memory
    outcomes: Counter = Counter()

    @settings(max_examples=60, **BOUNDED)
    @given(line=H.hostile_lines())
    @example(line='{"user_id": "\\ud800", "speaker": "user", "text": "", "ts": 1700000000}')  # found by bench/hostile.py
    @example(line='{"user_id": "alice\\n", "speaker": "user", "text": "x", "ts": 1}')
    @example(line='{"user_id": "x\\u0085\\u2028", "speaker": "user", "text": "t", "ts": 1}')  # line breaks to splitlines()
    def trial(line):
        workdir = tmp_path_factory.mktemp("files")
        outcomes[H.ingest_trial(mem, workdir, snapshot, line, len(list(workdir.parent.iterdir())))] += 1

    trial()
    _reached_both_outcomes(outcomes)


def test_hostile_items_through_the_store(victim_store):
    outcomes: Counter = Counter()

    @settings(max_examples=150, **BOUNDED)
    @given(label=H.hostile_labels, key=st.one_of(H.hostile_ids, st.just("diary")), value=H.hostile_values,
           query=H.hostile_texts)
    def trial(label, key, value, query):
        outcomes[H.store_trial(victim_store, label, key, value, query)] += 1

    trial()
    _reached_both_outcomes(outcomes)
