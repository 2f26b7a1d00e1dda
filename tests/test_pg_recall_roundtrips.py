"""A server-mode recall's round trips to PostgreSQL, counted on a real private server, and the promise they must
keep: a turn written by another process is recalled here within one second.

A recall checks its user's write stamp about five times (indexes and per-user caches); the process's stamps
(stores.pg_stamps) answer all but the first in a short validity, and the pools lend a quiet connection without a
check query (pg_connection.idle_check). Counted with bench.perf_server_profile's counter, which wraps psycopg's
own ``execute`` and ``pipeline`` (a pipelined batch is one round trip).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

from bench.perf_server_profile import StatementCounter
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.pg_stamps import STAMP_SECONDS, stamps_of
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from tests.test_server_mode import REPO, _ingest, _recalled, _settings, server_dir  # noqa: F401 - a fixture

# A recall of bench.perf's memories: one stamp read (at most), the turn vectors' search (one pipelined batch) and
# the graph's concept reads. Before the shared stamps and the quiet-connection check it took 16 (bench.perf_server_profile).
MAX_ROUND_TRIPS = 5


def test_a_server_mode_recall_makes_few_round_trips_and_reads_its_stamp_once(server_dir, pg_uri):
    import numpy as np

    from bench.perf import Pool, fill_user, sentence
    from bench.perf_server import analyze

    services = open_services(_settings(server_dir, pg_uri))
    try:
        pool = Pool(services.embedder, 32)
        fill_user(services, pool, "user-0001", 400, 1)  # bench.perf's memories: 400 turns, their segments and graph
        analyze(pg_uri)
        questions = [("" if i % 2 else "What ") + sentence(__import__("random").Random(i), i % 2 == 1) for i in range(5)]
        vectors = np.asarray(services.embedder.embed(questions), dtype=np.float32)

        def ask(i: int) -> list[dict]:
            return recall(services, "user-0001", questions[i], purpose="question", budget=1024, query_vector=vectors[i])

        assert ask(0)  # indexes built, connections opened
        stamps = stamps_of(pg_uri)  # this process's stamps of the database, which the archive reads
        assert stamps.server_reads > 0
        stamps.seconds = 60.0  # the recalls below share one validity
        counter = StatementCounter()
        with counter.watch():
            answers = [ask(i) for i in range(5)]
        assert all(answers)
        assert counter.round_trips <= 5 * MAX_ROUND_TRIPS, counter.statements
        stamp_reads = sum(n for kind, n in counter.statements.items() if "lumina_versions" in kind)
        assert stamp_reads <= 1, counter.statements
        assert counter.statements.get("..", 0) == 0  # no check query before lending a quiet connection
    finally:
        services.close()


def test_a_turn_written_by_another_process_is_recalled_here_within_one_second(server_dir, pg_uri):
    here = open_services(_settings(server_dir, pg_uri))
    child = None
    try:
        _ingest(here, "kai", [("user", "I play the cello in a quartet.")])
        assert "cello" in _recalled(here, "kai", "Which instrument do I play?")
        code = textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from tests.test_server_mode import _ingest, _settings
            from lumina_memory.nodes.services import open_services
            services = open_services(_settings(Path({str(server_dir)!r}), {pg_uri!r}))
            print("ready", flush=True)
            sys.stdin.readline()
            _ingest(services, "kai", [("user", "My quartet rehearses every Thursday at the old library.")],
                    start=1_777_200_000)
            print("written", flush=True)
            services.close()
        """)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        child = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "ready", child.stderr.read()[-3000:]
        # This process reads kai's stamp just before the child writes: the stamp it holds is the freshest it can be.
        assert "Thursday" not in _recalled(here, "kai", "When does the quartet rehearse?")
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "written", child.stderr.read()[-3000:]
        written = time.monotonic()
        found = False
        while not found and time.monotonic() - written < 1.0:
            found = "Thursday" in _recalled(here, "kai", "When does the quartet rehearse?")
        assert found, f"not recalled within one second (stamps are kept {STAMP_SECONDS} s)"
        assert child.wait(timeout=120) == 0, child.stderr.read()[-3000:]
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        here.close()
