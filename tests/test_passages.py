"""Passages of long turns (issue 19): a fact said once in the middle of a long reply is found by its passage,
quoted from that passage (not a whole 1,000-word reply, not an excerpt from elsewhere in it), and the item says
which part of which turn it quotes; the passages live and die with their turn."""

from __future__ import annotations

import random

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.budget import count_tokens
from lumina_memory.nodes.retrieval.messages import read_message
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.text.passages import MAX_PASSAGES, passage_spans, passages

T0 = 1_790_000_000.0
DAY = 86_400.0

FILLER = [
    "Keep the proxy configuration in the repository and reload it instead of editing it on the server.",
    "Run the migrations against a copy of production data before the release to see how long they take.",
    "A flaky test is a bug report about either the test or the code, so never just retry it.",
    "Log to standard output and let the platform collect the logs; rotate them on the host.",
    "Cache computed results close to where they are used, and give every cache entry an expiry.",
    "Make jobs idempotent, because every queue delivers some messages twice sooner or later.",
    "Protect the main branch so that a failing pipeline blocks the merge request.",
    "Measure before optimising; the slow part is rarely where you expect it to be.",
]
CODE = "```python\ndef process(job_id: str) -> None:\n    job = load_job(job_id)\n    if job.done:\n        return\n    run(job)\n```"


def _reply(seed: int, fact: str | None, words: int = 700) -> str:
    """A markdown reply of about ``words`` words with ``fact`` in its middle."""
    rng = random.Random(seed)
    blocks: list[str] = ["Assistant: Sure, let's go through it step by step.", "## Details"]
    while sum(len(b.split()) for b in blocks) < words:
        blocks.append(" ".join(rng.sample(FILLER, 4)))
        if rng.random() < 0.3:
            blocks.append(CODE)
    if fact:
        blocks.insert(len(blocks) // 2, fact)
    return "\n\n".join(blocks)


def _conversation(user: str) -> list[dict]:
    exchanges = [
        ("Can you walk me through server hardening?", None),
        ("How should I set up the database for staging?", "Note that the staging database port is 6543 — the rest of this section follows from it."),
        ("What about logging and error tracking?", "For comparison, another team I helped used port 7001 for their cache, which is unrelated."),
        ("Any advice on background jobs?", None),
    ]
    rows: list[dict] = []
    for day, (question, fact) in enumerate(exchanges):
        ts = T0 + day * DAY
        rows.append({"user_id": user, "speaker": "user", "text": f"Mika: {question}", "ts": ts, "source_id": f"D{day + 1}:1"})
        rows.append({"user_id": user, "speaker": "lumina", "text": _reply(day, fact), "ts": ts + 60, "source_id": f"D{day + 1}:2"})
    return rows


# ------------------------------------------------------------------------------------------- the windows


def test_a_short_turn_has_no_passages():
    assert passage_spans("Mika: what time is the meeting tomorrow?", 128, 160) == ()


def test_passages_cover_the_text_in_overlapping_windows_cut_at_sentence_ends():
    text = _reply(1, "Note that the staging database port is 6543.", words=900)
    spans = passage_spans(text, 128, 160)
    assert len(spans) > 5
    covered = set()
    for (a, b), (c, d) in zip(spans, spans[1:]):
        assert c < b, "consecutive passages share a unit"
        assert c > a
    for a, b in spans:
        covered.update(range(a, b))
        assert count_tokens(text[a:b]) <= 128 + 40  # one unit may run over the window; none runs far
        assert text[a:b] == text[a:b].strip()
    assert all(ch.isspace() for k, ch in enumerate(text) if k not in covered)
    assert any("port is 6543." in p for p in passages(text, 128, 160))


def test_japanese_text_is_cut_at_its_sentence_ends():
    text = "".join(f"これは{i}番目の説明で、設定ファイルはリポジトリに置いて管理します。" for i in range(40))
    spans = passage_spans(text, 128, 160)
    assert len(spans) >= 5
    assert all(text[a:b].endswith("。") for a, b in spans)


def test_a_degenerate_reply_gets_wider_windows_not_thousands_of_passages():
    log = "".join(f"2024-10-0{i % 9 + 1} 12:00:{i % 60:02d} worker[{i}] retrying job {i} after timeout\n" for i in range(6000))
    spans = passage_spans(log, 128, 160)
    assert 1 < len(spans) <= MAX_PASSAGES
    assert spans[0][0] == 0 and spans[-1][1] == len(log.rstrip("\n"))


# ------------------------------------------------------------------------------------------- recall


def test_a_fact_in_the_middle_of_a_long_reply_is_quoted_from_its_passage(memory_factory):
    mem = memory_factory()
    services = mem.services
    replay(mem.graph, "mika", _conversation("mika"))
    reply = next(r["text"] for r in _conversation("mika") if r["source_id"] == "D2:2")
    items = recall(services, "mika", "Which port does the staging database use?", purpose="question", budget=300)
    quoting = [i for i in items if "D2:2" in i["source_ids"]]
    assert quoting, [i["source_ids"] for i in items]
    item = quoting[0]
    assert "6543" in item["text"]
    assert item["tokens"] < count_tokens(reply) / 4  # a passage, not the reply
    (part,) = [p for p in item["passages"] if p["source_id"] == "D2:2"]
    spans = passage_spans(reply, services.settings.recall_passage_tokens, services.settings.recall_passage_min_tokens)
    assert part["of"] == len(spans) and 0 < part["passage"] < part["of"]
    a, b = spans[part["passage"]]
    assert "6543" in reply[a:b]
    # the whole reply is still one message to read
    assert read_message(services.stores.archive, "mika", "D2:2") == reply


def test_switching_passages_off_quotes_the_turn_by_its_sentences_again(memory_factory):
    mem = memory_factory()
    replay(mem.graph, "mika", _conversation("mika"))
    items = recall(mem.services, "mika", "Which port does the staging database use?", purpose="question", budget=300,
                   disabled=("passages",))
    assert items and all("passages" not in i for i in items)


def test_passage_points_go_with_their_turn_and_their_user(memory_factory):
    mem = memory_factory()
    services = mem.services
    turns_store = services.stores.turns
    replay(mem.graph, "mika", _conversation("mika"))
    replay(mem.graph, "noa", _conversation("noa"))
    archived = services.stores.archive.counts("mika", which=("turns",))["turns"]
    index = services.turn_index.get(services.stores.archive, "mika", turns_store)
    assert len(index.passage_of) > 8
    assert turns_store.count("mika") == archived + len(index.passage_of)  # a point per turn and per passage

    reply = next(i for i, t in enumerate(index.turns) if t.source_id == "D2:2")
    own = sum(1 for turn, _part in index.passage_of.values() if turn == reply)
    assert turns_store.delete("mika", [index.turns[reply].turn_id]) == 1 + own

    erase_user(services, "mika", erase_plan(services, "mika")["token"])
    assert turns_store.count("mika") == 0
    assert turns_store.count("noa") > services.stores.archive.counts("noa", which=("turns",))["turns"]


def test_the_cli_reads_back_the_whole_reply_a_passage_came_from(tmp_path, cli_factory):
    import json

    cli = cli_factory(check=False, in_process=True)  # main in this process: the commands' output is the subject
    rows = _conversation("mika")
    transcript = tmp_path / "mika.jsonl"
    transcript.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    try:
        assert cli("ingest", str(transcript)).returncode == 0
        items = json.loads(cli("recall", "--user", "mika", "--json", "Which port does the staging database use?").stdout)
        assert any("D2:2" in i["source_ids"] for i in items)
        read = cli("read", "--user", "mika", "--json", "D2:2")
        assert read.returncode == 0, read.stderr
        assert json.loads(read.stdout)["text"] == next(r["text"] for r in rows if r["source_id"] == "D2:2")
        missing = cli("read", "--user", "mika", "D99:9")
        assert missing.returncode == 1 and "D99:9" in missing.stderr
        hostile = cli("read", "--user", "../etc", "D2:2")
        assert hostile.returncode != 0 and "user" in (hostile.stderr + hostile.stdout)
    finally:
        cli("services", "stop")


def test_the_flush_prepares_the_long_turns_for_quoting(memory_factory):
    """The packer's sentence split of a long turn is made at write time: a recall quoting it tokenises nothing."""
    from lumina_memory.nodes.retrieval.excerpts import _sentence_terms

    mem = memory_factory()
    replay(mem.graph, "mika", _conversation("mika"))
    misses = _sentence_terms.cache_info().misses
    items = recall(mem.services, "mika", "Which port does the staging database use?", purpose="question", budget=300)
    assert any("passages" in i for i in items)
    assert _sentence_terms.cache_info().misses == misses


def test_the_flush_prepares_chat_turns_longer_than_an_excerpt(memory_factory):
    """A chat turn over recall_excerpt_tokens (32 words) and under the passage length (160) is quoted by
    excerpt too: its sentences are split at write time, not by the first recall that quotes it."""
    from lumina_memory.nodes.retrieval.excerpts import _sentences

    mem = memory_factory()
    assert 0 < mem.services.settings.recall_excerpt_tokens < 60 < mem.services.settings.recall_passage_min_tokens
    filler = ("We walked along the river for hours and talked about the old neighbourhood. The bakery on the "
              "corner still sells the same rye bread. My sister says the park got a new fountain last spring. ")
    rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "ts": 1_790_000_000 + 600 * i, "source_id": f"m{i}",
             "text": (f"Chat number {i}: my cousin Ravi adopted a parrot named Kiwi{i}. " + filler) if i % 2 == 0
             else "That sounds lovely, tell me more."} for i in range(12)]
    replay(mem.graph, "tara", rows)
    misses = _sentences.cache_info().misses
    items = recall(mem.services, "tara", "What is the name of Ravi's parrot?", purpose="question", budget=120)
    quoted = [i for i in items if "…" in i["text"] or len(i["text"].split()) < 50]
    assert quoted and any("Kiwi" in i["text"] for i in items)
    assert _sentences.cache_info().misses == misses


def test_the_flush_counts_the_passages_feedback_weighs(memory_factory):
    """Pseudo-relevance feedback weighs the terms of its best long turns' answering passages: counted at write
    time, so a recall tokenises none of them (it was most of the channel's time in a query's first run)."""
    from lumina_memory.nodes.retrieval.excerpts import passage_term_counts

    mem = memory_factory()
    replay(mem.graph, "mika", _conversation("mika"))
    misses = passage_term_counts.cache_info().misses
    items = recall(mem.services, "mika", "Which port does the staging database use?", purpose="question", budget=300)
    assert any("passages" in i for i in items)
    assert passage_term_counts.cache_info().hits > 0
    assert passage_term_counts.cache_info().misses == misses


def test_a_sentence_split_leaves_the_query_side_term_cache_alone():
    from lumina_memory.nodes.retrieval.excerpts import _sentences
    from lumina_memory.nodes.text import tokenize

    before = tokenize._views.cache_info().currsize
    text = "lumina: The kiln reached 1240 degrees. Then the glaze cracked. We tried a slower cooling curve!"
    prefix, _, sentences = _sentences(text)
    assert prefix == "lumina: " and len(sentences) == 3
    assert sentences[0][2] == frozenset(tokenize.terms(sentences[0][0]))
    assert tokenize._views.cache_info().currsize == before + 1  # only the line above's own call
