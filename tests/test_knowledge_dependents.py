"""Facts that depend on a changed fact (F6): derived_from at learning, review when what they rest on changes, the
why, priming's current facts without them, and the links in the graph — on the real stores (the archive, the
embedded graph), through the chat graph's path (replay closes segments as a conversation does)."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.dependents import rests_on
from lumina_memory.nodes.knowledge.manage import list_knowledge
from lumina_memory.nodes.knowledge.models import KnowledgeItem
from lumina_memory.nodes.knowledge.params import KnowledgeParams
from lumina_memory.nodes.knowledge.profile import build_profile
from lumina_memory.nodes.knowledge.tiers import fact_links
from lumina_memory.nodes.knowledge.unread import REVIEW, REVIEW_CONFIDENCE
from lumina_memory.nodes.priming.channels import profile_channel
from lumina_memory.nodes.priming.prime import prime
from lumina_memory.nodes.tools.pointers import parse_pointer
from lumina_memory.nodes.tools.reading import open_pointer

DAY = 86_400.0
MAY = 1_778_000_000.0


def rows(prefix: str, t0: float, lines: list[str]) -> list[dict]:
    return [{"speaker": "user", "text": text, "ts": t0 + 60 * i, "source_id": f"{prefix}-{i}"}
            for i, text in enumerate(lines)]


def fact(item_id: str, attribute: str, value: str, said_at: float, turn: str = "t1", subject: str = "user") -> KnowledgeItem:
    return KnowledgeItem(item_id=item_id, subject=subject, attribute=attribute, value=value, value_key=value.lower(),
                         text=value, source_turn_ids=(turn,), said_at=said_at, valid_from=said_at, confidence=0.9)


# --- the offline rule ---------------------------------------------------------------------------------------
def test_a_routine_rests_on_the_fact_it_names_or_whose_kind_its_words_mark():
    params = KnowledgeParams()
    osaka, toyota = fact("k-osaka", "lives_in", "Osaka", 1.0), fact("k-toyota", "works_at", "トヨタ", 1.0)
    anchors = [osaka, toyota]
    assert rests_on(fact("h1", "habit", "take the train from Umeda", 2.0, "t2"), anchors, params) == ("k-osaka",)
    assert rests_on(fact("h2", "habit", "トヨタの工場まで車で通る", 2.0, "t2"), anchors, params) == ("k-toyota",)
    assert rests_on(fact("h3", "habit", "バスで通勤", 2.0, "t2"), anchors, params) == ("k-osaka", "k-toyota")
    # Not resting: a routine with nothing of either; a like (a fan stays one after a move); a fact about someone
    # else; a routine said before the fact; a word inside another word ("business" is no bus).
    assert rests_on(fact("h4", "habit", "practise yoga", 2.0, "t2"), anchors, params) == ()
    assert rests_on(fact("l1", "likes", "Osaka Tigers", 2.0, "t2"), anchors, params) == ()
    assert rests_on(fact("h5", "habit", "take the train", 2.0, "t2", subject="Emma"), anchors, params) == ()
    assert rests_on(fact("h6", "habit", "take the train", 0.5, "t0"), anchors, params) == ()
    assert rests_on(fact("h7", "habit", "read business news", 2.0, "t2"), anchors, params) == ()
    # Said in the same turn: rests on it only with dependency_same_turn.
    same = fact("h8", "habit", "practise yoga", 1.0, "t1")
    assert rests_on(same, anchors, params) == ()
    assert rests_on(same, anchors, KnowledgeParams(dependency_same_turn=True)) == ("k-osaka", "k-toyota")


def test_contradictions_name_their_winner_and_links_need_both_ends():
    history = [
        {"item_id": "old", "superseded_by": "new", "derived_from": [], "contradicts": []},
        {"item_id": "new", "superseded_by": None, "derived_from": [], "contradicts": ["old"]},
        {"item_id": "late", "superseded_by": "new", "derived_from": [], "contradicts": ["new"]},
        {"item_id": "ctx", "superseded_by": None, "derived_from": [], "contradicts": ["new"]},
        {"item_id": "habit", "superseded_by": None, "derived_from": ["old", "forgotten"], "contradicts": []},
    ]
    assert fact_links(history, {"old", "new", "late", "ctx", "habit"}) == [
        ("ctx", "new", "contradicts", ""), ("habit", "old", "derived_from", ""),
        ("late", "new", "contradicts", "new"), ("new", "old", "contradicts", "new")]
    assert fact_links(history, {"ctx"}) == [("ctx", "new", "contradicts", "")]


def test_settings_refuse_unknown_attributes():
    with pytest.raises(ValueError):
        KnowledgeParams(dependency_markers={"address": ("station",)})
    with pytest.raises(ValueError):
        KnowledgeParams(dependent_attributes=("routine",))


# --- on the stores --------------------------------------------------------------------------------------------
def _items(services, user: str) -> dict[str, dict]:
    return {r["value"]: r for r in services.stores.archive.knowledge.items(user, history=True)}


@pytest.mark.slow  # opens every store and loads the embedder
def test_a_move_puts_the_routines_resting_on_the_old_home_under_review_and_out_of_priming(memory):
    services = memory.services
    replay(memory.graph, "ken", rows("k1", MAY, ["I live in Osaka. I take the train from Umeda every morning.",
                                                 "I really love coffee.", "I practise yoga every morning."]))
    before = _items(services, "ken")
    osaka, train = before["Osaka"], before["take the train from Umeda"]
    assert list(train["derived_from"]) == [osaka["item_id"]] and not train["note"]
    assert not before["practise yoga"]["derived_from"] and not before["coffee"]["derived_from"]
    replay(memory.graph, "ken", rows("k2", MAY + 30 * DAY, ["I moved to Fukuoka last month."]))
    after = _items(services, "ken")
    fukuoka = after["Fukuoka"]
    assert after["Osaka"]["superseded_by"] == fukuoka["item_id"] and list(fukuoka["contradicts"]) == [osaka["item_id"]]
    # The routine resting on Osaka is under review, with why; the rest is untouched.
    train = after["take the train from Umeda"]
    assert train["status"] == "current" and train["confidence"] == REVIEW_CONFIDENCE
    assert train["note"] == f"{REVIEW}rests on lives_in: Osaka, which changed, now Fukuoka"
    for kept in ("coffee", "practise yoga", "Fukuoka"):
        assert not (after[kept]["note"] or "").startswith(REVIEW), kept
    # The profile (priming's current facts) leaves it out and lists it under review with why.
    profile = build_profile(services, "ken")
    assert "take the train from Umeda" not in {f["value"] for f in profile["facts"]}
    assert {"Fukuoka", "coffee", "practise yoga"} <= {f["value"] for f in profile["facts"]}
    assert [(f["value"], f["why"]) for f in profile["under_review"]] == [
        ("take the train from Umeda", "rests on lives_in: Osaka, which changed, now Fukuoka")]
    channel = {i["_source"] for i in profile_channel(services, "ken", "Good morning!", "default", None)}
    assert f"fact:{fukuoka['item_id']}" in channel and f"fact:{train['item_id']}" not in channel
    primed = prime(services, "ken", "Good morning!", message_type="default", budget=3000)
    assert f"fact:{train['item_id']}" not in {i.source for s in primed.sections for i in s.items}
    # The CLI's listing says why, and which facts it rests on.
    listed = {k["value"]: k for k in list_knowledge(services, "ken", history=True)}
    assert listed["take the train from Umeda"]["derived_from"] == [osaka["item_id"]]
    assert listed["take the train from Umeda"]["note"].startswith(REVIEW)
    assert listed["Fukuoka"]["contradicts"] == [osaka["item_id"]]
    # read_memory (the agents' and the API's way to open a fact) says why too.
    opened = open_pointer(services, "ken", parse_pointer(f"fact:{train['item_id']}"))
    assert "rests on lives_in: Osaka, which changed, now Fukuoka" in opened.text
    assert opened.details["item"]["derived_from"] == [osaka["item_id"]]
    # The graph holds the links: derived_from, and the contradiction with its winner.
    links = services.stores.graph.knowledge_links("ken")
    assert (train["item_id"], osaka["item_id"], "derived_from", "") in links
    assert (fukuoka["item_id"], osaka["item_id"], "contradicts", fukuoka["item_id"]) in links
    # Said again, the routine is current again; another user's memory knows nothing of any of it.
    replay(memory.graph, "ken", rows("k3", MAY + 40 * DAY, ["I take the train from Umeda every morning."]))
    again = _items(services, "ken")["take the train from Umeda"]
    assert not again["note"].startswith(REVIEW) and again["confidence"] > REVIEW_CONFIDENCE
    assert services.stores.archive.knowledge.items("mika", history=True) == []
    assert services.stores.graph.knowledge_links("mika") == []


@pytest.mark.slow  # opens every store and loads the embedder
def test_a_routine_said_with_the_change_rests_on_the_new_fact(memory):
    services = memory.services
    replay(memory.graph, "aki", rows("a1", MAY, ["名古屋に住んでる。毎晩駅の近くのジムに通ってる。"]))
    replay(memory.graph, "aki", rows("a2", MAY + 30 * DAY, ["福岡に引っ越した。毎朝海沿いを走ってる。"]))
    items = _items(services, "aki")
    gym, sea = items["駅の近くのジムに通う"], items["海沿いを走る"]
    assert gym["note"] == f"{REVIEW}rests on lives_in: 名古屋, which changed, now 福岡"
    assert list(sea["derived_from"]) == [items["福岡"]["item_id"]] and not sea["note"]


@pytest.mark.slow  # the unread-update detector loads the embedder
def test_a_fact_that_ends_reaches_what_rests_on_it_and_a_restated_one_does_not(tmp_path):
    """On the archive alone: quitting a job ("no longer so") puts the routine resting on it under review; a
    routine of someone else, a like naming the company, and a home fact are untouched; the weekly refold keeps
    the links."""
    from types import SimpleNamespace

    from lumina_memory.nodes.knowledge.learn import learn_segments
    from lumina_memory.nodes.knowledge.recall_items import knowledge_hits
    from lumina_memory.nodes.knowledge.review import review_user
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    services = SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace())
    try:
        def learn(segment: str, ts: float, *texts: str) -> None:
            turns = [{"turn_id": f"{segment}-{i}", "source_id": f"{segment}:{i}", "speaker": "user", "text": t,
                      "ts": ts + i} for i, t in enumerate(texts)]
            learn_segments(services, "rin", [(SimpleNamespace(segment_id=segment), turns)])

        learn("s1", MAY, "I work at Google.", "I eat lunch with my colleagues every day.", "I live in Kyoto.",
              "I love Google Maps.")
        learn("s2", MAY + 30 * DAY, "I quit my job at Google.")
        items = {r["value"]: r for r in archive.knowledge.items("rin", history=True) if r["polarity"] == "positive"}
        lunch = items["eat lunch with my colleagues"]
        assert lunch["note"] == f"{REVIEW}rests on works_at: Google, which changed, no longer so"
        assert not items["Kyoto"]["note"] and not (items["Google Maps"]["note"] or "").startswith(REVIEW)
        # Recall says it is uncertain, and why.
        [hit] = knowledge_hits(SimpleNamespace(stores=services.stores, settings=SimpleNamespace(timezone="UTC")),
                               "rin", "What do I do every day?")
        assert hit["uncertain"] and hit["why"] == "rests on works_at: Google, which changed, no longer so"
        assert hit["text"] == "[habit: eat lunch with my colleagues (uncertain: rests on works_at: Google, which changed, no longer so)]"
        # Restated at a new job, the routine rests on the new one and leaves review; the next change reaches it.
        learn("s3", MAY + 40 * DAY, "I got a job at Apple.")
        learn("s4", MAY + 50 * DAY, "I eat lunch with my colleagues every day.")
        items = {r["value"]: r for r in archive.knowledge.items("rin") if r["polarity"] == "positive"}  # current
        lunch = items["eat lunch with my colleagues"]
        assert items["Apple"]["item_id"] in lunch["derived_from"] and not lunch["note"].startswith(REVIEW)
        learn("s5", MAY + 60 * DAY, "I got a job at Sony.")
        lunch = {r["value"]: r for r in archive.knowledge.items("rin")}["eat lunch with my colleagues"]
        assert lunch["note"] == f"{REVIEW}rests on works_at: Apple, which changed, now Sony"
        before = archive.knowledge.items("rin", history=True)
        review_user(services, "rin", now=MAY + 61 * DAY)
        after = {r["item_id"]: r for r in archive.knowledge.items("rin", history=True)}
        assert all(list(after[r["item_id"]]["derived_from"] or []) == list(r["derived_from"] or []) for r in before)
    finally:
        archive.close()


def test_the_weekly_refold_that_ends_a_fact_reaches_what_rests_on_it(tmp_path):
    """Learnt while where she works accumulated (a setting), both jobs stayed current; refolded under the default
    (one at a time), the older ends and the routine resting on it goes under review. A second refold changes nothing."""
    from types import SimpleNamespace

    from lumina_memory.nodes.knowledge.learn import learn_segments
    from lumina_memory.nodes.knowledge.review import review_user
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    loose = KnowledgeParams(policy={"works_at": "accumulate"})
    try:
        for n, (text, ts) in enumerate([("I work at Google. I eat lunch with my colleagues every day.", MAY),
                                        ("I work at Apple.", MAY + 30 * DAY)]):
            learn_segments(SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace(knowledge=loose)),
                           "sam", [(SimpleNamespace(segment_id=f"s{n}"), [
                               {"turn_id": f"s{n}-0", "source_id": f"s{n}:0", "speaker": "user", "text": text, "ts": ts}])])
        lunch = {r["value"]: r for r in archive.knowledge.items("sam")}["eat lunch with my colleagues"]
        assert lunch["derived_from"] and not lunch["note"]
        services = SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace())
        assert review_user(services, "sam", now=MAY + 31 * DAY)["changed"] == 2  # Google ended, lunch reviewed
        lunch = {r["value"]: r for r in archive.knowledge.items("sam")}["eat lunch with my colleagues"]
        assert lunch["note"] == f"{REVIEW}rests on works_at: Google, which changed, now Apple"
        assert review_user(services, "sam", now=MAY + 32 * DAY)["changed"] == 0
    finally:
        archive.close()
