"""Passages follow the text's own paragraphs (issue 46): a user's one-sentence statement after a pasted page of
documentation, log or code is a passage of its own, not the tail of a window that is mostly the paste, so its
vector and its terms are the statement's."""

from __future__ import annotations

from lumina_memory.nodes.retrieval.budget import count_tokens
from lumina_memory.nodes.text.passages import MAX_PASSAGES, passage_spans, passages

DOCS = [
    "The broker keeps every message until a worker acknowledges it, so a crashed worker loses nothing.",
    "Workers pull jobs in batches and the prefetch setting decides how many each one reserves at a time.",
    "Retries use an exponential backoff that starts at one second and doubles up to a configured maximum.",
    "Each job records its start time, its end time and the host that ran it in the result backend.",
    "Scheduled jobs are stored in a sorted set and moved to the queue when their time comes.",
    "A job that fails more often than the retry limit lands in the failed registry for inspection.",
]
STATEMENT = "Update: the task queue moved from Celery to RQ last week."
QUESTION = "Can you walk me through the worker setup for it?"


def _paste(sentences: int) -> str:
    return " ".join(DOCS[k % len(DOCS)] for k in range(sentences))


def _user_turn() -> str:
    return f"Pasting what I found so far:\n\n{_paste(18)}\n\n{STATEMENT} {QUESTION}"


def test_a_statement_after_a_pasted_page_is_a_passage_of_its_own():
    text = _user_turn()
    found = [p for p in passages(text, 128, 160) if "moved from Celery to RQ" in p]
    assert found
    for p in found:
        assert not any(doc in p for doc in DOCS), p  # nothing of the paste dilutes it
        assert count_tokens(p) < 128 // 2


def test_short_paragraphs_in_a_row_share_one_passage():
    notes = "\n\n".join(f"Note {k}: the staging host is db-{k}.internal now." for k in range(4))
    text = f"{_paste(18)}\n\n{notes}"
    found = [p for p in passages(text, 128, 160) if "Note 0" in p]
    assert len(found) == 1 and all(f"Note {k}:" in found[0] for k in range(4))
    assert not any(doc in found[0] for doc in DOCS)


def test_no_window_runs_across_a_blank_line_between_long_paragraphs():
    first, second = _paste(12), _paste(13)
    text = f"{first}\n\n{second}"
    cut = len(first)
    spans = passage_spans(text, 128, 160)
    assert len(spans) >= 4
    assert all(b <= cut or a > cut for a, b in spans)
    assert any(b == cut for _, b in spans) and any(a == cut + 2 for a, _ in spans)
    # inside a paragraph, consecutive windows still share a sentence
    inside = [(a, b) for a, b in spans if b <= cut]
    assert len(inside) > 1 and all(c < b for (_, b), (c, _) in zip(inside, inside[1:]))


def test_a_code_fence_is_a_paragraph_even_with_blank_lines_inside_it():
    code = "```python\n" + "\n\n".join(f"def step_{k}(job):\n    return run(job, retries={k})" for k in range(30)) + "\n```"
    text = f"{_paste(4)}\nHere is the worker:\n{code}\nIt still times out after the move to RQ."
    spans = passage_spans(text, 128, 160)
    start, end = text.index("```python"), text.rindex("```") + 3
    for a, b in spans:
        assert b <= start or a >= end or (a >= start and b <= end), text[a:b]
    tail = [text[a:b] for a, b in spans if a >= end]
    assert tail == ["It still times out after the move to RQ."]
    assert any(a == start for a, _ in spans) and any(b == end for _, b in spans)


def test_every_word_is_in_a_passage_and_the_same_text_gives_the_same_windows():
    text = _user_turn() + "\n\n" + "\n\n".join(_paste(k % 5 + 1) for k in range(20))
    spans = passage_spans(text, 128, 160)
    passage_spans.cache_clear()
    assert passage_spans(text, 128, 160) == spans
    covered = set()
    for a, b in spans:
        covered.update(range(a, b))
        assert text[a:b] == text[a:b].strip()
    assert all(ch.isspace() for k, ch in enumerate(text) if k not in covered)
    assert spans == tuple(sorted(spans))


def test_many_paragraphs_still_give_at_most_max_passages():
    text = "\n\n".join(f"{DOCS[k % len(DOCS)]} {DOCS[(k + 1) % len(DOCS)]} (part {k})" for k in range(400))
    spans = passage_spans(text, 128, 160)
    assert 1 < len(spans) <= MAX_PASSAGES
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
