"""Short pointers: what a model reads beside each primed or found memory, and opens with read_memory.

Segment, fact and procedure ids are uuids (36 characters) and a message without a caller id is ``t-`` and 24 hex
digits: as text a model reads, one such pointer per line cost about as much as the line itself. What is shown is
the id's first 8 hex digits; read_memory opens a short pointer by the one id of this user's that starts so, and
says which ones when several do. A pointer in full still opens, and so does a caller's id of that same shape.
"""

from __future__ import annotations

import re

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.priming import prime
from lumina_memory.nodes.tools.memory_tools import create_memory_tools
from lumina_memory.nodes.tools.pointers import abbreviated, parse_pointer
from lumina_memory.nodes.tools.searching import search

from .test_memory_tools import call

T0 = 1_790_000_000
SEG = "seg:4586156e-2e98-5e13-8750-7c9c08ede747"
FACT = "fact:34b6d802-60d5-5f86-a10f-6d6fc66ad622"
HASHED = "ep:t-0123456789abcdef01234567"
LONG_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|t-[0-9a-f]{12,}")
# The fixture's look-alike ids: shown together, each is shown whole.
TWINS = {"t-aaaaaaaa0000000000000001", "t-aaaaaaaa0000000000000002", "t-bbbbbbbb0000000000000001"}


def _whole_ids_shown(text: str) -> set[str]:
    return set(LONG_ID.findall(text)) - TWINS


def test_long_ids_are_shown_by_their_first_eight_hex_digits():
    shown = abbreviated([SEG, FACT, HASHED, "ep:D2:2", "proc:x1", "kb:manual:doc-1:3", "ep:t-abc"])
    assert shown == {SEG: "seg:4586156e", FACT: "fact:34b6d802", HASHED: "ep:t-01234567", "ep:D2:2": "ep:D2:2",
                     "proc:x1": "proc:x1", "kb:manual:doc-1:3": "kb:manual:doc-1:3", "ep:t-abc": "ep:t-abc"}


def test_a_knowledge_base_passage_is_shown_by_its_document_ids_first_eight_hex_digits():
    whole = "kb:manual:34b6d802-60d5-5f86-a10f-6d6fc66ad622:12"
    assert abbreviated([whole]) == {whole: "kb:manual:34b6d802:12"}
    short = parse_pointer("kb:manual:34b6d802:12")
    assert short.abbreviated and (short.kb, short.doc_id, short.chunk_no) == ("manual", "34b6d802", 12)
    assert str(short.completed("34b6d802-60d5-5f86-a10f-6d6fc66ad622")) == whole
    assert not parse_pointer(whole).abbreviated


def test_two_ids_shown_together_that_would_look_alike_are_shown_whole():
    twin = "seg:4586156e-0000-5000-8000-000000000000"
    shown = abbreviated([SEG, twin, FACT])
    assert shown[SEG] == SEG and shown[twin] == twin and shown[FACT] == "fact:34b6d802"


def test_a_short_pointer_says_so_when_parsed():
    assert parse_pointer("seg:4586156e").abbreviated and parse_pointer("fact:34b6d802").abbreviated
    assert parse_pointer("ep:t-01234567").abbreviated and parse_pointer("t-01234567").abbreviated
    for whole in (SEG, FACT, HASHED, "ep:D2:2", "seg:4586156", "ep:01234567", "kb:m:d:0"):
        assert not parse_pointer(whole).abbreviated, whole


def _rows(texts: list[str], day: int = 0, ids: list[str] | None = None) -> list[dict]:
    # No source ids unless given: each message gets the default ``t-`` + 24 hex digits.
    rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": T0 + day * 86_400 + 60 * i}
            for i, t in enumerate(texts)]
    for row, sid in zip(rows, ids or []):
        row["source_id"] = sid
    return rows


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    from .conftest import Memory

    memory = Memory(tmp_path_factory.mktemp("short-pointers"))
    replay(memory.graph, "rin", _rows(["うちの犬の名前はポチだよ", "かわいい名前！", "ポチは毎朝公園を散歩するの", "いいね"]))
    replay(memory.graph, "rin", _rows(["I love green tea", "Nice!", "My sister Aiko lives in Osaka", "Cool"], day=3))
    replay(memory.graph, "rin", _rows(["Tokyo trip next month", "Fun!"], day=5,
                                      ids=["t-aaaaaaaa0000000000000001", "t-aaaaaaaa0000000000000002"]))
    replay(memory.graph, "rin", _rows(["My bike is red", "Nice"], day=7, ids=["t-bbbbbbbb", "t-bbbbbbbb0000000000000001"]))
    replay(memory.graph, "sol", _rows(["うちの猫の名前はタマだよ", "かわいい！", "タマは一日中寝てる", "ははは"]))
    yield memory
    memory.close()


def _shown_pointers(text: str) -> list[str]:
    return re.findall(r"\(((?:ep|seg|fact|proc|kb):[^()\s]+)\)$", text, flags=re.M)


def test_primed_text_shows_short_pointers_that_open_what_the_item_is(mem):
    _, read = create_memory_tools(mem.services, "rin")
    primed = prime(mem.services, "rin", "犬の名前、覚えてる？", message_type="question")
    shown = _shown_pointers(primed.text)
    assert shown and not _whole_ids_shown(primed.text), primed.text
    items = primed.items()
    timed = [i for i in items if parse_pointer(i.shown).kind == "time"]
    assert [i.shown for i in items if i.shown in shown] and all(f"({i.shown})" in primed.text for i in items
                                                                  if i not in timed)
    for entry in timed:  # a segment's lines under its time header: the header opens the segment that holds them
        assert f"\n[{entry.shown}]\n" in primed.text
        opened = call(read, {"id": entry.shown})
        assert opened.status == "success"
        assert entry.segment_id in (None, opened.artifact["details"]["segment_id"])  # None: an excerpt's own header
        assert set(entry.source_ids) <= {m["source_id"] for m in opened.artifact["details"]["messages"]}
    for entry in (i for i in items if i not in timed):
        short, whole = call(read, {"id": entry.shown}), call(read, {"id": entry.source})
        assert short.status == whole.status == "success", (entry.shown, short.content)
        assert short.artifact == whole.artifact  # the same memory, named by its whole id
        assert short.artifact["id"] == entry.source


def test_search_shows_short_pointers_and_keeps_whole_ones_in_its_artifact(mem):
    search_tool, read = create_memory_tools(mem.services, "rin")
    result = call(search_tool, {"query": "Aiko Osaka sister"})
    assert result.status == "success" and result.artifact
    assert not _whole_ids_shown(result.content), result.content
    assert "ep:t-aaaaaaaa0000000000000001 ep:t-aaaaaaaa0000000000000002" in result.content
    assert any(LONG_ID.search(hit["id"]) for hit in result.artifact)  # the artifact keeps whole pointers
    shown = re.findall(r"^\d+\. \[(\S+)\]", result.content, flags=re.M)
    assert len(shown) == len(result.artifact)
    for short, hit in zip(shown, result.artifact):
        assert call(read, {"id": short}).artifact == call(read, {"id": hit["id"]}).artifact
    assert search(mem.services, "rin", "Aiko Osaka sister")[0].id == result.artifact[0]["id"]


def test_a_short_pointer_that_starts_several_ids_names_them(mem):
    _, read = create_memory_tools(mem.services, "rin")
    result = call(read, {"id": "ep:t-aaaaaaaa"})
    assert result.status == "error"
    assert "ep:t-aaaaaaaa0000000000000001" in result.content and "ep:t-aaaaaaaa0000000000000002" in result.content
    assert "Tokyo trip" in call(read, {"id": "ep:t-aaaaaaaa0000000000000001"}).content


def test_an_id_of_the_short_shape_opens_itself_first(mem):
    _, read = create_memory_tools(mem.services, "rin")
    assert "My bike is red" in call(read, {"id": "ep:t-bbbbbbbb"}).content
    assert "Nice" in call(read, {"id": "ep:t-bbbbbbbb0000000000000001"}).content


def test_a_short_pointer_never_opens_another_users_memory(mem):
    _, rin_read = create_memory_tools(mem.services, "rin")
    _, sol_read = create_memory_tools(mem.services, "sol")
    primed = prime(mem.services, "rin", "犬の名前、覚えてる？", message_type="question")
    met = 0
    for entry in primed.items():
        mine = call(rin_read, {"id": entry.shown})
        assert mine.status == "success"
        other = call(sol_read, {"id": entry.shown})
        assert "ポチ" not in other.content
        if parse_pointer(entry.shown).kind == "time" and other.status == "success":
            # sol spoke at that minute too: what opens is sol's own conversation
            assert "タマ" in other.content
            assert other.artifact["details"]["segment_id"] != mine.artifact["details"]["segment_id"]
            met += 1
        else:
            assert other.status == "error" and "no memory" in other.content
    assert met, "some minute of rin's is a minute of sol's too (both start at T0)"
    assert "no memory" in call(sol_read, {"id": "ep:t-aaaaaaaa"}).content


@pytest.mark.parametrize("hostile", ["seg:%", "seg:4586156_", "ep:t-'", "fact:________", "ep:t-%%%%%%%%", "seg:*"])
def test_short_shapes_with_wildcards_open_nothing(mem, hostile):
    _, read = create_memory_tools(mem.services, "rin")
    result = call(read, {"id": hostile})
    assert result.status == "error" and ("invalid id" in result.content or "no memory" in result.content)
