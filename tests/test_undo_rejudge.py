"""An undone compression is not compressed again by the very next batch for the same decay (issue 49): the undo
counts as a recall, so that batch reinforces the memory before judging it. Without the undo's recall the same
memory, restored to the same row, would cross the threshold again the next day (checked on a twin)."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle
from lumina_memory.nodes.lifecycle.undo import undo_forgetting
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.redis_server import stop_server
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from tests.test_capacity import DAY, SECRET, T0, _memories

pytestmark = pytest.mark.slow  # opens services on both engines


@pytest.fixture(params=["duckdb", "postgres"])
def services(request, tmp_path):
    """Thresholds alone (ratios apply from 100 memories on), on one engine."""
    server = {"database_url": request.getfixturevalue("pg_uri"), "secret_key": SECRET} if request.param == "postgres" else {}
    opened = open_services(make_settings(tmp_path / "data", lifecycle=LifecycleParams(ratio_min_memories=100), **server))
    yield opened
    opened.close()
    stop_server(make_settings(tmp_path / "data"))


def _level(services, memory_id: str) -> int:
    user = memory_id.split(":")[0]
    return int(services.stores.archive.memories.rows(user, [memory_id])[0]["level"])


def test_the_next_batch_reinforces_an_undone_memory_instead_of_compressing_it_again(services):
    params: LifecycleParams = services.settings.lifecycle
    table = services.stores.archive.memories
    # Just above level 1's threshold; one day at decay 0.9 takes it below (ratios off: too few memories).
    ids = {}
    for user in ("gina", "hugo"):
        [ids[user]] = _memories(services, user, [1])
        with table.db.tx(touches=(user,)) as con:
            con.execute("UPDATE memories SET intensity = ?, retention = ?, decay = 0.9, unbatched = false "
                        "WHERE memory_id = ?", [params.level1_threshold + 1, params.level1_threshold + 1, ids[user]])
    run_lifecycle(services, now=T0 + DAY)
    assert _level(services, ids["gina"]) == 2 and _level(services, ids["hugo"]) == 2
    undo_forgetting(services, "gina", step="compress", now=T0 + DAY + 60)
    # hugo's twin: the same row put back by hand, without the undo's recall
    prior = table.undo.entries("hugo", ids["hugo"])[0]["prior"]
    table.undo.restore_memories("hugo", [prior], [], {})
    assert _level(services, ids["gina"]) == 1 and _level(services, ids["hugo"]) == 1
    run_lifecycle(services, now=T0 + 2 * DAY)
    assert _level(services, ids["gina"]) == 1  # reinforced, then judged: stays
    assert _level(services, ids["hugo"]) == 2  # the same decay again: compressed again
