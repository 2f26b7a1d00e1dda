"""Recall over a short history: the dense and keyword channels offer a share of its short turns, not every turn.

Asked for ``recall_turn_candidates`` (80) turns, the dense channel over a history of fewer turns returned every
one of them, each with a vote in the fusion; in a new user's chat of short statements and short replies, the
look-alikes that share only a common word with the question ("mein") and the replies next to them then outranked
the statement that answers it in other words, which only the dense channel ranks high (the multilingual set, where
full recall was below the plain preset at 128 tokens). nodes.retrieval.channels.short_turn_count says how many;
long turns found by their passages all stay (cutting them cost recall on the long-reply sets).
"""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.channels import SHORT_FLOOR, SHORT_SHARE, fewer_short_turns, short_turn_count
from lumina_memory.nodes.retrieval.recall_run import RecallRequest, RecallRun
from lumina_memory.nodes.retrieval.recall_stages import STAGES
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.stores.models import Turn
from lumina_memory.stores.settings import LuminaSettings

DAY = 86_400.0
START = 1_780_000_000.0

SAID = ["Mein Kater heißt Moritz.", "Mein Bruder wohnt in Bremen.", "Meine Oma backt jeden Sonntag Kuchen.",
        "Mein Fahrrad ist kaputt.", "Meine Lieblingsfarbe ist Grün.", "Mein Nachbar spielt laut Klavier.",
        "Meine Wohnung ist ziemlich klein.", "Mein Lieblingsessen ist Spätzle.", "Ich habe heute lange geschlafen.",
        "Es regnet schon den ganzen Tag.", "Ich trinke gerade einen Tee.", "Ich arbeite als Tierärztin in einer Praxis."]
REPLIES = ["Alles klar!", "Schön zu hören.", "Erzähl mir mehr.", "Ich merke es mir."]


def _rows(user: str) -> list[dict]:
    rows = []
    for k, text in enumerate(SAID):
        ts = START + (k // 4) * DAY + (k % 4) * 120
        rows.append({"user_id": user, "speaker": "user", "text": text, "ts": ts, "source_id": f"u{k}"})
        rows.append({"user_id": user, "speaker": "lumina", "text": REPLIES[k % len(REPLIES)], "ts": ts + 30,
                     "source_id": f"a{k}"})
    return rows


def _candidates(services, user: str, question: str):
    run = RecallRun(services, RecallRequest(user, question, purpose="question", budget=64))
    for stage in STAGES:
        run = stage(run)
        if stage.__name__ == "turn_candidates":
            return run


def test_over_a_short_history_the_dense_channel_offers_a_share_of_the_turns(memory):
    user = "new-user"
    rows = _rows(user)
    assert len(rows) < memory.settings.recall_turn_candidates  # a history shorter than a channel's candidates
    replay(memory.graph, user, rows, flush=True)
    run = _candidates(memory.services, user, "Was ist mein Beruf?")
    dense = run.cands.turn_rankings["turn_content"]
    assert len(dense) == short_turn_count(memory.settings, len(rows)) < len(rows)
    assert len(run.cands.turn_rankings.get("turn_keyword", [])) <= len(dense)
    # the statement that answers in other words is among them, by meaning alone
    answer = next(i for i, t in enumerate(run.index.turns) if t.source_id == "u11")
    assert answer in dense


def test_a_channel_offers_the_settings_count_over_a_long_history():
    settings = LuminaSettings(data_dir="/tmp/unused-lumina")
    assert short_turn_count(settings, 10_000) == settings.recall_turn_candidates
    assert short_turn_count(settings, 64) == max(SHORT_FLOOR, round(SHORT_SHARE * 64)) < 64
    assert short_turn_count(settings, 3) == 3  # never more than there are turns
    assert short_turn_count(settings, 0) == 0


def test_long_turns_found_by_their_passages_all_stay():
    settings = LuminaSettings(data_dir="/tmp/unused-lumina")
    long_text = "Assistant: " + " ".join(f"Step {j} of the backup plan copies folder {j}." for j in range(40))
    turns = [Turn(turn_id=f"t{k}", source_id=f"D{k}", user_id="u", segment_id=f"s{k}", speaker="lumina" if k % 2 else "user",
                  text=long_text if k % 2 else f"Short note {k}.", ts=1_700_000_000.0 + 60 * k) for k in range(12)]
    index = UserTurns.build(turns, (settings.recall_passage_tokens, settings.recall_passage_min_tokens))
    ranking = list(range(12))
    kept = fewer_short_turns(index, ranking, 2)
    assert kept == [0, 1, 2, 3, 5, 7, 9, 11]  # the first two short turns, every long one, in rank order
    assert fewer_short_turns(UserTurns.build(turns, (0, 0)), ranking, 2) == [0, 1]  # no passages: every turn is short
