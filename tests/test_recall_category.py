"""Same-category preference (nodes.retrieval.category): with ``recall_same_category_boost`` on, of memories about
the same thing the one whose F2 category is the query's ranks first; off (the default), ranking is untouched. On the
embedded archive and on server mode's PostgreSQL."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.category import same_category
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.text.emotion_f2 import read_emotion
from lumina_memory.stores.settings import LuminaSettings
from tests.pg_server import fresh_database, pg_server  # noqa: F401 - the session's server

pytestmark = pytest.mark.slow

DAY = 86_400.0
T0 = 1_790_000_000.0
USER = "rin"
WORK = "The rooftop garden: the project deadline for the client report is Friday."
EMOTIONAL = "The rooftop garden made me so happy, I cried with joy, I love it so much!!"
CASUAL = "We watered the plants up on the roof this morning."
QUESTION = "the rooftop garden"


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def memory(request, tmp_path_factory):
    """The memories in the embedded archive, or in server mode's PostgreSQL (the lifecycle table on each)."""
    from tests.conftest import Memory

    server = request.getfixturevalue("pg_server") if request.param == "postgres" else None
    name, uri = fresh_database(server) if server is not None else (None, None)
    mem = Memory(tmp_path_factory.mktemp("category"),
                 **({"database_url": uri, "secret_key": "category-test-secret-0123456789abcdef"} if uri else {}))
    rows = [{"user_id": USER, "speaker": speaker, "text": text, "ts": T0 + day * DAY + 60 * n,
             "source_id": f"d{day}:{n}"}
            for day, said in enumerate((WORK, EMOTIONAL, CASUAL))
            for n, (speaker, text) in enumerate((("user", said), ("lumina", "Noted.")))]
    replay(mem.graph, USER, rows, flush=True)
    yield mem
    mem.close()
    if server is not None:
        server.drop_database(name)


def _days(memory, monkeypatch, boost: float, question: str = QUESTION) -> list[str]:
    settings = memory.settings.model_copy(update={"recall_same_category_boost": boost})
    monkeypatch.setattr(memory.services, "settings", settings)
    items = recall(memory.services, USER, question, purpose="question", limit=3, disabled=("knowledge",))
    return [i["source_ids"][0].split(":")[0] for i in items]


def test_the_memories_are_filed_under_their_categories(memory):
    rows = {r["source_ids"][0]: r["category"] for r in memory.services.stores.archive.memories.rows(USER)}
    assert rows == {"d0:0": "work", "d1:0": "emotional", "d2:0": "casual"}
    assert read_emotion(QUESTION).category == "casual"


def test_with_the_boost_the_same_category_memory_ranks_first_and_without_it_nothing_changes(memory, monkeypatch):
    off = _days(memory, monkeypatch, 0.0)
    assert sorted(off) == ["d0", "d1", "d2"] and off[0] != "d2"  # by relevance alone the casual one is not first
    assert _days(memory, monkeypatch, 1.0)[0] == "d2"
    assert _days(memory, monkeypatch, 0.0) == off


def test_a_work_question_prefers_the_work_memory(memory, monkeypatch):
    question = "the rooftop garden project"
    assert read_emotion(question).category == "work"
    assert _days(memory, monkeypatch, 0.5, question)[0] == "d0"


def test_same_category_reads_the_lifecycle_rows(memory):
    segments = {r["memory_id"]: r["source_ids"][0] for r in memory.services.stores.archive.memories.rows(USER)}
    found = same_category(memory.services, USER, QUESTION, set(segments))
    assert [segments[s] for s in found] == ["d2:0"]
    assert same_category(memory.services, USER, QUESTION, set()) == set()


def test_the_boost_is_off_by_default():
    assert LuminaSettings(data_dir="/tmp/unused-lumina").recall_same_category_boost == 0.0
