"""The knowledge bases' catalog (kb_bases, kb_documents, kb_chunks) on both engines (issue 47's server mode):
documents committed, replaced and removed; shared and per-user KBs kept apart; two connections on one
PostgreSQL database see each other's KBs at once and add to one KB side by side without a duplicate."""

from __future__ import annotations

import threading

import pytest

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.kb_duckdb import SHARED, Base, KBCatalog, doc_id_for

from .sql_engines import pg_server, sql_db, sql_pair  # noqa: F401 - fixtures

T0 = 1_790_000_000.0


def base(kb: str, owner: str = SHARED) -> Base:
    return Base(kb, owner, f"kb_{kb}_{owner or 'shared'}", T0)


def doc(owner: str, kb: str, source: str, text: str, added_at: float = T0) -> dict:
    sha = f"sha-{source.encode('utf-8', 'surrogatepass').hex()}-{len(text)}"
    return {"doc_id": doc_id_for(owner, kb, sha), "source": source, "content_sha256": sha, "kind": "text",
            "chars": len(text), "tokens": len(text) // 2, "chunks": 2, "passages": 2, "added_at": added_at}


def add(catalog: KBCatalog, where: Base, source: str, text: str, added_at: float = T0) -> tuple[dict, list[str]]:
    record = doc(where.owner, where.kb, source, text, added_at)
    half = len(text) // 2
    return record, catalog.commit_document(where, record, [(0, half, text[:half]), (half, len(text), text[half:])],
                                           "embedder-x", 8)


def test_documents_committed_read_replaced_and_removed(sql_db):
    catalog = KBCatalog(sql_db)
    assert catalog.bases("ann") == []
    handbook = base("handbook")
    first, replaced = add(catalog, handbook, "fuji.txt", "富士山は日本一高い山です。標高は3776メートル。")
    assert replaced == []
    assert [(b.kb, b.owner) for b in catalog.bases("ann")] == [("handbook", SHARED)]
    (listed,) = catalog.documents("handbook", SHARED)
    assert listed["doc_id"] == first["doc_id"] and listed["chunks"] == 2 and listed["added_at"] == T0
    assert catalog.committed("handbook", SHARED, [first["doc_id"], "other"]) == {first["doc_id"]}
    assert catalog.document("handbook", ["ann", SHARED], first["doc_id"])["source"] == "fuji.txt"
    assert catalog.doc_ids_starting("handbook", [SHARED], first["doc_id"][:4]) == [first["doc_id"]]
    texts = [c[3] for c in catalog.chunks(first["doc_id"], 0, 5)]
    assert "".join(texts) == "富士山は日本一高い山です。標高は3776メートル。"
    again, _ = add(catalog, handbook, "fuji.txt", "富士山は日本一高い山です。", T0 + 1)  # the file changed
    assert catalog.committed("handbook", SHARED, [first["doc_id"], again["doc_id"]]) == {again["doc_id"]}
    assert catalog.chunks(first["doc_id"], 0, 5) == []  # the old document's chunks went with it
    assert add(catalog, handbook, "fuji.txt", "富士山は日本一高い山です。", T0 + 2)[1] == []  # the same text again
    assert catalog.remove_base("handbook", SHARED) == 1
    assert catalog.bases(everyone=True) == [] and catalog.chunks(again["doc_id"], 0, 5) == []


def test_per_user_kbs_are_their_owners_only(sql_db):
    catalog = KBCatalog(sql_db)
    mine, _ = add(catalog, base("notes", "ann"), "a.txt", "ann's private notes")
    add(catalog, base("notes", "bob"), "a.txt", "bob's private notes")
    add(catalog, base("handbook"), "h.txt", "for everyone")
    assert [(b.kb, b.owner) for b in catalog.bases("ann")] == [("handbook", SHARED), ("notes", "ann")]
    assert [(b.kb, b.owner) for b in catalog.bases("carol")] == [("handbook", SHARED)]
    assert catalog.document("notes", ["bob", SHARED], mine["doc_id"]) is None
    assert catalog.doc_ids_starting("notes", ["bob"], mine["doc_id"][:8]) == []
    assert catalog.committed("notes", "bob", [mine["doc_id"]]) == set()
    assert sorted(catalog.owners("notes")) == ["ann", "bob"]
    assert catalog.remove_base("notes", "bob") == 1 and catalog.owners("notes") == ["ann"]
    assert len(catalog.bases(everyone=True)) == 2


@pytest.mark.parametrize("hostile", ["../etc", "x' OR '1'='1", "'; DROP TABLE kb_bases; --", "a\ud800", ""])
def test_hostile_ids_and_broken_text_are_refused(sql_db, hostile):
    catalog = KBCatalog(sql_db)
    with pytest.raises(InvalidInput):
        catalog.bases(hostile)
    with pytest.raises(InvalidInput):
        catalog.doc_ids_starting("handbook", [SHARED], hostile)
    assert catalog.document("handbook", [SHARED], hostile.replace("\ud800", "")) is None


def test_broken_text_is_refused_and_nothing_is_written(sql_db):
    catalog = KBCatalog(sql_db)
    with pytest.raises(InvalidInput, match="text"):
        add(catalog, base("handbook"), "fuji.txt", "half \ud800 of a pair")
    with pytest.raises(InvalidInput, match="source"):
        add(catalog, base("handbook"), "bad\udcff.txt", "fine text")
    assert catalog.bases(everyone=True) == [] and catalog.documents("handbook", SHARED) == []
    huge = "山" * 300_000
    record, _ = add(catalog, base("handbook"), "huge.txt", huge)
    assert "".join(c[3] for c in catalog.chunks(record["doc_id"], 0, 1)) == huge


def test_a_kb_added_by_one_connection_is_listed_by_the_other(sql_pair):
    first, second = KBCatalog(sql_pair[0]), KBCatalog(sql_pair[1])
    assert second.bases("ann") == []
    record, _ = add(first, base("handbook"), "fuji.txt", "富士山の話")
    assert [b.kb for b in second.bases("ann")] == ["handbook"]
    assert second.committed("handbook", SHARED, [record["doc_id"]]) == {record["doc_id"]}
    assert second.remove_base("handbook", SHARED) == 1 and first.bases("ann") == []


def test_two_connections_adding_one_source_at_once_leave_one_document(sql_pair):
    catalogs = [KBCatalog(db) for db in sql_pair]
    start, errors = threading.Barrier(2), []

    def adding(catalog: KBCatalog, n: int) -> None:
        try:
            start.wait()
            for k in range(8):
                add(catalog, base("handbook"), "same.txt", f"version {k} from {n} " * (k + 1), T0 + k)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    workers = [threading.Thread(target=adding, args=(c, n)) for n, c in enumerate(catalogs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    (only,) = catalogs[0].documents("handbook", SHARED)
    assert len(catalogs[1].chunks(only["doc_id"], 0, 10)) == 2
