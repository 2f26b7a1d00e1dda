"""Erasure in server mode across processes: an erase plan shown by one process is confirmed in another (the
secret is the setting every process shares), the token works once whichever process presents it again (used
tokens are shared state), and nothing of the erasure's marks is a file in a replica's data dir."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.erasure import IN_PROGRESS_FILE, USED_TOKENS_DIR, erasures_in_progress
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import stop_server
from lumina_memory.stores.shared_state import close_shared_states, open_shared_state

from .conftest import make_settings
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from .test_server_mode import _ingest, _settings


def test_a_plan_from_one_process_erases_in_another_once(tmp_path, pg_uri):
    first = open_services(_settings(tmp_path / "a", pg_uri))
    second = open_services(_settings(tmp_path / "b", pg_uri))
    try:
        _ingest(first, "alice", [("user", "ZEBRAMARK モカは3歳の茶トラ"), ("lumina", "覚えてるよ")])
        _ingest(first, "bob", [("user", "OKAPIMARK 犬が好き"), ("lumina", "いいね")])
        plan = erase_plan(first, "alice")
        assert plan["counts"]["archive.turn_archive"] == 2
        report = erase_user(second, "alice", plan["token"], actor="test")
        assert report["removed"]["archive.turn_archive"] == 2 and report["unreachable"] == {}
        with pytest.raises(InvalidInput, match="already used"):
            erase_user(first, "alice", plan["token"], actor="test")
        assert {k: v for k, v in erase_plan(second, "alice")["counts"].items() if v} == {}
        assert erase_plan(first, "bob")["counts"]["archive.turn_archive"] == 2  # other users untouched
        state = open_shared_state(second.settings)
        assert erasures_in_progress(state) == [] and len(state.claims(USED_TOKENS_DIR)) == 1
        for replica in (tmp_path / "a", tmp_path / "b"):
            assert not (replica / IN_PROGRESS_FILE).exists() and not (replica / USED_TOKENS_DIR).exists()
            assert not (replica / "lumina.secret").exists()
    finally:
        first.close()
        second.close()
        close_shared_states()
        stop_server(make_settings(tmp_path / "a"))
        stop_server(make_settings(tmp_path / "b"))
