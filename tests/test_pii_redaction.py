"""S7: PII is redacted before anything is stored, embedded or logged — and nothing else is touched."""

from __future__ import annotations

import io
import json
import logging
import sqlite3

import duckdb
import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.graphs.logging_setup import configure_logging
from lumina_memory.graphs.memory_graph import build_graph
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import DEMO_TRANSCRIPT, replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.services import open_services
from lumina_memory.nodes.text.redact import KINDS, luhn_ok, my_number_ok, redact
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

# (text, kind, the raw value that must vanish, the placeholder expected)
CASES = [
    ("連絡はyui.tanaka@example.co.jpまで", "email", "yui.tanaka@example.co.jp", "[メール]"),
    ("write to ken.ito+memo@mail.example.com please", "email", "ken.ito+memo@mail.example.com", "[email]"),
    ("携帯は090-1234-5678です", "phone", "090-1234-5678", "[電話番号]"),
    ("会社は03-1234-5678だよ", "phone", "03-1234-5678", "[電話番号]"),
    ("全角だと０９０－８７６５－４３２１", "phone", "０９０－８７６５－４３２１", "[電話番号]"),
    ("ケータイ08011112222に", "phone", "08011112222", "[電話番号]"),
    ("call +81 90 1234 5678 tonight", "phone", "+81 90 1234 5678", "[phone]"),
    ("the office is +1 (415) 555-0100", "phone", "+1 (415) 555-0100", "[phone]"),
    ("or (415) 555-0199 after five", "phone", "(415) 555-0199", "[phone]"),
    ("カードは4111 1111 1111 1111です", "card", "4111 1111 1111 1111", "[カード番号]"),
    ("card 5500-0000-0000-0004 expires", "card", "5500-0000-0000-0004", "[card]"),
    ("マイナンバーは123456789011です", "my_number", "123456789011", "[マイナンバー]"),
    ("番号は 1234 5678 9011 だよ", "my_number", "1234 5678 9011", "[マイナンバー]"),
    ("サーバーは192.168.10.20にある", "ip", "192.168.10.20", "[IPアドレス]"),
    ("ping 2001:db8::8a2e:370:7334 now", "ip", "2001:db8::8a2e:370:7334", "[ip]"),
    ("key sk-proj-AbCdEfGhIjKlMnOpQrStUv0123456789 leaked", "secret", "sk-proj-AbCdEfGhIjKlMnOpQrStUv0123456789", "[secret]"),
    ("token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 here", "secret", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "[secret]"),
    ("aws AKIAIOSFODNN7EXAMPLE ok", "secret", "AKIAIOSFODNN7EXAMPLE", "[secret]"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
     "secret", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[secret]"),
    ("Authorization: Bearer abc123def456ghi789jkl", "secret", "abc123def456ghi789jkl", "[secret]"),
    ("パスワードは hunter22x です", "secret", "hunter22x", "[秘密情報]"),
    ("secret Zx9QmT4vLp2sKd8RfW3nYb6HcJ1gVe5UoAi7 ok", "secret", "Zx9QmT4vLp2sKd8RfW3nYb6HcJ1gVe5UoAi7", "[secret]"),
]

NOT_PII = [
    "2026-10-01 10:30:00 に集合、会費は¥12,000（税込 $1,234.56）",
    "version 10.0.19041.1 と v1.2.3.4 を入れた",
    "commit 3f2c9a1b7e4d5c6f8a9b0c1d2e3f4a5b6c7d8e9f, uuid 6f1c8a52-3d0e-5b7a-9c41-4c756d696e61",
    "I ran 10000 steps, 12345678 views, and 123456789012 is not a valid マイナンバー",
    "4111 1111 1111 1112 fails Luhn",
    "the bearer instruments; the secret is patience; a token of thanks",
    "3日の10時30分、2023年5月7日、5/7/2023 at 3pm、電話は明日するね",
    "flight JL123 room 1203 at 10:30, 1,000,000 yen, 3.14159",
]


@pytest.mark.parametrize("text, kind, raw, placeholder", CASES)
def test_each_kind_is_replaced_by_its_placeholder(text, kind, raw, placeholder):
    out, counts = redact(text)
    assert raw not in out and placeholder in out
    assert counts == {kind: 1}
    assert redact(out) == (out, {})  # a placeholder never matches again


@pytest.mark.parametrize("text", NOT_PII)
def test_dates_prices_versions_and_counts_are_not_pii(text):
    assert redact(text) == (text, {})


def test_check_digits():
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert my_number_ok("123456789011") and not my_number_ok("123456789012")


def test_kinds_are_configurable():
    text = "mail yui@example.com, phone 090-1234-5678"
    assert redact(text, ("email",)) == ("mail [email], phone 090-1234-5678", {"email": 1})
    assert redact(text, ()) == (text, {})
    with pytest.raises(ValueError):
        redact(text, ("shoe_size",))


def test_no_false_positives_on_the_demo_and_locomo_transcripts():
    texts = [json.loads(line)["text"] for line in DEMO_TRANSCRIPT.read_text(encoding="utf-8").splitlines() if line.strip()]
    locomo = json.loads((__import__("pathlib").Path(__file__).parent / "data" / "mini_locomo.json").read_text(encoding="utf-8"))

    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)

    texts += list(strings(locomo))
    assert len(texts) > 200
    hits = [(t, redact(t)[1]) for t in texts if redact(t)[1]]
    assert hits == []


def _dump_exports(root) -> str:
    """Every exported file as text (Parquet through DuckDB)."""
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            out.append(str(duckdb.sql(f"SELECT * FROM read_parquet('{path}')").fetchall()))
        else:
            raw = path.read_text(encoding="utf-8", errors="replace")
            out.append(raw)
            for line in raw.splitlines():  # JSON-escaped text, decoded
                try:
                    out.append(json.dumps(json.loads(line), ensure_ascii=False))
                except ValueError:
                    pass
    return "\n".join(out)


def test_no_raw_pii_in_any_tier_file_or_log(tmp_path):
    data_dir = tmp_path / "data"
    settings = make_settings(data_dir)
    services = open_services(settings)
    logs = io.StringIO()
    configure_logging("json", "DEBUG", stream=logs)
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False)
    graph = build_graph(services, checkpointer=SqliteSaver(conn))
    store = None
    try:
        user = "pii-user"
        turns = [
            {"speaker": "user", "text": f"うちの猫のモカの話。{text}", "ts": 1_790_000_000 + 60 * i}
            for i, (text, *_rest) in enumerate(CASES)
        ]
        # one turn at a time (every checkpoint of every step kept), then a transcript batch, then a chat message
        config = {"configurable": {"thread_id": "pii-thread"}}
        for turn in turns[:8]:
            graph.invoke({"turn": turn}, config, context={"user_id": user, "respond": False})
        replay(graph, user, turns[8:], flush=False)
        graph.invoke({"flush": True}, config, context={"user_id": user, "respond": False})
        chat = {"configurable": {"thread_id": "pii-chat"}}
        graph.invoke({"messages": [HumanMessage("モカの獣医さんの電話は03-9876-5432、メールはvet@clinic.example.jp")]},
                     chat, context={"user_id": "pii-chat-user"})
        graph.invoke({"flush": True}, chat, context={"user_id": "pii-chat-user", "respond": False})
        logging.getLogger("lumina.test").warning("a caller logged %s and %s", "vet@clinic.example.jp", "090-1234-5678")

        from lumina_memory.graphs.lumina_store import make_store

        store = make_store(settings, embedder=services.embedder)
        store.put(("memories", user), "vet", {"text": "獣医のメールは vet@clinic.example.jp", "card": "4111-1111-1111-1111"})
        assert store.get(("memories", user), "vet").value == {"text": "獣医のメールは [メール]", "card": "[card]"}
        assert store.search(("memories", user), query="獣医のメール")[0].key == "vet"

        # recall finds the memory by its other words and shows the placeholder
        items = recall(services, user, "モカの話でメールアドレスのこと", limit=30)
        text = "\n".join(i["text"] for i in items)
        assert "[メール]" in text and "モカ" in text

        raws = [raw for _t, _k, raw, _p in CASES] + ["03-9876-5432", "vet@clinic.example.jp"]
        exported = tmp_path / "export"
        with open_registry(services, store=store, checkpoints=data_dir / "checkpoints.sqlite") as places:
            for place in places:
                place.export(exported / place.name.replace("/", "_"))
        dump = _dump_exports(exported)
        assert "[電話番号]" in dump and "[メール]" in dump and "[カード番号]" in dump  # the memories are there
        assert [raw for raw in raws if raw in dump] == []
        assert [raw for raw in raws if raw in logs.getvalue()] == []
        assert "[email]" in logs.getvalue()
    finally:
        if store is not None:
            store.close()
        services.close()
        conn.close()
        stop_server(settings)
        configure_logging("text", "WARNING")
    # every file the data dir holds, raw bytes (DuckDB, qdrant, ladybug, the Redis snapshot, checkpoints, logs)
    blobs = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert [raw for raw in raws if raw.encode("utf-8") in blobs] == []


def test_redaction_can_be_switched_off(memory_factory):
    mem = memory_factory(pii_redaction=False)
    config = {"configurable": {"thread_id": "off"}}
    mem.graph.invoke({"turn": {"speaker": "user", "text": "mail me at yui@example.com", "ts": 1_790_000_000}},
                     config, context={"user_id": "u", "respond": False})
    assert mem.graph.get_state(config).values["turns"][-1]["text"] == "mail me at yui@example.com"
    assert set(KINDS) == set(mem.settings.pii_kinds)
