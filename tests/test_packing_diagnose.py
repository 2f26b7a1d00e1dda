"""bench.packing_diagnose's before/after comparison: a paired Δ of recall@B and answer@B per budget over the same
questions, with the misses' kinds of each run; runs of different questions are refused, not compared."""

from __future__ import annotations

import pytest

from bench.packing_diagnose import compare, summarise


def _row(conv: str, question: str, budget: int, recall: float, answer: float, misses=()) -> dict:
    return {"conv": conv, "question": question, "budget": budget, "full": recall, "full_answer": answer,
            "misses": [{"id": "D1:1", "kind": k} for k in misses]}


def _run(scores: dict[tuple[str, str], tuple[float, float]], budget: int = 512, misses=()) -> dict:
    return {"rows": [_row(c, q, budget, r, a, misses) for (c, q), (r, a) in scores.items()]}


QUESTIONS = [(f"c{k % 3}", f"q{k}") for k in range(9)]


def test_the_delta_is_after_minus_before_with_an_interval_around_it():
    before = _run({q: (0.5, 0.0) for q in QUESTIONS}, misses=("out",))
    after = _run({q: (1.0 if q[0] == "c0" else 0.5, 0.0) for q in QUESTIONS}, misses=("excerpt",))
    out = compare(before, after)["512"]
    assert out["questions"] == 9
    assert out["recall"]["before"] == 0.5 and out["recall"]["after"] == pytest.approx(2 / 3, abs=1e-4)
    assert out["recall"]["delta"] == pytest.approx(1 / 6, abs=1e-4)
    lo, hi = out["recall"]["ci"]
    assert 0.0 <= lo <= out["recall"]["delta"] <= hi <= 0.5  # one conversation of three gained 0.5
    assert out["answer"]["delta"] == 0.0
    assert out["misses_before"] == {"out": 9} and out["misses_after"] == {"excerpt": 9}


def test_a_run_of_one_half_is_compared_with_the_same_conversations_of_a_run_of_both():
    before = _run({q: (0.5, 0.5) for q in QUESTIONS})
    after = _run({q: (1.0, 0.5) for q in QUESTIONS if q[0] == "c1"})
    out = compare(before, after)["512"]
    assert out["questions"] == 3 and out["recall"]["delta"] == 0.5


def test_runs_of_different_questions_are_refused():
    before = _run({q: (0.5, 0.5) for q in QUESTIONS})
    after = _run({(c, q + "?"): s for (c, q), s in {q: (0.5, 0.5) for q in QUESTIONS}.items()})
    with pytest.raises(ValueError, match="same questions"):
        compare(before, after)


def test_the_summary_gives_each_budget_its_own_figures():
    rows = [{**_row("c0", "q", 512, 0.0, 0.0, ("out",)), "misses": [{"id": "D1:1", "kind": "out", "rank": 30, "plain_rank": 3}]}, _row("c0", "q", 1024, 1.0, 1.0)]
    out = summarise(rows)
    assert out["512"]["full"]["recall"] == 0.0 and out["1024"]["full"]["recall"] == 1.0
    assert out["512"]["misses"] == {"out": 1} and out["1024"]["misses"] == {}
    assert out["512"]["out_plain_rank_better"] == 1  # the plain preset ranked that evidence higher


def test_an_excerpt_without_the_answer_says_what_it_quoted():
    from bench.packing_diagnose import _quoted
    from lumina_memory.nodes.text.passages import passage_spans
    from lumina_memory.stores.settings import LuminaSettings

    settings = LuminaSettings()
    filler = " ".join(f"Paragraph {k} of the reference text says nothing about the port." for k in range(60))
    text = "Assistant: " + filler + " The staging database listens on port 5433. " + filler
    spans = passage_spans(text, settings.recall_passage_tokens, settings.recall_passage_min_tokens)
    holding = next(k for k, (a, b) in enumerate(spans) if "5433" in text[a:b])
    other = next(k for k, (a, b) in enumerate(spans) if "5433" not in text[a:b])

    def item(number):
        return {"text": "…", "passages": [{"source_id": "D1:2", "passage": number, "of": len(spans)}]}

    assert _quoted(settings, "5433", item(holding), "D1:2", text) == "answering passage"
    assert _quoted(settings, "5433", item(other), "D1:2", text) == "another passage"
    assert _quoted(settings, "5433", {"text": "Mika: hi …"}, "D1:1", "Mika: hi. The port is 5433.") == "sentences"
    rows = [{**_row("c0", "q", 512, 1.0, 0.0), "misses": [{"id": "D1:2", "kind": "excerpt", "quoted": "another passage"}]}]
    assert summarise(rows)["512"]["excerpts_quoted"] == {"another passage": 1}


def test_the_sentence_that_answers_a_paraphrased_question_ranks_by_meaning_not_by_words():
    """The excerpt orders a turn's sentences by the question's words; a paraphrased question shares none with the
    sentence that answers it, and the diagnosis says where meaning would have put it."""
    from bench.packing_diagnose import answer_sentence_ranks
    from lumina_memory.nodes.text.embedder import Usem3Embedder

    text = ("Mika: Pasting the release notes. The release notes list every fixed bug. "
            "The notes were written by the release team. "
            "We now keep every nightly database backup for fourteen days. What do the notes say?")
    ranks = answer_sentence_ranks(Usem3Embedder(), "How long are the overnight copies of our data retained?", None,
                                  "fourteen days", text)
    assert ranks == {"sentences": 5, "by_words": 3, "by_meaning": 0}  # no word shared: the excerpt's order is the text's
    assert answer_sentence_ranks(Usem3Embedder(), "Which port?", None, "5433", "Mika: the port is 5433.") is None
    rows = [{**_row("c0", "q", 512, 1.0, 0.0), "misses": [
        {"id": "D1:2", "kind": "excerpt", "answer_sentence": {"sentences": 5, "by_words": 3, "by_meaning": 0}}]}]
    assert summarise(rows)["512"]["answer_sentence"] == {
        "excerpts": 1, "by_words_first": 0, "by_words_top3": 0, "by_meaning_first": 1, "by_meaning_top3": 1}
