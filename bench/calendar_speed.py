"""What reading a calendar expression costs: the hand rules of the one calendar reader (recall's ``time_window``,
the knowledge extractor's ``find_date``, the session-stamp ``read_when``) against dateparser on the same
expressions, per call, and how many of them dateparser reads at all.

    python -m bench.calendar_speed [--repeat 200]

It is why dateparser reads only the stamps no fixed form covers (nodes/text/calendar/stamps.py): loading its
language data takes seconds and a call milliseconds, where recall reads every question and the extractor every
sentence."""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from lumina_memory.nodes.knowledge.dates import find_date
from lumina_memory.nodes.retrieval.temporal import time_window
from lumina_memory.nodes.text.calendar.stamps import read_when

NOW = datetime(2024, 6, 19, 12, tzinfo=timezone.utc)
QUESTIONS = ["what did I do last month?", "先月の上旬に何を買った？", "年度末は忙しかった？", "what did we cook last Friday?",
             "先週の金曜日に何を作った？", "where was I three days ago?", "3日前はどこにいた？", "what did I do on 8 May 2023?",
             "2023年5月8日に何をした？", "¿Qué hice el 8 de mayo de 2023?"]
SENTENCES = [("I'm seeing the dentist next Thursday", True), ("来週の木曜日に歯医者に行く", False),
             ("I planted the tulips on Sept 3rd", True), ("12月5日に金沢へ行く", False)]
STAMPS = ["1:56 pm on 8 May, 2023", "8 de mayo de 2023, 13:56", "2023年5月8日 午後1時56分", "08.05.2023",
          "2023년 5월 8일 오후 1:56", "8 мая 2023 г., 13:56"]


def _per_call_ms(call, items, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            call(item)
        times.append((time.perf_counter() - start) / len(items) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.calendar_speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200, help="rounds over the expressions (median reported)")
    args = parser.parse_args(argv)
    now_ts, zone = NOW.timestamp(), ZoneInfo("UTC")
    # time_window keeps its last questions: each round reads texts it has not seen, as a new question would be.
    rounds = iter(range(10**9))
    hand = {
        "time_window (question)": _per_call_ms(lambda q: time_window(f"{q} #{next(rounds)}", now_ts), QUESTIONS,
                                               args.repeat),
        "find_date (sentence)": _per_call_ms(lambda s: find_date(s[0], now_ts, zone, future=True, english=s[1]),
                                             SENTENCES, args.repeat),
        "read_when (stamp)": _per_call_ms(read_when, STAMPS, args.repeat),
    }
    start = time.perf_counter()
    import dateparser  # imported here: its load is one of the figures

    settings = {"RELATIVE_BASE": NOW.replace(tzinfo=None), "PREFER_DATES_FROM": "past"}
    dateparser.parse("8 May 2023", settings=settings)
    load_s = time.perf_counter() - start
    everything = QUESTIONS + [s for s, _ in SENTENCES] + STAMPS
    read = sum(dateparser.parse(text, settings=settings) is not None for text in everything)
    dp_ms = _per_call_ms(lambda text: dateparser.parse(text, settings=settings), everything, max(1, args.repeat // 20))
    print("| reader | ms per call (median) |\n|---|---|")
    for name, ms in hand.items():
        print(f"| hand rules: {name} | {ms:.3f} |")
    print(f"| dateparser.parse (same {len(everything)} texts) | {dp_ms:.3f} |")
    print(f"dateparser: first call {load_s:.1f} s (an English date; up to ~8 s when it must try every locale); gives a "
          f"date for {read} of {len(everything)} texts (parse reads a text that is only a date, not a question or a "
          "sentence around one; and a date, never a span: 'last month' is one day)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
