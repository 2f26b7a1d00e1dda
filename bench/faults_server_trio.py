"""Three processes on one memory at once (issue 47): a ``langgraph dev`` server driven through langgraph_sdk, the
CLI import (``lumina-memory ingest``) and a plain Python process (open_services + replay), on one PostgreSQL and
the private Redis of one data dir. Each imports a user of its own and the same shared transcript; once all three
are done, each recalls what the other two wrote, and a question about one user asked for another finds nothing.
Last, the server recalls for one user, a CLI import writes a new fact of that user, and the server's next recall
must find it (``freshness``).

    python -m bench.faults_server_trio worker DATA_DIR URI FILE GO   (the plain Python process; used by the run)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.faults import REPO, cli_env

T0 = 1_790_000_000.0
# user -> (what they say, the question, the word a recall must bring back)
FACTS = {
    "srv_user": ("My brother Tomas builds violins in Cremona.", "Where does Tomas build violins?", "Cremona"),
    "cli_user": ("I keep bees on the roof of my flat in Leeds.", "Where do I keep my bees?", "Leeds"),
    "py_user": ("My daughter Ines is learning to sail in Brittany.", "Where is Ines learning to sail?", "Brittany"),
    "team": ("The team offsite is in Tallinn this October.", "Where is the team offsite?", "Tallinn"),
}
SHARED = "team"
FILLER = ("I made soup for dinner tonight.", "That sounds cosy.", "Tomorrow I will clean the garage.",
          "Good luck with the garage.", "The weather turned cold this week.", "Wrap up warm then.")
WAIT_SECONDS = 900.0  # the longest any step here waits for another process


def conversation(user: str, size: int = 8) -> list[dict[str, Any]]:
    """``user``'s fact and replies, then chatter after an idle hour (two segments); rows as the CLI reads them."""
    fact = FACTS[user][0]
    texts = [fact, "Oh, tell me more about that.", *FILLER[: max(0, size - 2)]]
    rows, ts = [], T0
    for i, text in enumerate(texts):
        ts += 3600 if i == 2 else 30
        rows.append({"user_id": user, "speaker": "user" if i % 2 == 0 else "lumina", "text": text, "ts": ts,
                     "source_id": f"{user}-{i}"})
    return rows


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LanggraphDev:
    """``langgraph dev`` serving the repository's langgraph.json in server mode, in a session of its own."""

    def __init__(self, data_dir: Path, workdir: Path, env: dict[str, str]):
        self.port, self.workdir, self.log = _free_port(), workdir, workdir / "server.log"
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**cli_env(data_dir, **env), "LANGGRAPH_CLI_NO_ANALYTICS": "1",
                    "LANGGRAPH_NO_VERSION_CHECK": "true", "LANGSMITH_TRACING": "false"}
        self.proc: subprocess.Popen | None = None

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/ok", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    def start(self) -> None:
        exe = shutil.which("langgraph")
        if exe is None:
            raise RuntimeError("the langgraph CLI is missing: pip install -e '.[test]' (langgraph-cli[inmem])")
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [exe, "dev", "--config", str(REPO / "langgraph.json"), "--no-browser", "--no-reload", "--host",
                 "127.0.0.1", "--port", str(self.port)], cwd=self.workdir, env=self.env, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + WAIT_SECONDS
        while not self._ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"langgraph dev did not come up:\n{self.tail()}")
            time.sleep(0.3)

    def identity(self) -> dict[str, Any]:
        """What answers on the port: the server's /info (langgraph-api's version and flags) and the command run."""
        with urllib.request.urlopen(f"{self.url}/info", timeout=10) as resp:
            info = json.loads(resp.read())
        assert self.proc is not None
        return {"command": " ".join(Path(a).name if i == 0 else a for i, a in enumerate(self.proc.args[:2])),
                "info": info}

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def probes(me: str) -> list[tuple[str, str, str, bool]]:
    """(user asked for, question, word, whether it must be found): the others' facts, and one of them asked for
    ``me``, which must not bring back another user's memory."""
    others = [u for u in FACTS if u not in (me, SHARED)]
    found = [(u, FACTS[u][1], FACTS[u][2], True) for u in [*others, SHARED]]
    return [*found, (me, FACTS[others[0]][1], FACTS[others[0]][2], False)]


def _seen(texts: list[str], probe: tuple[str, str, str, bool]) -> dict[str, Any]:
    user, question, word, wanted = probe
    hit = any(word in t for t in texts)
    return {"user": user, "question": question, "found": hit, "ok": hit == wanted}


async def _server_side(url: str, recall: bool = False) -> list[dict[str, Any]]:
    """Import srv_user and the shared transcript through runs (``recall``: ask the probes instead)."""
    from langgraph_sdk import get_client

    client = get_client(url=url)
    if recall:
        return [_seen(await _server_recall(url, probe[0], probe[1]), probe) for probe in probes("srv_user")]

    async def one(user: str) -> None:
        thread = (await client.threads.create())["thread_id"]
        context = {"user_id": user, "respond": False}
        turns = [{k: r[k] for k in ("speaker", "text", "ts", "source_id")} for r in conversation(user)]
        for start in range(0, len(turns), 4):
            await client.runs.wait(thread, "lumina_memory", input={"transcript": turns[start:start + 4]},
                                   context=context, raise_error=True)
        await client.runs.wait(thread, "lumina_memory", input={"flush": True}, context=context, raise_error=True)

    await asyncio.gather(one("srv_user"), one(SHARED))
    return []


def worker(data_dir: Path, uri: str, file: Path, go: Path) -> int:
    """The plain Python process: import FILE with replay, say so, wait for GO, recall its probes (JSON)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from bench.faults_server import server_settings
    from lumina_memory.graphs.memory_graph import build_graph
    from lumina_memory.graphs.replay import read_jsonl, replay
    from lumina_memory.nodes.retrieval.recall import recall
    from lumina_memory.nodes.services import open_services

    services = open_services(server_settings(data_dir, uri))
    try:
        graph = build_graph(services, checkpointer=InMemorySaver())
        rows = list(read_jsonl(file))
        for user in dict.fromkeys(r["user_id"] for r in rows):
            replay(graph, user, [r for r in rows if r["user_id"] == user])
        print("imported", flush=True)
        deadline = time.monotonic() + WAIT_SECONDS
        while not go.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{go} never appeared")
            time.sleep(0.2)
        seen = [_seen([i["text"] for i in recall(services, p[0], p[1], purpose="question", limit=5)], p)
                for p in probes("py_user")]
        print(json.dumps(seen), flush=True)
        return 0
    finally:
        services.close()


def _cli_recall(data_dir: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for probe in probes("cli_user"):
        done = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "recall", "--user", probe[0],
                               "--json", probe[1]], cwd=REPO, env=cli_env(data_dir, **env), capture_output=True,
                              text=True, timeout=WAIT_SECONDS)
        if done.returncode != 0:
            raise RuntimeError(f"lumina-memory recall failed:\n{done.stderr[-2000:]}")
        out.append(_seen([i["text"] for i in json.loads(done.stdout)], probe))
    return out


# A fact written after the server has recalled for its user: the server's next recall must bring it back.
LATE = ("cli_user", "I moved my bees to a farm near Harrogate.", "Where did I move my bees?", "Harrogate")


async def _server_recall(url: str, user: str, question: str) -> list[str]:
    """One question run on the ``langgraph dev`` server: the texts it recalled."""
    from langgraph_sdk import get_client

    client = get_client(url=url)
    thread = (await client.threads.create())["thread_id"]
    answer = await client.runs.wait(thread, "lumina_memory", raise_error=True,
                                    input={"messages": [{"type": "human", "content": question}]},
                                    context={"user_id": user, "purpose": "question"})
    return [r.get("text", "") for r in answer.get("recalled", [])]


def freshness(server: LanggraphDev, root: Path, data_dir: Path, env: dict[str, str]) -> dict[str, Any]:
    """Does the server see another process's write at once? The server recalls for LATE's user (its caches warm,
    the fact not yet written), a CLI import writes the fact and exits, and the server is asked again at once:
    its first answer after the writer's exit must hold the fact (no retry, no wait). "seconds": from the writer's
    exit to that answer (issue 47 asks for under one second)."""
    user, text, question, word = LATE
    before = asyncio.run(_server_recall(server.url, user, question))
    file = root / "late.jsonl"
    rows = [{"user_id": user, "speaker": "user", "text": text, "ts": T0 + 86_400, "source_id": f"{user}-late-0"},
            {"user_id": user, "speaker": "lumina", "text": "Harrogate bees, how lovely.", "ts": T0 + 86_430,
             "source_id": f"{user}-late-1"}]
    file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "ingest", str(file)], cwd=REPO,
                          env=cli_env(data_dir, **env), capture_output=True, text=True, timeout=WAIT_SECONDS)
    written = time.monotonic()
    if done.returncode != 0:
        raise RuntimeError(f"lumina-memory ingest failed:\n{done.stderr[-2000:]}")
    after = asyncio.run(_server_recall(server.url, user, question))
    seconds = time.monotonic() - written
    return {"found before the write": any(word in t for t in before),
            "found by the first recall after it": any(word in t for t in after), "seconds": round(seconds, 3)}


def tally(data_dir: Path, uri: str) -> dict[str, Any]:
    """Per user: turns missing from the archive (lost), turns or segments there more than once, and derived tiers
    with a segment count other than the archive's (duplicated)."""
    from bench.faults import tier_ids
    from bench.faults_server import server_settings
    from lumina_memory.nodes.services import open_services

    services = open_services(server_settings(data_dir, uri))
    try:
        out: dict[str, Any] = {"lost": 0, "duplicated": 0, "per user": {}}
        for user in FACTS:
            want = {r["source_id"] for r in conversation(user)}
            turns = services.stores.archive.all_turns(user)
            sources = [t.source_id for t in turns]
            in_segments = [t for s in services.stores.archive.segments(user) for t in s.turn_ids]
            ids = tier_ids(services, [user])
            segments = len(ids["archive segments"])
            derived = {t: len(ids[t]) for t in ("mid-term", "long-term")}
            lost = len(want - set(sources)) + sum(max(0, segments - n) for n in derived.values())
            dup = (len(sources) - len(set(sources)) + len(in_segments) - len(set(in_segments))
                   + len(set(sources) - want) + sum(max(0, n - segments) for n in derived.values()))
            out["per user"][user] = {"turns": len(turns), "segments": segments, **derived}
            out["lost"] += lost
            out["duplicated"] += dup
        return out
    finally:
        services.close()


def three_processes(root: Path, uri: str) -> dict[str, Any]:
    """The whole run; every process and server it starts is stopped on every exit path."""
    from bench.faults_server import server_env, stop_redis

    data_dir, env = root / "data", server_env(uri)
    root.mkdir(parents=True, exist_ok=True)
    cli_file, py_file, go = root / "cli.jsonl", root / "py.jsonl", root / "go"
    for path, user in ((cli_file, "cli_user"), (py_file, "py_user")):
        rows = conversation(user) + conversation(SHARED)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    server = LanggraphDev(data_dir, root / "lg-cwd", env)
    children: list[subprocess.Popen] = []
    try:
        server.start()
        cli = subprocess.Popen([sys.executable, "-m", "lumina_memory.graphs.cli", "ingest", str(cli_file)], cwd=REPO,
                               env=cli_env(data_dir, **env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        children.append(cli)
        py = subprocess.Popen([sys.executable, "-m", "bench.faults_server_trio", "worker", str(data_dir), uri,
                               str(py_file), str(go)], cwd=REPO, env=cli_env(data_dir), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        children.append(py)
        asyncio.run(_server_side(server.url))
        _, cli_err = cli.communicate(timeout=WAIT_SECONDS)
        if cli.returncode != 0:
            raise RuntimeError(f"lumina-memory ingest failed:\n{cli_err[-2000:]}")
        assert py.stdout is not None
        if py.stdout.readline().strip() != "imported":
            raise RuntimeError(f"the Python process did not import:\n{py.communicate(timeout=60)[1][-2000:]}")
        counts = tally(data_dir, uri)  # before the recalls: a question sent to the server is a turn too
        go.touch()
        py_out, py_err = py.communicate(timeout=WAIT_SECONDS)
        if py.returncode != 0:
            raise RuntimeError(f"the Python process failed:\n{py_err[-2000:]}")
        recalls = {"langgraph dev": asyncio.run(_server_side(server.url, recall=True)),
                   "cli": _cli_recall(data_dir, env), "python": json.loads(py_out.strip().splitlines()[-1])}
        fresh = freshness(server, root, data_dir, env)
        ok = counts["lost"] == 0 and counts["duplicated"] == 0 and all(
            p["ok"] for seen in recalls.values() for p in seen) and fresh["found by the first recall after it"] \
            and not fresh["found before the write"]
        return {"ok": ok, **counts, "recalls": recalls, "langgraph dev recall after a CLI write": fresh,
                "langgraph dev": server.identity()}
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
        try:
            server.stop()
        finally:
            stop_redis(data_dir)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "worker":
        sys.exit(worker(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5])))
    sys.exit("usage: python -m bench.faults_server_trio worker DATA_DIR URI FILE GO")
