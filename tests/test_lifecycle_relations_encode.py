"""F6 relations made at encoding, on the real embedded stores: ``continues`` between consecutive segments of
one conversation, ``references`` from a turn that refers back to the memory it means, never across users,
never twice, in ``memories --json``, in the graph tier after maintenance, gone with the user."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle.encode_relations import continuation, link_new_memories
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.stores.memories_duckdb import RecentMemory
from lumina_memory.stores.models import SegmentRecord

from .test_cli import cli  # noqa: F401 - the fixture

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC (09:00 in Tokyo)
CAT = [  # ten turns: the turn cap (6) cuts them in two segments of one conversation
    "猫のモカが昨日から元気がなくて心配", "モカちゃん、食欲はある？", "ほとんど食べないし、ずっと寝ている",
    "動物病院に連れて行ったほうがいいかも", "明日の朝いちばんに病院へ連れて行く", "モカが早く良くなるといいね",
    "モカは猫用のおやつも食べなかった", "猫は具合が悪いと隠れるからね", "モカはソファの下から出てこない", "そっとしておこう",
]
VET = [  # twenty minutes later: a pause, same topic
    "モカを病院に連れて行ったら点滴をしてもらった", "点滴でモカは少し楽になった？",
    "うん、モカは少し水を飲むようになった", "よかった、猫は水分が大事だからね",
]
JOB = [  # the next day: another topic
    "来週の転職の面接の準備をしている", "どんな会社の面接？", "ソフトウェアの会社で、職務経歴書を書き直した",
    "準備ばっちりだね、きっと大丈夫",
]
BACK = ["この前話した猫のモカ、元気になったよ", "本当によかった！", "すっかり元気に走り回ってる", "安心したね"]


def _turns(user: str, start: float, texts: list[str], character: str = "lumina") -> list[dict]:
    return [{"user_id": user, "speaker": "user" if i % 2 == 0 else character, "text": text, "ts": start + i * 60}
            for i, text in enumerate(texts)]


def _alice() -> list[dict]:
    return (_turns("alice", T0, CAT) + _turns("alice", T0 + 1800, VET) + _turns("alice", T0 + DAY, JOB)
            + _turns("alice", T0 + 9 * DAY, BACK))


def _bob() -> list[dict]:  # the same cat story, later than alice's: the best match if users were mixed
    return _turns("bob", T0 + 8 * DAY, CAT[:6]) + _turns("bob", T0 + 9 * DAY + 3600, BACK)


@pytest.fixture
def mem(memory_factory):
    # Ratios off for so few memories (the notes' 15/30/35 would archive most of five at the first batch, and
    # relation repair drops relations to archived memories, as it should).
    mem = memory_factory(short_term_max_turns=6, lifecycle=LifecycleParams(ratio_min_memories=100))
    replay(mem.graph, "alice", _alice())
    replay(mem.graph, "bob", _bob())
    return mem


def _by_text(services, user: str) -> dict[str, str]:
    """memory_id by the first user turn of its segment."""
    return {m["text"].split("\n")[0].removeprefix("user: "): m["memory_id"] for m in list_memories(services, user)}


def _pairs(services, user: str) -> set[tuple[frozenset[str], str]]:
    return {(frozenset((r["src"], r["dst"])), r["kind"]) for r in services.stores.archive.memories.relations(user)}


# --- the continues rule alone ----------------------------------------------------------------------------
def _previous(reason: str, embedding, *, created: float = 100.0, characters=("lumina",), level: int = 1) -> RecentMemory:
    return RecentMemory(memory_id="a", created=created, retention=50.0, level=level, start_ts=0.0,
                        characters=list(characters), close_reason=reason, keywords=[],
                        embedding=np.asarray(embedding, dtype=np.float32))


def _record(embedding, *, start: float = 200.0, characters=("lumina",)) -> SegmentRecord:
    return SegmentRecord(segment_id="b", user_id="u", turn_ids=["t"], source_ids=["s"], characters=list(characters),
                         start_ts=start, end_ts=start + 60, summary="", embedding=list(embedding))


@pytest.mark.parametrize(("reason", "previous", "record", "continues"), [
    ("turn_cap", {}, {}, True),                           # cut for length: continues even unlike
    ("idle", {}, {"embedding": (1.0, 0.1)}, True),        # a pause, alike
    ("explicit", {}, {"embedding": (1.0, 0.1)}, True),    # a flush, alike
    ("idle", {}, {}, False),                              # a pause, unlike
    ("low_similarity", {}, {"embedding": (1.0, 0.1)}, False),  # the detector saw a topic shift
    ("shift_phrase", {}, {"embedding": (1.0, 0.1)}, False),
    ("turn_cap", {}, {"start": 100.0 + 3601}, False),     # too long after
    ("turn_cap", {"created": 300.0}, {}, False),          # ended after the new one began
    ("turn_cap", {}, {"characters": ("nox",)}, False),    # another character's conversation
    ("turn_cap", {"characters": ()}, {"characters": ("nox",)}, True),  # only the user spoke before
    ("turn_cap", {"level": 4}, {}, False),                # archived
])
def test_the_continues_rule(reason, previous, record, continues):
    params = LifecycleParams()
    record = dict(record)
    embedding = record.pop("embedding", (0.0, 1.0))
    found = continuation(_previous(reason, (1.0, 0.0), **previous), _record(embedding, **record), params)
    assert (found is not None) == continues
    if found is not None:
        assert found == pytest.approx(float(np.dot((1.0, 0.0), embedding) / np.linalg.norm(embedding)))


@pytest.mark.parametrize(("changes", "field"), [
    ({"continues_min_similarity": 1.5}, "continues_min_similarity"),
    ({"continues_max_gap_seconds": 0}, "continues_max_gap_seconds"),
    ({"relation_lookback_memories": 0}, "relation_lookback_memories"),
    ({"references_keyword_weight": 0.2, "references_min_match": 1.3}, "references_min_match"),
])
def test_the_encoding_relation_settings_are_validated(changes, field):
    with pytest.raises(ValueError, match=field):
        LifecycleParams(**changes)


# --- on the stores ---------------------------------------------------------------------------------------
def test_consecutive_segments_of_one_conversation_continue(mem):
    services = mem.services
    ids = _by_text(services, "alice")
    cat1, cat2, vet, job = ids[CAT[0]], ids[CAT[6]], ids[VET[0]], ids[JOB[0]]
    archive = services.stores.archive
    assert archive.get_segment("alice", cat1).close_reason == "turn_cap"
    assert archive.get_segment("alice", cat2).close_reason == "idle"
    continues = {pair for pair, kind in _pairs(services, "alice") if kind == "continues"}
    assert continues == {frozenset((cat1, cat2)), frozenset((cat2, vet))}  # the job talk a day later: none
    assert all(job not in pair for pair, _kind in _pairs(services, "alice"))


def test_a_turn_that_refers_back_references_the_memory_it_means_and_never_another_users(mem):
    services = mem.services
    alice, bob = _by_text(services, "alice"), _by_text(services, "bob")
    back = alice[BACK[0]]
    cats = {alice[CAT[0]], alice[CAT[6]], alice[VET[0]]}
    references = [r for r in services.stores.archive.memories.relations("alice") if r["kind"] == "references"]
    assert len(references) == 1
    (ref,) = references
    assert {ref["src"], ref["dst"]} - {back} <= cats and back in (ref["src"], ref["dst"])
    assert ref["score"] >= services.settings.lifecycle.references_min_match
    # bob's identical cat story is newer than alice's and never linked; his own reference finds his own cat
    assert all(set(bob.values()).isdisjoint((r["src"], r["dst"])) for r in services.stores.archive.memories.relations("alice"))
    bob_refs = [r for r in services.stores.archive.memories.relations("bob") if r["kind"] == "references"]
    assert [frozenset((r["src"], r["dst"])) for r in bob_refs] == [frozenset((bob[BACK[0]], bob[CAT[0]]))]
    assert all(set(alice.values()).isdisjoint((r["src"], r["dst"])) for r in services.stores.archive.memories.relations("bob"))
    # and the listing (what `lumina-memory memories --json` prints) shows both ends
    listed = {m["memory_id"]: m["relations"] for m in list_memories(services, "alice")}
    assert {"kind": "references", "memory_id": ref["dst"], "direction": "out"} in listed[ref["src"]]
    assert {"kind": "references", "memory_id": ref["src"], "direction": "in"} in listed[ref["dst"]]


def test_relations_point_by_the_batch_rule_at_encoding(mem):
    services = mem.services
    params = services.settings.lifecycle
    rows = {m["memory_id"]: m for m in list_memories(services, "alice")}
    relations = services.stores.archive.memories.relations("alice")
    assert relations
    for r in relations:
        src, dst = rows[r["src"]], rows[r["dst"]]
        assert src["retention"] == src["intensity"] and dst["retention"] == dst["intensity"]  # no batch yet
        if abs(src["retention"] - dst["retention"]) < params.score_proximity_threshold:
            assert src["created"] >= dst["created"]
        else:
            assert src["retention"] > dst["retention"]


def test_encoding_again_adds_no_relation(mem):
    services = mem.services
    table = services.stores.archive.memories
    before = table.relations("alice")
    owed = table.owed_count(("relations",))
    replay(mem.graph, "alice", _alice())  # the same transcript again: nothing new
    assert table.relations("alice") == before
    # the encoding itself, run again on segments already linked (inside the archive transaction as at archive
    # time), and the same relations offered again either way round, add nothing and owe nothing
    archive = services.stores.archive
    segments = [(record, []) for record in archive.segments("alice")]
    with archive.transaction():
        assert link_new_memories(services, "alice", segments) == 0
        flipped = [(r["dst"], r["src"], r["kind"], r["score"]) for r in before]
        assert table.add_relations("alice", flipped + [(r["src"], r["dst"], r["kind"], 0.1) for r in before], 0) == 0
    assert table.relations("alice") == before
    assert table.owed_count(("relations",)) == owed


def test_relations_reach_the_graph_after_maintenance_and_go_with_the_user(mem):
    services = mem.services
    graph, table = services.stores.graph, services.stores.archive.memories
    kinds = {"continues", "references"}
    assert not {kind for _s, _d, kind, _score in graph.relations("alice")} & kinds  # owed, not there yet
    assert ("alice", "*", "relations") in table.owed(actions=("relations",))
    run_maintenance(services, now=T0 + 10 * DAY, user_id="alice")
    for user in ("alice", "bob"):
        archived = {(r["src"], r["dst"], r["kind"]) for r in table.relations(user)}
        assert {(s, d, k) for s, d, k, _score in graph.relations(user)} == archived
        assert {k for _s, _d, k in archived} >= ({"continues", "references"} if user == "alice" else {"references"})
    assert table.owed_count(("relations",)) == 0
    bob_before = table.relations("bob")
    erase_user(services, "alice", erase_plan(services, "alice")["token"])
    assert table.relations("alice") == [] and graph.relations("alice") == []
    assert table.relations("bob") == bob_before and graph.relations("bob")


def test_memories_json_lists_the_relations(cli, tmp_path):  # noqa: F811
    lines = [{**row, "source_id": f"a{i}"} for i, row in enumerate(
        _turns("kana", T0, CAT[:6]) + _turns("kana", T0 + DAY, JOB) + _turns("kana", T0 + 3 * DAY, BACK))]
    file = tmp_path / "chat.jsonl"
    file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n", encoding="utf-8")
    cli("ingest", str(file))
    memories = {m["text"].split("\n")[0]: m for m in json.loads(cli("memories", "--user", "kana", "--json").stdout)}
    cat, job, back = (memories[f"user: {t}"] for t in (CAT[0], JOB[0], BACK[0]))
    assert [(r["kind"], r["memory_id"]) for r in back["relations"]] == [("references", cat["memory_id"])]
    assert [(r["kind"], r["memory_id"]) for r in cat["relations"]] == [("references", back["memory_id"])]
    assert job["relations"] == []
