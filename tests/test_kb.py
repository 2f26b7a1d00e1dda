"""Knowledge bases (L5, S3) on real engines: chunking at Japanese pauses, text/Markdown/PDF in, the passage
that answers out (qdrant-edge and qdrant-client), neighbours read back, idempotent and crash-safe adds,
shared and per-user KBs kept apart, bad input refused with clear errors."""

from __future__ import annotations

import pytest
from qdrant_client import QdrantClient

from lumina_memory.nodes.kb.add import add_document, add_files
from lumina_memory.nodes.kb.chunk import chunk_document, join_spans
from lumina_memory.nodes.kb.documents import read_document
from lumina_memory.nodes.kb.manage import list_kbs, remove_kb
from lumina_memory.nodes.kb.open import kb_of
from lumina_memory.nodes.kb.search import read_kb, search_kb
from lumina_memory.nodes.services import open_services
from lumina_memory.nodes.text.chunking import chunk_text
from lumina_memory.nodes.text.token_count import count_tokens
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.kb_duckdb import UnknownKB
from lumina_memory.stores.kb_open import use_collections
from lumina_memory.stores.kb_vectors import KBCollections
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings
from .kb_docs import ANSWERS, QUESTIONS, long_text, pdf_bytes, write_documents

# --- chunking --------------------------------------------------------------------------------------------

SENTENCES = [f"{'今日は' * (k % 4 + 1)}図書館で{k}冊目の本を借りて、公園のベンチで読んだ。" for k in range(120)]
JA_TEXT = "".join(SENTENCES)


def test_japanese_chunks_end_and_start_at_sentence_ends():
    chunks = chunk_document(JA_TEXT, size=120, overlap=20, window=30)
    assert len(chunks) > 5
    for before, after in zip(chunks, chunks[1:]):
        assert before.text.endswith("。"), before.text[-10:]
        assert JA_TEXT[after.start - 1] == "。"  # the next chunk starts a sentence
        assert count_tokens(before.text) <= 120
        shared = before.end - after.start
        assert shared > 0 and count_tokens(JA_TEXT[after.start:before.end]) >= 20
    # the plain S3 cutter on the same text cuts inside sentences: the difference is real
    assert any(not c.endswith("。") for c in chunk_text(JA_TEXT, 120, 20)[:-1])


def test_chunks_prefer_paragraph_ends_and_reassemble_exactly():
    text = "\n\n".join("".join(SENTENCES[i:i + 2]) for i in range(0, 60, 2))  # paragraphs of ~60 tokens
    chunks = chunk_document(text, size=150, overlap=20, window=70)
    assert len(chunks) > 5
    assert all(text[c.end:c.end + 2] == "\n\n" for c in chunks[:-1])
    assert join_spans([(c.start, c.end, c.text) for c in chunks]) == text
    assert join_spans([(c.start, c.end, c.text) for c in reversed(chunks[1:3])]) == text[chunks[1].start:chunks[2].end]


def test_default_chunks_are_2000_tokens_with_200_overlap():
    text = long_text(ANSWERS["fuji.txt"], 300)
    chunks = chunk_document(text)
    assert len(chunks) >= 4
    assert all(1_800 <= count_tokens(c.text) <= 2_000 for c in chunks[:-1])
    assert all(200 <= count_tokens(text[b.start:a.end]) <= 300 for a, b in zip(chunks, chunks[1:]))


# --- on the engines --------------------------------------------------------------------------------------


@pytest.fixture(params=["edge", "client"], scope="module")
def kb_world(request, tmp_path_factory):
    """Services with the three documents in a shared KB, on qdrant-edge or qdrant-client (local mode)."""
    root = tmp_path_factory.mktemp(f"kb-{request.param}")
    settings = make_settings(root / "data")
    services = open_services(settings)
    client = None
    try:
        if request.param == "client":
            client = QdrantClient(path=str(root / "qdrant-local"))
            use_collections(services.stores, settings, services.embedder.name, services.embedder.dim,
                            KBCollections(services.embedder.name, services.embedder.dim, client=client, owns_client=True))
        paths = write_documents(root / "docs")
        added = add_files(services, "Handbook", list(paths.values()))
        yield {"services": services, "paths": paths, "added": added, "root": root, "engine": request.param}
    finally:
        services.close()
        stop_server(settings)


def test_text_markdown_and_pdf_are_added_in_chunks(kb_world):
    added = {a.source: a for a in kb_world["added"]}
    assert set(added) == set(ANSWERS)
    assert all(a.status == "added" and a.chunks >= 2 and a.passages > a.chunks for a in added.values())
    listed = list_kbs(kb_world["services"])
    assert [(k["kb"], k["scope"], k["documents"]) for k in listed] == [("handbook", "shared", 3)]
    assert {s["kind"] for s in listed[0]["sources"]} == {"text", "markdown", "pdf"}


@pytest.mark.parametrize("source", list(QUESTIONS))
def test_search_finds_the_passage_that_answers(kb_world, source):
    items = search_kb(kb_world["services"], QUESTIONS[source], names=["handbook"], limit=3)
    best = items[0]
    assert best["source"] == source, [(i["source"], i["text"][:40]) for i in items]
    key = ANSWERS[source].split("、")[0][:12] if source != "lighthouse.pdf" else "twelve buckets"
    assert key in " ".join(best["text"].split())
    assert best["tokens"] == count_tokens(best["text"]) and best["tokens"] < 400  # a passage, not the chunk
    assert best["id"].startswith("kb:handbook:") and best["kind"] == "kb" and 0 < best["score"] <= 1.0001
    assert [i["score"] for i in items] == sorted((i["score"] for i in items), reverse=True)
    assert len({i["id"] for i in items}) == len(items)


def test_read_kb_joins_the_chunk_with_its_neighbours_once(kb_world):
    services = kb_world["services"]
    doc = read_document(kb_world["paths"]["fuji.txt"])
    chunks = chunk_document(doc.text)
    hit = search_kb(services, QUESTIONS["fuji.txt"], names=["handbook"], limit=1)[0]
    n = hit["position"]
    text = read_kb(services, hit["id"])
    first, last = max(0, n - 1), min(len(chunks) - 1, n + 1)
    assert text == doc.text[chunks[first].start:chunks[last].end]
    assert hit["text"] in text
    assert read_kb(services, hit["id"], neighbours=99) == doc.text  # every chunk, the overlaps once
    assert read_kb(services, hit["id"], neighbours=0) == chunks[n].text
    doc_id = hit["id"].split(":")[2]
    assert read_kb(services, f"kb:handbook:{doc_id}:999") is None
    assert read_kb(services, f"kb:other:{doc_id}:{n}") is None
    with pytest.raises(InvalidInput):
        read_kb(services, "kb:handbook:../x")


def test_adding_again_is_idempotent_and_a_changed_file_replaces_the_old(kb_world):
    services, paths = kb_world["services"], kb_world["paths"]
    store = kb_of(services).collections.get("handbook", False)
    before = store.count()
    again = add_files(services, "handbook", [paths["fuji.txt"]])
    assert [a.status for a in again] == ["unchanged"] and store.count() == before
    edited = kb_world["root"] / "edit" / "fuji.txt"
    edited.parent.mkdir()
    edited.write_text(long_text("富士山の山開きは今年から七月十日に変わった。", 240), encoding="utf-8")
    result = add_files(services, "handbook", [edited])[0]
    assert result.status == "replaced"
    docs = [d for d in list_kbs(services)[0]["sources"] if d["source"] == "fuji.txt"]
    assert len(docs) == 1 and docs[0]["doc_id"] == result.doc_id
    hits = search_kb(services, QUESTIONS["fuji.txt"], names=["handbook"], limit=10)
    fuji = [h for h in hits if h["source"] == "fuji.txt"]
    assert fuji and all(h["id"].split(":")[2] == result.doc_id for h in fuji)
    assert "七月十日" in fuji[0]["text"]
    old = next(a for a in kb_world["added"] if a.source == "fuji.txt")
    assert store.count() == before - old.passages + result.passages  # the old version's passages went
    assert add_files(services, "handbook", [paths["fuji.txt"]])[0].status == "replaced"  # back, for the other tests
    assert store.count() == before


def test_an_interrupted_add_is_never_returned_and_a_retry_completes_it(kb_world, monkeypatch):
    services = kb_world["services"]
    catalog = kb_of(services).catalog
    text = long_text("灯台守のボブは毎年春に白いペンキで塔を塗り直す。", 100)
    doc = read_document(_write(kb_world["root"] / "crash" / "bob.txt", text))

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed before the document's record")

    monkeypatch.setattr(catalog, "commit_document", crash)
    with pytest.raises(KeyboardInterrupt):
        add_document(services, "crashy", doc)
    monkeypatch.undo()
    store = kb_of(services).collections.get("crashy", False)
    assert store.count() > 0  # the points were written...
    with pytest.raises(UnknownKB):  # ...but no KB or document exists for search
        search_kb(services, "灯台の塗り直し", names=["crashy"])
    assert all(h["kb"] != "crashy" for h in search_kb(services, "灯台の塗り直し", limit=10))
    assert add_document(services, "crashy", doc).status == "added"  # the retry rewrites the same points
    before = store.count()
    hits = search_kb(services, "灯台の塗り直し", names=["crashy"], limit=3)
    assert "ボブ" in hits[0]["text"] and store.count() == before
    remove_kb(services, "crashy")


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_per_user_kbs_are_visible_to_their_user_only(kb_world):
    services, root = kb_world["services"], kb_world["root"]
    diary = _write(root / "alice" / "diary.md", long_text("アリスの秘密の合言葉はZEBRAKBMARKです。", 60))
    add_files(services, "diary", [diary], user_id="alice")
    add_files(services, "diary", [_write(root / "alice2" / "diary.md", long_text("OKAPIKBMARK の日記。", 60))],
              user_id="alice2")
    mine = search_kb(services, "秘密の合言葉", user_id="alice", names=["diary"], limit=5)
    assert "ZEBRAKBMARK" in mine[0]["text"] and mine[0]["scope"] == "user"
    assert all("OKAPIKBMARK" not in h["text"] for h in mine)
    # other users: the KB of that name is unknown (not "forbidden"), and a search of everything skips it
    for other in ("bob", "alice2", "Alice", "alice.x"):
        everything = search_kb(services, "秘密の合言葉", user_id=other, limit=20)
        assert all("ZEBRAKBMARK" not in h["text"] for h in everything)
        assert read_kb(services, mine[0]["id"], user_id=other) is None
    with pytest.raises(UnknownKB):
        search_kb(services, "秘密", user_id="bob", names=["diary"])
    with pytest.raises(UnknownKB):
        search_kb(services, "秘密", names=["diary"])  # no user: shared KBs only
    assert read_kb(services, mine[0]["id"]) is None
    assert read_kb(services, mine[0]["id"], user_id="alice")
    # the shared KB is everyone's
    assert search_kb(services, QUESTIONS["fuji.txt"], user_id="bob", names=["handbook"], limit=1)[0]["source"] == "fuji.txt"
    assert {k["kb"] for k in list_kbs(services, "bob")} == {"handbook"}
    assert {(k["kb"], k["user_id"]) for k in list_kbs(services, "alice")} == {("handbook", None), ("diary", "alice")}


@pytest.mark.parametrize("hostile", ["alice\n", "../alice", "alice' OR '1'='1", "", "a" * 200, "アリス", "alice*"])
def test_hostile_user_ids_are_refused(kb_world, hostile):
    services = kb_world["services"]
    with pytest.raises(InvalidInput):
        search_kb(services, "秘密", user_id=hostile)
    with pytest.raises(InvalidInput):
        add_files(services, "diary", [kb_world["paths"]["fuji.txt"]], user_id=hostile)
    with pytest.raises(InvalidInput):
        read_kb(services, "kb:diary:x:0", user_id=hostile)


@pytest.mark.parametrize("name", ["../x", "a b", "", "x" * 49, "名前", "-x", "kb:1", "a/b", None])
def test_hostile_kb_names_are_refused(kb_world, name):
    with pytest.raises(InvalidInput, match="kb name"):
        add_files(kb_world["services"], name, [kb_world["paths"]["fuji.txt"]])
    with pytest.raises(InvalidInput, match="kb name"):
        search_kb(kb_world["services"], "x", names=[name])


def test_unknown_kb_and_bad_queries_give_clear_errors(kb_world):
    services = kb_world["services"]
    with pytest.raises(UnknownKB, match="no knowledge base 'nothing'.*kb list"):
        search_kb(services, "x", names=["nothing"])
    with pytest.raises(UnknownKB):
        remove_kb(services, "nothing")
    with pytest.raises(InvalidInput, match="query"):
        search_kb(services, "   ")
    with pytest.raises(InvalidInput, match="names"):
        search_kb(services, "x", names="handbook")
    assert search_kb(services, "x", limit=0) == []


def test_bad_files_are_refused_before_anything_is_written(kb_world, tmp_path):
    services = kb_world["services"]
    cases = {
        "empty.txt": (b"", "is empty"),
        "blank.md": (b" \n\n\t\n", "is empty"),
        "broken.txt": ("途中で切れた".encode("utf-8")[:-1], "not valid UTF-8"),
        "latin1.txt": ("café".encode("latin-1"), "not valid UTF-8 .*offset 3"),
        "binary.txt": (b"abc\x00def", "NUL bytes"),
        "broken.pdf": (b"%PDF-1.4\nthis is not a pdf at all", "not a readable PDF"),
        "scan.pdf": (pdf_bytes([]), "no text layer"),
    }
    good = kb_world["paths"]["fuji.txt"]
    for name, (data, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InvalidInput, match=message):
            add_files(services, "badinput", [good, path])
    with pytest.raises(InvalidInput, match="no such file"):
        add_files(services, "badinput", [tmp_path / "missing.txt"])
    with pytest.raises(InvalidInput, match="not a regular file"):
        add_files(services, "badinput", [tmp_path])
    assert all(k["kb"] != "badinput" for k in list_kbs(services, everyone=True))
    assert not kb_of(services).collections.exists("badinput", False)


def test_removing_a_kb_takes_its_records_and_points(kb_world):
    services, root = kb_world["services"], kb_world["root"]
    add_files(services, "scratch", [_write(root / "scratch" / "a.txt", long_text("一時的なメモ。", 40))])
    add_files(services, "scratch", [_write(root / "scratch" / "b.txt", long_text("ユーザーのメモ。", 40))], user_id="carol")
    report = remove_kb(services, "scratch")
    assert report == {"kb": "scratch", "scope": "shared", "documents": 1, "points": report["points"]} and report["points"] > 0
    assert not kb_of(services).collections.exists("scratch", False)
    assert [k["kb"] for k in list_kbs(services, "carol") if k["kb"] == "scratch"] == ["scratch"]  # carol's stays
    assert remove_kb(services, "scratch", user_id="carol")["documents"] == 1
    assert not kb_of(services).collections.exists("scratch", True)
    with pytest.raises(UnknownKB):
        search_kb(services, "メモ", user_id="carol", names=["scratch"])


def test_without_any_kb_a_search_reads_no_catalog_row_until_one_is_added(tmp_path):
    # Priming searches the KBs before every reply; most data dirs have none, and each catalog read would wait
    # on the archive's one connection beside the turn's recall.
    settings = make_settings(tmp_path / "data")
    services = open_services(settings)
    try:
        catalog = kb_of(services).catalog
        assert search_kb(services, "いつ開く？", user_id="dan") == []
        reads = catalog.rows_read
        for _ in range(3):
            assert search_kb(services, "いつ開く？", user_id="dan") == []
        assert catalog.rows_read == reads
        add_files(services, "notes", [_write(tmp_path / "n.txt", long_text("図書館は九時に開く。", 5))])
        assert [h["kb"] for h in search_kb(services, "図書館は何時に開く？", user_id="dan")] == ["notes"]
    finally:
        services.close()
        stop_server(settings)
