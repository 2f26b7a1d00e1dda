"""Knowledge extraction speed: milliseconds per turn of ``extract_items`` on the user turns of the generated
fact-update stories (``bench.knowledge_data``), per language, after one warm-up pass (Sudachi's dictionary).

    python -m bench.extract_speed [--per-language 12] [--repeat 5]

Each pass appends a space to every text so no cache keyed by the text answers it. The last lines printed are
``RESULT <lang> turns=… ms_per_turn=…``; knowledge is learnt once per archived segment, so this is a cost of
ingest, not of recall.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from bench.knowledge_data import generate
from lumina_memory.nodes.knowledge.extract import extract_items


def user_turns(per_language: int) -> dict[str, list[dict]]:
    turns: dict[str, list[dict]] = {}
    for story in generate(per_language):
        for session in story.sessions:
            turns.setdefault(story.language, []).extend(
                {"turn_id": f"{story.story_id}:{t.turn_id}", "speaker": "user", "text": t.text, "ts": t.at.timestamp()}
                for t in session.turns if t.speaker == "user")
    return turns


def ms_per_turn(turns: list[dict], repeat: int) -> float:
    extract_items(turns)  # warm-up: dictionaries and compiled patterns
    started = time.perf_counter()
    for n in range(1, repeat + 1):
        extract_items([{**t, "text": t["text"] + " " * n} for t in turns])
    return (time.perf_counter() - started) * 1000 / (repeat * len(turns))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.extract_speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-language", type=int, default=12, help="generated stories per language")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes over the turns")
    args = parser.parse_args(argv)
    for language, turns in sorted(user_turns(args.per_language).items()):
        print(f"RESULT {language} turns={len(turns)} ms_per_turn={ms_per_turn(turns, args.repeat):.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
