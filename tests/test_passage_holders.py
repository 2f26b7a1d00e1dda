"""The passage picker over an index that holds other passages for a long turn (its reads were kept under another
passage cut): the passages' terms are read at warm-up, not inside a query, the passage chosen is the one their
words and meaning point to, and erasure empties what was read."""

from __future__ import annotations

import dataclasses

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval import excerpts
from lumina_memory.nodes.retrieval.excerpts import passage_holders, passage_picker
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.nodes.retrieval.warm import prepare_excerpts
from lumina_memory.nodes.text.passages import passage_spans
from lumina_memory.nodes.text.text_caches import clear_text_caches, text_caches
from lumina_memory.nodes.text.tokenize import terms
from lumina_memory.stores.models import Turn
from lumina_memory.stores.settings import LuminaSettings

TOPICS = ("staging port", "release branch", "database pool", "cache expiry", "queue depth", "token bucket")


def _reply(k: int) -> str:
    """A long reply of several paragraphs, each on one topic, so its passages differ in their words."""
    paragraphs = [" ".join(f"The {topic} of service {k} was set to {k}{j} after review {j}." for j in range(30))
                  for topic in TOPICS]
    return "Assistant: " + "\n\n".join(paragraphs)


def _stale_index(n: int = 4) -> UserTurns:
    """Long replies indexed with passages of another cut than the settings' (reads kept under an older one)."""
    settings = LuminaSettings()
    cut = (settings.recall_passage_tokens, settings.recall_passage_min_tokens)
    turns = [Turn(turn_id=f"t{k}", source_id=f"D{k}:2", user_id="u", speaker="lumina", segment_id=f"s{k}",
                  text=_reply(k), ts=1_700_000_000.0 + 86_400 * k) for k in range(n)]
    index = UserTurns.build(turns, (cut[0] * 2, cut[1]))
    return dataclasses.replace(index, passage_cut=cut)


def _reference(index: UserTurns, i: int, q_terms: list[str]) -> int:
    """The passage whose words weigh most for the query (each term by 1 / (1 + turns holding it)), first on ties."""
    text = index.turns[i].text
    weight = {t: 1.0 / (1 + len(index.postings[t][0])) if t in index.postings else 0.0 for t in q_terms}
    lexical = [sum(weight[t] for t in q_terms if t in frozenset(terms(text[a:b])))
               for a, b in passage_spans(text, *index.passage_cut)]
    return max(range(len(lexical)), key=lambda k: (lexical[k], -k))


def test_a_query_reads_no_passage_of_a_stale_long_turn_after_the_warm_up(monkeypatch):
    index = _stale_index()
    size, least = index.passage_cut
    long_turns = [i for i in range(len(index.turns)) if len(passage_spans(index.turns[i].text, size, least)) > 1]
    assert long_turns
    counts = [int((index.passages.doc_turn == i).sum()) for i in long_turns]
    assert counts != [len(passage_spans(index.turns[i].text, size, least)) for i in long_turns]  # the index is stale
    q_terms = ["queue", "depth"]
    expected = {i: _reference(index, i, q_terms) for i in long_turns}
    clear_text_caches()  # what a process that starts holds: nothing read
    prepare_excerpts(index, LuminaSettings().recall_excerpt_tokens)

    def read_at_query(text):
        raise AssertionError(f"a query read a passage's terms ({len(text)} characters)")

    monkeypatch.setattr(excerpts, "_passage_terms", read_at_query)
    pick = passage_picker(index, {}, q_terms)
    chosen = {i: pick(i)[0] for i in long_turns}
    assert chosen == expected
    spans = {i: passage_spans(index.turns[i].text, size, least)[chosen[i]] for i in long_turns}
    assert all("queue depth" in index.turns[i].text[a:b] for i, (a, b) in spans.items())


def test_erasure_empties_the_passages_read_for_the_picker(memory):
    assert passage_holders in text_caches()
    settings = memory.services.settings
    text = _reply(7)
    replay(memory.graph, "erin", [{"speaker": "user", "text": "How is the queue set up?", "ts": 1_760_000_000,
                                   "source_id": "erin-0"},
                                  {"speaker": "lumina", "text": text, "ts": 1_760_000_060, "source_id": "erin-1"}])
    passage_holders(text, settings.recall_passage_tokens, settings.recall_passage_min_tokens)
    assert passage_holders.cache_info().currsize > 0
    erase_user(memory.services, "erin", erase_plan(memory.services, "erin")["token"], actor="test")
    assert passage_holders.cache_info().currsize == 0
