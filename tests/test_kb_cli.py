"""`lumina-memory kb …` run as a user would, in its own data directory (real embedded engines)."""

from __future__ import annotations

import json

import pytest

from .kb_docs import ANSWERS, QUESTIONS, write_documents


@pytest.fixture
def cli(cli_factory):
    """The console command in a temp data dir, its ``main`` called in this process (what the commands do is the
    subject here, not the process boundary)."""
    return cli_factory(in_process=True)


def test_kb_add_search_read_list_remove(cli, tmp_path):
    paths = write_documents(tmp_path / "docs")
    out = cli("kb", "add", "Handbook", *map(str, paths.values()))
    assert "fuji.txt: added" in out.stdout and "lighthouse.pdf: added" in out.stdout
    assert "shared knowledge base handbook: 3 file(s)" in out.stdout
    assert "3/3" in out.stderr and "lighthouse.pdf added" in out.stderr  # the progress bar, on stderr
    again = json.loads(cli("kb", "add", "handbook", str(paths["fuji.txt"]), "--json").stdout)
    assert [a["status"] for a in again] == ["unchanged"]

    hits = json.loads(cli("kb", "search", "handbook", QUESTIONS["cheesecake.md"], "--json", "--limit", "2").stdout)
    assert hits[0]["source"] == "cheesecake.md" and "百七十度" in hits[0]["text"]
    assert set(hits[0]) >= {"kind", "kb", "id", "source", "position", "text", "score", "tokens", "date"}
    read = cli("kb", "read", hits[0]["id"]).stdout
    assert ANSWERS["cheesecake.md"] in read and len(read) > len(hits[0]["text"])

    cli("kb", "add", "notes", str(paths["fuji.txt"]), "--user", "mina")
    listed = json.loads(cli("kb", "list", "--json").stdout)
    assert [(k["kb"], k["documents"]) for k in listed] == [("handbook", 3)]  # mina's KB is hers
    mine = json.loads(cli("kb", "list", "--user", "mina", "--json").stdout)
    assert {(k["kb"], k["scope"]) for k in mine} == {("handbook", "shared"), ("notes", "user")}
    assert "notes" in cli("kb", "list", "--all").stdout

    unknown = cli("kb", "search", "notes", "富士山", check=False)  # no --user: mina's KB is not visible
    assert unknown.returncode == 2 and "no knowledge base 'notes'" in unknown.stdout

    dry = cli("kb", "remove", "handbook", check=False)
    assert dry.returncode == 1 and "--yes" in dry.stdout
    assert "removed knowledge base handbook (shared): 3 documents" in cli("kb", "remove", "handbook", "--yes").stdout
    assert json.loads(cli("kb", "list", "--json").stdout) == []


def test_kb_bad_input_is_refused_with_a_clear_error(cli, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    bad = cli("kb", "add", "docs", str(empty), check=False)
    assert bad.returncode == 2 and "is empty" in bad.stdout
    broken = tmp_path / "sjis.txt"
    broken.write_bytes("日本語".encode("shift_jis"))
    bad = cli("kb", "add", "docs", str(broken), check=False)
    assert bad.returncode == 2 and "not valid UTF-8" in bad.stdout
    bad = cli("kb", "add", "../docs", str(broken), check=False)
    assert bad.returncode == 2 and "invalid kb name" in bad.stderr  # refused while parsing
    bad = cli("kb", "add", "docs", str(empty), "--user", "../x", check=False)
    assert bad.returncode == 2 and "invalid user_id" in bad.stderr
    bad = cli("kb", "search", "nothing", "質問", check=False)
    assert bad.returncode == 2 and "no knowledge base 'nothing'" in bad.stdout
