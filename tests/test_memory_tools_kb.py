"""A2 with knowledge bases (L5): search_memory(kind="kb") finds a KB passage with its pointer, read_memory
opens it reassembled, a search of every kind includes KBs, and a per-user KB stays its user's."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.kb.add import add_files
from lumina_memory.nodes.tools.memory_tools import create_memory_tools
from lumina_memory.nodes.tools.pointers import abbreviated
from lumina_memory.nodes.tools.searching import KB_PLACES

from .test_memory_tools import _drink_rows, call

FILLER = ("The committee approved a new budget for road repairs in the northern district.",
          "Our office printer jams whenever someone feeds it recycled paper.",
          "The museum's winter exhibition features textiles from the eighteenth century.",
          "Local farmers reported a good harvest of apples and pears this autumn.")
ANSWER = "The lighthouse keeper repaints the tower every spring using twelve buckets of white paint."
SECRET = "Mika keeps the spare key to the garden shed under the blue flowerpot."


def _document(answer: str, sentences: int = 400) -> str:
    body = [FILLER[i % len(FILLER)] for i in range(sentences)]
    body.insert(sentences // 2, answer)
    return "\n\n".join(" ".join(body[i:i + 4]) for i in range(0, len(body), 4))


@pytest.fixture(scope="module")
def kb_memory(tmp_path_factory):
    from .conftest import Memory

    folder = tmp_path_factory.mktemp("kbdocs")
    manual, notes = folder / "lighthouse.txt", folder / "house-notes.md"
    manual.write_text(_document(ANSWER), encoding="utf-8")
    notes.write_text(_document(SECRET, 40), encoding="utf-8")
    memory = Memory(tmp_path_factory.mktemp("kbtools"))
    replay(memory.graph, "mika", _drink_rows("mika"))
    replay(memory.graph, "eve", _drink_rows("eve", ("緑茶しか飲まないの", "最近はほうじ茶ばかり飲んでる")))
    add_files(memory.services, "manual", [manual])  # shared: every user reads it
    add_files(memory.services, "house", [notes], user_id="mika")  # mika's own
    yield memory
    memory.close()


def test_search_a_knowledge_base_and_open_its_passage(kb_memory):
    search, read = create_memory_tools(kb_memory.services, "eve")
    found = call(search, {"query": "How often is the lighthouse tower repainted?", "kind": "kb"})
    assert found.status == "success" and found.artifact
    top = found.artifact[0]
    assert top["kind"] == "kb" and top["id"].startswith("kb:manual:") and "twelve buckets" in top["text"]
    short = abbreviated([top["id"]])[top["id"]]  # kb:manual:<8 hex digits of the document's uuid>:<chunk>
    assert short != top["id"] and short.startswith("kb:manual:") and len(short.split(":")[2]) == 8
    assert f"[{short}] kb · {top['date']}" in found.content and "lighthouse.txt" in found.content
    assert call(read, {"id": short}).artifact == call(read, {"id": top["id"]}).artifact
    assert top["tiers"] == ["kb_manual"] and top["level"] is None
    opened = call(read, {"id": top["id"]})
    assert opened.status == "success" and ANSWER in opened.content and len(opened.content) > len(top["text"])
    assert opened.artifact["kind"] == "kb" and opened.artifact["details"]["kb"] == "manual"


def test_a_search_of_every_kind_includes_knowledge_bases_after_the_memories(kb_memory):
    search, _ = create_memory_tools(kb_memory.services, "mika")
    hits = call(search, {"query": "lighthouse tower paint, and what do I drink?"}).artifact
    kinds = [h["kind"] for h in hits]
    assert "episode" in kinds and kinds[-KB_PLACES:] == ["kb"] * KB_PLACES and kinds.count("kb") == KB_PLACES
    assert any("twelve buckets" in h["text"] for h in hits if h["kind"] == "kb")
    assert call(search, {"query": "lighthouse", "kind": "kb", "since": "2000-01-01"}).artifact
    assert not call(search, {"query": "lighthouse", "kind": "kb", "until": "2000-01-01"}).artifact


def test_a_users_own_knowledge_base_stays_hers(kb_memory):
    mika_search, mika_read = create_memory_tools(kb_memory.services, "mika")
    eve_search, eve_read = create_memory_tools(kb_memory.services, "eve")
    mine = call(mika_search, {"query": "Where is the spare key to the garden shed?", "kind": "kb"}).artifact
    secret = next(h for h in mine if h["id"].startswith("kb:house:"))
    assert "blue flowerpot" in secret["text"]
    assert SECRET in call(mika_read, {"id": secret["id"]}).content
    theirs = call(eve_search, {"query": "Where is the spare key to the garden shed?", "kind": "kb"}).artifact
    assert not any(h["id"].startswith("kb:house:") or "flowerpot" in h["text"] for h in theirs)
    short = abbreviated([secret["id"]])[secret["id"]]
    assert SECRET in call(mika_read, {"id": short}).content
    for pointer in (secret["id"], short):  # neither the whole nor the short pointer opens it for another user
        refused = call(eve_read, {"id": pointer})
        assert refused.status == "error" and "no memory" in refused.content and "flowerpot" not in refused.content
    for hostile in ("kb:house:../x:0", "kb:manual:doc:x", "kb:nope:abc:0", "kb:manual:a:b:0"):
        result = call(eve_read, {"id": hostile})
        assert result.status == "error" and "flowerpot" not in result.content
