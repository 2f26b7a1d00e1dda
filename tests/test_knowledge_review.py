"""The weekly knowledge review: facts folded again under the current settings; a re-run changes nothing."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.nodes.knowledge.params import DEFAULT_POLICY, KnowledgeParams
from lumina_memory.nodes.knowledge.review import review_user
from lumina_memory.stores.archive_duckdb import DuckDBArchive

MAY = 1_778_000_000.0


@pytest.fixture
def archive(tmp_path):
    store = DuckDBArchive(tmp_path / "archive.duckdb")
    yield store
    store._db.close()


def _say(services, user, seg, turn, text, ts):
    learn_segments(services, user, [(SimpleNamespace(segment_id=seg), [
        {"turn_id": f"{user}-{turn}", "speaker": "user", "text": text, "ts": ts, "source_id": turn}])])


def test_a_policy_change_is_applied_by_the_review_and_a_rerun_changes_nothing(archive):
    services = SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace())
    _say(services, "eve", "s1", "a", "I bought a new laptop.", MAY)
    _say(services, "eve", "s2", "b", "I bought a new bike.", MAY + 86_400)
    _say(services, "eve", "s3", "c", "I live in Osaka.", MAY)
    assert sorted(r["value_key"] for r in archive.knowledge.items("eve") if r["attribute"] == "has") == ["bike", "laptop"]
    before = archive.knowledge.items("eve", history=True)
    assert review_user(services, "eve")["changed"] == 0  # consistent already: nothing moves
    assert archive.knowledge.items("eve", history=True) == before
    # The operator decides possessions hold one at a time: the review supersedes the older one.
    services.settings = SimpleNamespace(knowledge=KnowledgeParams(policy={**DEFAULT_POLICY, "has": "single"}))
    assert review_user(services, "eve")["changed"] == 1
    has = [r for r in archive.knowledge.items("eve", history=True) if r["attribute"] == "has"]
    coffee = next(r for r in has if r["value_key"] == "laptop")
    tea = next(r for r in has if r["value_key"] == "bike")
    assert coffee["status"] == "superseded" and coffee["superseded_by"] == tea["item_id"]
    assert coffee["valid_to"] == pytest.approx(MAY + 86_400) and tea["status"] == "current"
    assert review_user(services, "eve")["changed"] == 0
    assert [r["value"] for r in archive.knowledge.items("eve") if r["attribute"] == "lives_in"] == ["Osaka"]
