"""A refused command changes nothing, and the CLI prints user text as text (issue 44).

Every value a command takes is checked while the command line is parsed: a refusal creates no data
directory, starts no redis-server, prints one readable line on stderr (no traceback) and exits 2. Ids and
texts that look like rich markup (``[bold]x[/bold]``) or emoji codes (``a:b:``, ``:smile:``) print as
themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.faults import REPO, cli_env, stop_private_redis
from lumina_memory.graphs.cli import parse_args



def _files(root: Path) -> dict[str, str]:
    root.mkdir(parents=True, exist_ok=True)
    good = root / "good.txt"
    good.write_text("ok\n", encoding="utf-8")
    (root / "folder").mkdir(exist_ok=True)
    return {"good": str(good), "missing": str(root / "missing.txt"), "folder": str(root / "folder"),
            "nofolder": str(root / "nowhere" / "r.jsonl")}


# Hostile values for every subcommand; {good} {missing} {folder} {nofolder} are paths made by _files.
REFUSED = [
    ["demo", "--user", "../x"],
    ["chat", "--user", "a b"],
    ["chat", "--user", "u", "--character", "bob"],
    ["ingest", "{missing}"],
    ["ingest", "{folder}"],
    ["ingest", "{good}", "--rejects", "{nofolder}"],
    ["ingest", "{good}", "--rejects", "{folder}"],
    ["ingest", "{good}", "--rejects", " "],
    ["recall", "--user", "../x", "q"],
    ["recall", "--user", "u", "q", "--purpose", "bogus"],
    ["recall", "--user", "u", "q", "--limit", "-3"],
    ["recall", "--user", "u", "q", "--limit", "many"],
    ["recall", "--user", "u", ""],
    ["recall", "--user", "u", "bad\x01control"],
    ["recall", "--user", "u\udcff", "q"],  # an undecodable byte in argv arrives as a lone surrogate
    ["recall", "--user", "u", "q\udcff"],
    ["stats", "--user", "../x"],
    ["recover", "--rederive"],
    ["recover", "--user", "../x"],
    ["erase", "--user", "../x"],
    ["erase", "--user", "u", "--confirm", "not-a-token"],
    ["erase", "--user", "u", "--actor", "evil actor"],
    ["backup", "--to", "s3://"],
    ["backup", "--to", "{good}"],
    ["backup", "--group", "everything"],
    ["restore", "--from", "{missing}"],
    ["restore", "--from", "{folder}", "--snapshot", "../x"],
    ["backups", "--location", "{good}"],
    ["maintain", "--now", "yesterday"],
    ["maintain", "--user", "../x"],
    ["memories", "--user", "u", "--level", "9"],
    ["memories", "--user", "../x"],
    ["read", "--user", "u", "../etc"],
    ["protect", "--user", "u", "../m"],
    ["unprotect", "--user", "../x", "m1"],
    ["forget", "--user", "u", "a b"],
    ["knowledge", "--user", "../x"],
    ["profile", "--user", "{x}"],
    ["procedures", "--user", "../x"],
    ["outcome", "--user", "u", "p1", "maybe"],
    ["outcome", "--user", "u", "../p", "success"],
    ["kb", "add", "../docs", "{good}"],
    ["kb", "add", "docs", "{missing}"],
    ["kb", "add", "docs", "{good}", "--user", "../x"],
    ["kb", "search", "../x", "q"],
    ["kb", "search", "docs", ""],
    ["kb", "search", "docs", "q", "--limit", "0"],
    ["kb", "read", "not-a-pointer"],
    ["kb", "read", "kb:docs:d:1", "--neighbours", "-1"],
    ["kb", "list", "--user", "../x"],
    ["kb", "remove", "../x"],
    ["services", "restart"],
]

# The ones run as a user would, in a subprocess: the reported ones and one per command module.
IN_A_PROCESS = [
    ["recall", "--user", "../x", "q"],
    ["recall", "--user", "u", "q", "--purpose", "bogus"],
    ["stats", "--user", "../x"],
    ["recover", "--rederive"],
    ["ingest", "{good}", "--rejects", "{nofolder}"],
    ["erase", "--user", "u", "--confirm", "not-a-token"],
    ["restore", "--from", "{missing}"],
    ["maintain", "--now", "yesterday"],
    ["memories", "--user", "u", "--level", "9"],
    ["knowledge", "--user", "../x"],
    ["outcome", "--user", "u", "../p", "success"],
    ["kb", "add", "docs", "{good}", "--user", "../x"],
    ["kb", "read", "not-a-pointer"],
]


def _argv(case: list[str], paths: dict[str, str]) -> list[str]:
    return [arg.format(**paths) if arg.startswith("{") and arg[1:-1] in paths else arg for arg in case]


def _processes_naming(text: str) -> list[str]:
    """Command lines of running processes that name ``text`` (a private redis-server names its socket)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if text in cmdline:
                found.append(cmdline)
    return found


@pytest.mark.parametrize("case", REFUSED, ids=lambda case: " ".join(case)[:60])
def test_every_command_refuses_bad_values_while_parsing(case, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        parse_args(_argv(case, _files(tmp_path)))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("lumina-memory") and " error: " in err and err.count("\n") == 1, err


def test_a_refused_command_creates_nothing_and_starts_nothing(tmp_path):
    paths = _files(tmp_path / "files")
    for n, case in enumerate(IN_A_PROCESS):
        data_dir = tmp_path / f"data-{n}"
        proc = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", *_argv(case, paths)], cwd=REPO,
                              env=cli_env(data_dir), capture_output=True, text=True, errors="replace", timeout=120)
        assert not data_dir.exists(), (case, sorted(p.name for p in data_dir.iterdir()))
        assert not _processes_naming(str(data_dir)), case
        assert proc.returncode == 2, (case, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr + proc.stdout, (case, proc.stderr)
        assert proc.stderr.count("\n") == 1 and " error: " in proc.stderr, (case, proc.stderr)
    assert not Path(paths["nofolder"]).parent.exists()


def test_help_lists_the_recall_purposes(capsys):
    from lumina_memory.nodes.retrieval.presets import PRESETS

    with pytest.raises(SystemExit) as stop:
        parse_args(["recall", "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert "--purpose {" + ",".join(PRESETS) + "}" in text


HOSTILE_TEXT = "[bold]x[/bold] :smile: の話 [red]赤[/red]"


@pytest.fixture
def cli(cli_factory):
    """``main`` called in this process, for what the commands print (the subprocess runs are the tests above
    and below: refusals, and the reported ones)."""
    return cli_factory(in_process=True)


def test_user_text_prints_as_text(cli, tmp_path):
    user = "a:b:"
    rows = [{"user_id": user, "speaker": "user", "source_id": f"s{i}", "ts": f"2026-09-01T09:0{i}:00+09:00",
             "text": f"{HOSTILE_TEXT} 富士山に登る {i}"} for i in range(3)]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    cli("ingest", str(transcript))

    recalled = cli("recall", "--user", user, "[bold]富士山[/bold] :smile:").stdout
    assert "Q: [bold]富士山[/bold] :smile:" in recalled
    assert "[bold]x[/bold] :smile:" in recalled and "[red]赤[/red]" in recalled  # the item and its source turns
    assert "😄" not in recalled and "🅱" not in recalled

    memories = cli("memories", "--user", user).stdout
    assert f"memories of {user}" in memories and "[bold]x[/bold]" in memories and "🅱" not in memories
    for command, title in (("knowledge", f"knowledge of {user}"), ("procedures", f"procedures of {user}"),
                           ("profile", f"{user} — updated")):
        shown = cli(command, "--user", user).stdout
        assert title in shown and "🅱" not in shown and "😄" not in shown, shown

    doc = tmp_path / "notes.md"
    doc.write_text(f"# Notes\n\n{HOSTILE_TEXT}: the trail opens at dawn.\n", encoding="utf-8")
    cli("kb", "add", "notes", str(doc), "--user", user)
    found = cli("kb", "search", "notes", "trail [bold]dawn[/bold]", "--user", user).stdout
    assert "Q: trail [bold]dawn[/bold]" in found and "[bold]x[/bold] :smile:" in found and "😄" not in found


def test_a_refusal_from_a_store_is_printed_whole_on_one_line(tmp_path):
    """A narrow terminal wraps the line itself: rich must neither cut nor fold the reason."""
    env = cli_env(tmp_path / "data", COLUMNS="40")
    try:
        refused = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "kb", "search", "handbook", "[bold]q[/bold]"],
                                 cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        line = next(line for line in refused.stdout.splitlines() if line.startswith("error:"))
        assert "no knowledge base 'handbook'" in line and len(line) > 40 and line.rstrip().endswith(
            refused.stdout.strip().splitlines()[-1].rstrip()), refused.stdout
        assert len(refused.stdout.strip().splitlines()) == 1, refused.stdout
    finally:
        stop_private_redis(tmp_path / "data")


def test_an_ingest_reject_reason_is_printed_whole(tmp_path):
    """The reason of a rejected line is one line of output, however narrow the terminal (the terminal wraps)."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"user_id": "bad id", "speaker": "user", "text": "hello", "ts": 1}) + "\n",
                          encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "ingest", str(transcript)], cwd=REPO,
                          env=cli_env(tmp_path / "data", COLUMNS="40"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if line.strip().startswith("line 1:"))
    assert line.rstrip().endswith("(no '..')"), done.stdout
    stop_private_redis(tmp_path / "data")
