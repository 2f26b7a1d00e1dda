"""Packing into a small budget: the quotes of long turns shrink with the budget, so the turns ranked next still fit
(a 256-token budget held five 48-token quotes of long replies, and the evidence ranked sixth was left out, where a
plain ranking's shorter quotes held it)."""

from __future__ import annotations

from lumina_memory.nodes.retrieval.budget import EXCERPT_FLOOR, count_tokens, excerpt_tokens
from lumina_memory.nodes.retrieval.excerpts import passage_picker
from lumina_memory.nodes.retrieval.packing import pack_turns
from lumina_memory.nodes.retrieval.packing_groups import CONTEXT_SHARE, HITS_FIRST, context_room
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.stores.models import Turn
from lumina_memory.stores.settings import LuminaSettings

_SENTENCE = "The {what} of service {k} is {k}{j} now."


def _long_turns(n: int) -> list[Turn]:
    """``n`` long replies, each of forty sentences (about 300 words), on days of their own."""
    return [Turn(turn_id=f"t{k}", source_id=f"D{k}:2", user_id="u", speaker="lumina", segment_id=f"s{k}",
                 text="Assistant: " + " ".join(_SENTENCE.format(what="staging port", k=k, j=j) for j in range(40)),
                 ts=1_700_000_000.0 + 86_400 * k) for k in range(n)]


def _packed(budget: int, n: int = 10) -> tuple[list[dict], list[str]]:
    """The long turns ranked in order, packed into ``budget``, each quoted from its answering passage."""
    settings = LuminaSettings()
    index = UserTurns.build(_long_turns(n), (settings.recall_passage_tokens, settings.recall_passage_min_tokens))
    q_terms = ["staging", "port"]
    ranked = [(1.0 - k / 100, k, 1.0 - k / 100, 1.0) for k in range(n)]
    items = pack_turns(ranked, index.turns, {}, budget, None, settings, 10, q_terms, index.token_counts,
                       passage_picker(index, {}, q_terms))
    assert all(item.get("passages") for item in items)  # quoted from a passage, not as a chat turn's excerpt
    return items, [s for item in items for s in item["source_ids"]]


def test_at_a_small_budget_the_next_ranked_long_turns_fit_as_shorter_quotes():
    settings = LuminaSettings()
    budget = 160
    assert budget // (settings.recall_passage_excerpt_tokens + 1) < 6  # at the settings' length six would not fit
    items, sources = _packed(budget)
    assert [f"D{k}:2" for k in range(6)] == sources[:6]  # the six best, in rank order
    assert sum(count_tokens(i["text"]) for i in items) <= budget
    assert all(i["tokens"] <= excerpt_tokens(settings.recall_passage_excerpt_tokens, budget) + 4 for i in items)


def test_at_a_large_budget_long_turns_keep_the_settings_excerpt_length():
    settings = LuminaSettings()
    items, sources = _packed(1024)
    assert sources[:10] == [f"D{k}:2" for k in range(10)]
    # the quote (whole sentences, with its date) is near the settings' length, over a small budget's
    small = excerpt_tokens(settings.recall_passage_excerpt_tokens, 160)
    assert all(small + 4 < i["tokens"] <= settings.recall_passage_excerpt_tokens + 4 for i in items)
    assert excerpt_tokens(settings.recall_passage_excerpt_tokens, 1024) == settings.recall_passage_excerpt_tokens


def test_excerpt_length_bounds():
    assert excerpt_tokens(32, None) == 0  # no budget: whole turns
    assert excerpt_tokens(0, 256) == 0  # the settings say whole turns
    assert excerpt_tokens(48, 8) == EXCERPT_FLOOR  # never cut below a sentence's worth
    assert excerpt_tokens(10, 8) == 10  # nor above what the settings allow
    assert excerpt_tokens(48, 256) < 48 <= excerpt_tokens(48, 1024)


def _day(d: int, k: int, speaker: str, text: str) -> Turn:
    return Turn(turn_id=f"d{d}t{k}", source_id=f"D{d}:{k}", user_id="u", speaker=speaker, segment_id=f"s{d}",
                text=text, ts=1_700_000_000.0 + 86_400 * d + 30 * k)


def _exchange_and_hits() -> tuple[list[Turn], list[tuple]]:
    """The best hit is a question; the long reply after it is ranked second (a neighbour inherits a share of its
    relevance), and two more hits follow on other days."""
    words = "one two three four five six seven eight nine ten eleven twelve"
    reply = "Assistant: " + " ".join(f"The port {k} is fine for {words}." for k in range(30))
    turns = [_day(0, 0, "user", f"Mika: which port should staging use {words}?"), _day(0, 1, "lumina", reply),
             _day(1, 0, "user", f"Mika: the staging port was 5432 before {words}"),
             _day(2, 0, "user", f"Mika: the staging port moved to 7433 {words}")]
    return turns, [(1.0, 0, 1.0, 1.0), (0.9, 1, 0.9, 1.0), (0.8, 2, 0.8, 1.0), (0.7, 3, 0.7, 1.0)]


def test_at_a_small_budget_the_top_hits_are_packed_before_a_neighbouring_long_reply():
    """At a small budget the hits are packed first, the quote of the neighbouring long reply only in what they
    leave; at a large one it joins the best hit's item."""
    turns, ranked = _exchange_and_hits()
    settings = LuminaSettings()
    index = UserTurns.build(turns, (settings.recall_passage_tokens, settings.recall_passage_min_tokens))
    q_terms = ["port", "stag"]

    def pack(budget: int) -> list[dict]:
        return pack_turns(ranked, index.turns, {}, budget, None, settings, 10, q_terms, index.token_counts,
                          passage_picker(index, {}, q_terms))

    hits = sum(int(index.token_counts[i]) + 1 for i in (0, 2, 3))  # each with its date
    budget = hits + EXCERPT_FLOOR // 2  # the three hits fit; the neighbour's quote too only without one of them
    small = pack(budget)
    assert [s for item in small for s in item["source_ids"]] == ["D0:0", "D1:0", "D2:0"]
    assert sum(count_tokens(i["text"]) for i in small) <= budget
    large = pack(1024)
    assert [i["source_ids"] for i in large] == [["D0:0", "D0:1"], ["D1:0"], ["D2:0"]]
    assert large[0].get("passages")  # the neighbour is quoted from its passage


def test_a_neighbour_quoted_whole_is_packed_in_rank_order():
    """A short turn next to the best hit (the reply to a question, often the other half of the answer) is quoted
    whole and takes its rank's place, before the hits ranked below it."""
    turns, ranked = _exchange_and_hits()
    turns[1] = _day(0, 1, "lumina", "Assistant: use 7433 for staging.")
    index = UserTurns.build(turns)
    settings = LuminaSettings()
    budget = sum(int(index.token_counts[i]) + 1 for i in (0, 1, 2))  # the best, its neighbour and one more
    small = pack_turns(ranked, index.turns, {}, budget, None, settings, 10, ["port", "stag"], index.token_counts)
    assert [s for item in small for s in item["source_ids"]] == ["D0:0", "D0:1", "D1:0"]


def test_the_neighbours_room_grows_with_the_budget_beyond_the_hits_quotes():
    assert context_room(None, 48) is None  # no budget: nothing waits
    assert context_room(256, 48) == int(256 * CONTEXT_SHARE)  # a small budget: the hits first
    assert context_room(1024, 48) == 1024 - HITS_FIRST * 48  # a large one keeps ten quotes, the rest is theirs
    assert context_room(256, 48) < context_room(512, 48) < context_room(1024, 48)


def test_at_half_a_thousand_tokens_a_budget_holds_twenty_quotes_of_long_replies():
    """Real long conversations rank the evidence of a question deeper than ten long replies: at 512 tokens the
    quotes are about a twentieth of the budget (a 48-token quote let ten in, and the written real-text questions'
    evidence ranked eleventh to twentieth was left out), and at 1,024 they keep the settings' length."""
    settings = LuminaSettings()
    assert excerpt_tokens(settings.recall_passage_excerpt_tokens, 512) <= 512 // 20
    items, sources = _packed(512, 24)
    assert sources[:18] == [f"D{k}:2" for k in range(18)]
    assert sum(i["tokens"] for i in items) <= 512
    assert excerpt_tokens(settings.recall_passage_excerpt_tokens, 1024) == settings.recall_passage_excerpt_tokens
