"""A deliberate question is answered by what matches it, not by what was said last.

The mid-term channel (S1 "recent") offers the most recent segments for being recent alone. For a reply that is
what a conversation needs (the purpose values recency); for a deliberate question it adds candidates unrelated to
the question, and recall on every labelled set is as good or better without them (bench/results/ablation_all.md:
LoCoMo dev at 256 tokens +0.52 [+0.16, +0.85] points without them, no set lower). So a question's recall does not
run the channel; a reply's does.
"""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall_run import RecallRequest, RecallRun
from lumina_memory.nodes.retrieval.recall_stages import STAGES

DAY = 86_400.0
START = 1_780_000_000.0

SAID = [
    ("I adopted a grey cat called Pepper from the shelter.", "What a lovely name for a cat!"),
    ("Pepper sleeps on my keyboard every morning.", "Cats love warm keyboards."),
    ("My sister is getting married in Lisbon in June.", "Congratulations to her!"),
    ("I still need to buy a suit for the wedding.", "A linen suit would suit Lisbon."),
]


def _rows(user: str) -> list[dict]:
    rows = []
    for k, (said, reply) in enumerate(SAID):
        ts = START + k * 3 * DAY  # days apart: each exchange closes its own segment
        rows.append({"user_id": user, "speaker": "user", "text": said, "ts": ts, "source_id": f"u{k}"})
        rows.append({"user_id": user, "speaker": "lumina", "text": reply, "ts": ts + 30, "source_id": f"a{k}"})
    return rows


def _segment_tiers(services, user: str, query: str, purpose: str) -> set[str]:
    run = RecallRun(services, RecallRequest(user, query, purpose=purpose, budget=256))
    for stage in STAGES:
        run = stage(run)
        if stage.__name__ == "segment_candidates":
            return {tier for tiers in run.cands.seg_tiers.values() for tier in tiers}
    raise AssertionError("no segment_candidates stage")


def test_a_question_skips_the_recent_segments_channel_and_a_reply_uses_it(memory):
    user = "recency-user"
    replay(memory.graph, user, _rows(user), flush=True)
    assert memory.services.stores.midterm.recent_signals(user, memory.settings.retrieve_recent)  # there are recent ones
    assert "mid-term" not in _segment_tiers(memory.services, user, "What is my cat called?", "question")
    assert "mid-term" in _segment_tiers(memory.services, user, "What is my cat called?", "talking")
