"""The maintenance state (graphs.maintenance_state) on both engines: the data dir's maintenance-state.json and a
row of the server mode's shared state. Steps and workers updating different entries at once keep each other's
changes; a second process reads what the first saved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from lumina_memory.graphs.maintenance_state import STATE_FILE, load_state, save_state, update_state
from lumina_memory.stores.shared_state import close_shared_states

from .conftest import make_settings
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["dir", "postgres"])
def services(request, tmp_path):
    uri = request.getfixturevalue("pg_uri") if request.param == "postgres" else None
    yield SimpleNamespace(settings=make_settings(tmp_path / "data", database_url=uri))
    close_shared_states()


def test_entries_updated_at_once_keep_each_other(services):
    def step(key):
        for i in range(20):
            update_state(services, key, {f"n{i}": i})

    threads = [threading.Thread(target=step, args=(f"step{k}",)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    state = load_state(services)
    assert state == {f"step{k}": {f"n{i}": i for i in range(20)} for k in range(4)}
    assert update_state(services, "step0", {"only": 1}, replace=True)["step0"] == {"only": 1}
    assert load_state(services)["step1"] == {f"n{i}": i for i in range(20)}


def test_the_data_dir_file_is_read_as_before(tmp_path):
    services = SimpleNamespace(settings=make_settings(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / STATE_FILE).write_text(json.dumps({"last_backup": {"archive": 5.0}}, indent=1))
    assert load_state(services) == {"last_backup": {"archive": 5.0}}
    update_state(services, "last_backup", {"vectors": 6.0})
    assert json.loads((tmp_path / "data" / STATE_FILE).read_text()) == {"last_backup": {"archive": 5.0, "vectors": 6.0}}
    save_state(services, {})
    assert load_state(services) == {}


WORKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from types import SimpleNamespace
    from lumina_memory.graphs.maintenance_state import update_state
    from lumina_memory.stores.shared_state import close_shared_states
    from tests.conftest import make_settings

    services = SimpleNamespace(settings=make_settings(Path(sys.argv[2]), database_url=sys.argv[1]))
    for i in range(15):
        update_state(services, sys.argv[3], {f"n{i}": i})
    close_shared_states()
""")


def test_workers_in_other_processes_share_one_state(tmp_path, pg_uri):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, pg_uri, str(tmp_path / f"replica{k}"), f"w{k}"],
                                cwd=REPO, env=env, stderr=subprocess.PIPE, text=True) for k in range(2)]
    for worker in workers:
        assert worker.wait(timeout=300) == 0, worker.stderr.read()[-2000:]
    here = SimpleNamespace(settings=make_settings(tmp_path / "here", database_url=pg_uri))
    try:
        assert load_state(here) == {f"w{k}": {f"n{i}": i for i in range(15)} for k in range(2)}
        assert not (tmp_path / "here" / STATE_FILE).exists()
    finally:
        close_shared_states()
