"""The links between facts (F6: derived_from, contradicts with its winner) on every graph adapter: ladybug,
Neo4j's driver against FalkorDB over Bolt, PostgreSQL (the conformance suite's ``graph`` fixture)."""

from __future__ import annotations

import pytest

from lumina_memory.stores import cypher_backup
from lumina_memory.stores.errors import InvalidInput
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from tests.test_graph_conformance import A, B, HOSTILE, add, bolt_driver, bolt_port, graph, know  # noqa: F401

pytestmark = pytest.mark.slow  # starts FalkorDB and PostgreSQL


def _facts(graph, user: str, episode: str) -> list:
    return [know("k-osaka", "大阪", "superseded", [episode], attribute="lives_in"),
            know("k-fukuoka", "福岡", "current", [episode], attribute="lives_in"),
            know("k-umeda", "梅田から電車に乗る", "current", [episode], attribute="habit")]


def test_links_are_made_exactly_as_given_with_the_winner(graph):
    a1 = add(graph, A, 1)
    links = [("k-umeda", "k-osaka", "derived_from", ""), ("k-fukuoka", "k-osaka", "contradicts", "k-fukuoka")]
    for _ in range(2):  # idempotent
        assert graph.upsert_knowledge(A, _facts(graph, A, a1), [("k-fukuoka", "k-osaka")], links) == 3
        assert graph.knowledge_links(A) == sorted(links)
        counts = graph.counts(A)
        assert counts.edges["FACT_DERIVED_FROM"] == 1 and counts.edges["FACT_CONTRADICTS"] == 1
    # A restatement is the whole truth: the winner changes in place, a link no longer listed goes.
    graph.upsert_knowledge(A, _facts(graph, A, a1), [], [("k-fukuoka", "k-osaka", "contradicts", "")])
    assert graph.knowledge_links(A) == [("k-fukuoka", "k-osaka", "contradicts", "")]
    assert graph.counts(A).edges["FACT_DERIVED_FROM"] == 0


def test_links_never_cross_users_and_go_with_their_items(graph):
    a1, b1 = add(graph, A, 1), add(graph, B, 1)
    graph.upsert_knowledge(A, _facts(graph, A, a1), [], [("k-umeda", "k-osaka", "derived_from", "")])
    graph.upsert_knowledge(B, [know("kb", "tea", "current", [b1])])
    # An end that is another user's item makes no edge.
    graph.upsert_knowledge(B, [know("kb", "tea", "current", [b1])], [], [("kb", "k-osaka", "derived_from", "")])
    assert graph.knowledge_links(B) == [] and graph.counts(B).edges["FACT_DERIVED_FROM"] == 0
    assert graph.knowledge_links(A) == [("k-umeda", "k-osaka", "derived_from", "")]
    graph.delete_knowledge(A, ["k-osaka"])
    assert graph.knowledge_links(A) == [] and graph.counts().edges["FACT_DERIVED_FROM"] == 0


def test_bad_links_are_refused_before_anything_is_written(graph):
    a1 = add(graph, A, 1)
    item = [know("k-x", "x", "current", [a1])]
    for bad in ([("k-x", "k-y", "rests_on", "")], [("k-x", "k-x", "derived_from", "")],
                [("k-y", "k-z", "derived_from", "")], [("k-x", "k-y", "contradicts", "k-z")],
                [("k-x", HOSTILE[0], "derived_from", "")], [("k-x", "k-y")], "k-x"):
        with pytest.raises(InvalidInput):
            graph.upsert_knowledge(A, item, [], bad)
    assert graph.knowledge(A) == [] and graph.knowledge_links(A) == []


def test_links_survive_dump_and_load(graph):
    a1, b1 = add(graph, A, 1), add(graph, B, 1)
    links = [("k-umeda", "k-osaka", "derived_from", ""), ("k-fukuoka", "k-osaka", "contradicts", "k-fukuoka")]
    graph.upsert_knowledge(A, _facts(graph, A, a1), [("k-fukuoka", "k-osaka")], links)
    graph.upsert_knowledge(B, [know("kb", "tea", "current", [b1])])
    counts = graph.counts()
    rows = graph.dump()
    assert {r["user_id"] for r in rows["FACT_DERIVED_FROM"] + rows["FACT_CONTRADICTS"]} == {A}
    graph._write([(statement, {}) for statement in cypher_backup.CLEAR])
    assert graph.knowledge_links(A) == []
    for _ in range(2):
        graph.load(rows)
        assert graph.knowledge_links(A) == sorted(links) and graph.counts() == counts
