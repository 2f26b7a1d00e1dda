"""The quote of a long reply comes from the passage that answers (issue 46): the passage the keyword and dense
channels found, not sentences elsewhere in the reply that happen to share more of the question's common words."""

from __future__ import annotations

from lumina_memory.nodes.retrieval.excerpts import counted_excerpt

_INTRO = "Assistant: The configuration of the service is simple, and the service configuration lives in one file."
_FILLER = " ".join(f"Paragraph {k} explains an unrelated part of deployment in some detail." for k in range(12))
_ANSWER = "Old log files are deleted once the folder holds more than 20 GB of them."


def _reply() -> tuple[str, tuple[int, int]]:
    text = f"{_INTRO} {_FILLER} {_ANSWER} It keeps the newest files. {_FILLER}"
    start = text.index(_ANSWER)
    return text, (start, start + len(_ANSWER) + len(" It keeps the newest files."))


def test_a_long_reply_is_quoted_from_its_answering_passage_before_common_words_elsewhere():
    text, span = _reply()
    # "configuration" and "service" are in the intro twice over; the passage holds one of the question's terms
    q_terms = {"configur", "servic", "log", "configuration", "service"}
    quote, _ = counted_excerpt(text, q_terms, 24, span)
    assert "20 GB" in quote, quote
    assert "configuration of the service" not in quote


def test_without_a_passage_the_sentences_sharing_most_terms_are_quoted():
    text, _ = _reply()
    quote, _ = counted_excerpt(text, {"configuration", "service", "configur", "servic"}, 24, None)
    assert "configuration of the service" in quote


def test_the_quote_of_a_passage_counts_its_tokens_and_stays_a_quote_of_the_reply():
    from lumina_memory.nodes.retrieval.budget import count_tokens

    text, span = _reply()
    quote, tokens = counted_excerpt(text, {"log"}, 24, span)
    assert tokens == count_tokens(quote) <= 24 + 1
    assert all(piece.strip() in text for piece in quote.removeprefix("Assistant: ").split(" … "))
