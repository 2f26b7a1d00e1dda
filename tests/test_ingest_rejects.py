"""`lumina-memory ingest FILE` ingests every valid line and writes the rejected ones, with line numbers and
reasons, to a rejects file (issue 16: a bad row mid-file left a partial import, turns stuck in the checkpoint,
the next user's rows never read; a gzip, binary or Latin-1 file ended in a UnicodeDecodeError traceback)."""

from __future__ import annotations

import gzip
import json

import pytest

MARK = "ZQXREJECTEDROW"


@pytest.fixture
def cli(cli_factory):
    """``main`` called in this process: what the import keeps and rejects is the subject, not the process
    boundary (a traceback would still show: it is printed to the captured stderr with exit code 1)."""
    return cli_factory(check=False, in_process=True)


def _row(user: str, i: int, **extra) -> str:
    return json.dumps({"user_id": user, "speaker": "user" if i % 2 == 0 else "lumina",
                       "text": f"{user}の話 その{i}：猫のモカは{i}歳", "ts": 1_790_000_000 + 60 * i, **extra},
                      ensure_ascii=False)


BAD_LINES = [  # (line text, field named in the rejects file)
    (json.dumps({"user_id": "alice", "speaker": "mallory", "text": f"{MARK} unknown speaker", "ts": 1_790_000_700}), "speaker"),
    (json.dumps({"user_id": "alice", "speaker": "user", "text": f"{MARK} nul \u0000", "ts": 1_790_000_710}), "text"),
    ('{"user_id": "alice", "speaker": "user", "text": "' + MARK + ' broken json', "line"),
    (json.dumps({"speaker": "user", "text": f"{MARK} no user", "ts": 1}), "user_id"),
    (json.dumps({"user_id": "alice\n", "speaker": "user", "text": f"{MARK} newline id", "ts": 1}), "user_id"),
    (json.dumps(["not", "an", "object", MARK]), "line"),
]


def test_valid_lines_go_in_and_rejected_ones_go_to_the_rejects_file(cli, tmp_path):
    alice = [_row("alice", i) for i in range(6)]
    bob = [_row("bob", i) for i in range(4)]
    lines = alice[:3] + [b for b, _ in BAD_LINES[:3]] + alice[3:] + [b for b, _ in BAD_LINES[3:]] + bob
    source = tmp_path / "import.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")

    proc = cli("ingest", str(source))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "alice: 6 turns" in proc.stdout and "bob: 4 turns" in proc.stdout  # the next user's rows were read
    assert "10 lines ingested, 6 rejected" in proc.stdout
    target = tmp_path / "import.jsonl.rejects.jsonl"
    assert str(target) in proc.stdout.replace("\n", "")
    rejects = [json.loads(x) for x in target.read_text(encoding="utf-8").splitlines()]
    assert [r["line"] for r in rejects] == [4, 5, 6, 10, 11, 12]
    assert [r["field"] for r in rejects] == [f for _, f in BAD_LINES]
    assert all(r["reason"] and MARK in r["raw"] for r in rejects)
    assert rejects[0]["user_id"] == "alice" and rejects[3]["user_id"] is None
    assert oct(target.stat().st_mode & 0o777) == oct(0o600)

    # every accepted turn reached the archive (segments flushed, nothing stuck), no rejected text anywhere
    for user, n in (("alice", 6), ("bob", 4)):
        stats = cli("stats", "--user", user).stdout
        assert f"{n} turns" in stats, stats
    data = tmp_path / "data"
    assert not any(MARK.encode() in p.read_bytes() for p in data.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000)

    # the fixed lines ingested again: accepted ones are recognised and skipped, exit 0, no new rejects file
    target.unlink()
    source.write_text("\n".join(alice + bob) + "\n", encoding="utf-8")
    proc = cli("ingest", str(source), "--rejects", str(tmp_path / "elsewhere.jsonl"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "none rejected" in proc.stdout and not (tmp_path / "elsewhere.jsonl").exists()
    assert "6 turns" in cli("stats", "--user", "alice").stdout


@pytest.mark.parametrize(
    "content, expected",
    [
        (gzip.compress(b'{"user_id": "a", "speaker": "user", "text": "x", "ts": 1}\n'), "gzip"),
        (b'{"user_id": "a", "speaker": "user", "text": "x", "ts": 1}\n' + bytes(range(256)), "binary"),
        ('{"user_id": "a", "speaker": "user", "text": "ok", "ts": 1}\n'
         '{"user_id": "a", "speaker": "user", "text": "café crème", "ts": 2}\n'.encode("latin-1"), "line 2, byte 107 (0xe9)"),
    ],
    ids=["gzip", "binary", "latin-1"],
)
def test_a_file_that_is_not_utf8_text_gets_a_clear_error_and_nothing_is_ingested(cli, tmp_path, content, expected):
    source = tmp_path / "odd.jsonl"
    source.write_bytes(content)
    proc = cli("ingest", str(source))
    assert proc.returncode == 2
    out = proc.stdout.replace("\n", "")
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "invalid file" in out and str(source) in out and expected in out
    assert not (tmp_path / "data" / "archive.duckdb").exists()  # refused before anything opened
