"""Any file at all given to `import` gets a clear refusal (InvalidInput naming where) or is read, never a traceback:
random JSON values and random text as an export's records, and as the importers' input (nodes.portable)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from lumina_memory.nodes.portable.importers import SOURCES, foreign_turns
from lumina_memory.nodes.portable.read import read_export
from lumina_memory.stores.errors import InvalidInput

HEADER = json.dumps({"format": "lumina-memory-export", "version": 1, "user_id": "mio", "exported_at": 1.0,
                     "counts": {"turn": 1}})
json_values = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(),
                           lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(st.text(max_size=12), children, max_size=5), max_leaves=12)
kinds = st.sampled_from(["turn", "segment", "memory", "relation", "fact", "procedure", "profile", "x", ""])
records = st.builds(lambda kind, extra: {**extra, "kind": kind}, kinds,
                    st.dictionaries(st.sampled_from(["turn_id", "segment_id", "text", "ts", "source_id", "speaker",
                                                     "user_id", "level", "steps", "type"]), json_values, max_size=6))
lines = st.lists(st.one_of(records.map(json.dumps), json_values.map(json.dumps), st.text(max_size=40)), max_size=4)


def _refused_or_read(call) -> None:
    try:
        call()
    except InvalidInput as exc:
        assert exc.field and exc.problem  # says where, and what


@pytest.mark.slow  # hostile input by the hundred
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines)
def test_any_records_after_a_header_are_read_or_refused_by_line(body):
    _refused_or_read(lambda: read_export([HEADER, *body]))


@pytest.mark.slow  # hostile input by the hundred
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), lines)
def test_any_file_given_to_an_importer_is_read_or_refused_by_line(source, body):
    _refused_or_read(lambda: foreign_turns(source, body))
