"""Generated hostile input (hypothesis) through the graph, the CLI's ingest and the LangGraph store: accepted,
or refused naming the field; never a crash, a partial write, or a change to another user's data (issue 16).
The same trials at scale: `python -m bench.hostile --examples 10000`."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from bench import hostile as H
from lumina_memory.graphs.lumina_store import make_store

from .conftest import Memory, make_settings

OUTCOMES: Counter = Counter()  # (target, outcome) of every example run in this module
BOUNDED = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                   HealthCheck.function_scoped_fixture])


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


@settings(max_examples=150, **BOUNDED)
@given(kind=st.sampled_from(["turn", "message", "transcript"]), user_id=H.hostile_ids, speaker=H.hostile_speakers,
       text=H.hostile_texts, ts=H.hostile_ts, source_id=st.one_of(st.none(), H.hostile_ids))
def test_hostile_input_through_the_graph(victim_memory, kind, user_id, speaker, text, ts, source_id):
    mem, snapshot = victim_memory
    OUTCOMES["graph", H.graph_trial(mem, snapshot, kind, user_id, speaker, text, ts, source_id)] += 1


@settings(max_examples=60, **BOUNDED)
@given(line=H.hostile_lines())
@example(line='{"user_id": "\\ud800", "speaker": "user", "text": "", "ts": 1700000000}')  # found by bench/hostile.py
@example(line='{"user_id": "alice\\n", "speaker": "user", "text": "x", "ts": 1}')
@example(line='{"user_id": "x\\u0085\\u2028", "speaker": "user", "text": "t", "ts": 1}')  # line breaks to splitlines()
def test_hostile_lines_through_the_cli_ingest(victim_memory, tmp_path_factory, line):
    mem, snapshot = victim_memory
    workdir = tmp_path_factory.mktemp("files")
    OUTCOMES["ingest", H.ingest_trial(mem, workdir, snapshot, line, len(list(workdir.parent.iterdir())))] += 1


@settings(max_examples=150, **BOUNDED)
@given(label=H.hostile_labels, key=st.one_of(H.hostile_ids, st.just("diary")), value=H.hostile_values,
       query=H.hostile_texts)
def test_hostile_items_through_the_store(victim_store, label, key, value, query):
    OUTCOMES["store", H.store_trial(victim_store, label, key, value, query)] += 1


def test_the_trials_reached_both_outcomes():
    """Runs after the three above: generators that never produced a refusal (or never a valid input) would
    have tested nothing."""
    for target in ("graph", "ingest", "store"):
        seen = {o for (t, o) in OUTCOMES if t == target}
        assert "accepted" in seen, (target, OUTCOMES)
        assert len({o for o in seen if o.startswith("rejected:")}) >= 2, (target, OUTCOMES)
