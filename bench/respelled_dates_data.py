"""A LoCoMo-format file with its dates spelled otherwise: does temporal recall hold when the formats change?

    python -m bench.respelled_dates_data --data ../shared/data/locomo/locomo_dev.json --out /tmp/locomo_dev_dates.json
    python -m bench.locomo --data /tmp/locomo_dev_dates.json --budget 1024,256 --no-ablation --no-mem0

LoCoMo writes every date one way: sessions at "1:56 pm on 8 May, 2023", questions "on 8 May, 2023", "on October
13, 2023", "in July 2023". Rules fitted to those spellings would score as well on the dev split and fail on a set
that writes "2023-05-08" or "the 8th of May 2023". Here each session date and each date a question names is
written in one of several other spellings, in turn (the k-th date found gets spelling k mod n), with the same
day, clock and meaning. Everything else (turns, evidence, answers) is left as it was, so the two files' recall
differs only by how their dates read. Written from a file the caller points to (../shared/data is for benchmarks:
nothing derived from it is kept in the repo).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import re
from datetime import datetime
from pathlib import Path

from lumina_memory.nodes.text.calendar.names import EN_MONTHS
from lumina_memory.nodes.text.calendar.stamps import read_when

_MONTH = "|".join(name.capitalize() for name in EN_MONTHS)
_MONTHS = {m.lower(): i for i, m in enumerate(_MONTH.split("|"), 1)}
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}) ({_MONTH}),? (\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH}) (\d{{1,2}}),? (\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH}),? (\d{{4}})\b")
_ANY_DATE = re.compile(rf"(?P<dmy>{_DAY_MONTH_YEAR.pattern})|(?P<mdy>{_MONTH_DAY_YEAR.pattern})|(?P<my>{_MONTH_YEAR.pattern})")
_SESSION_DATE = re.compile(r"^session_\d+_date_time$")


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


# A day as a question writes it (each one after "on", "before", "of" … as LoCoMo's are).
DAY_SPELLINGS = (
    lambda d: d.strftime("%Y-%m-%d"),
    lambda d: f"{d:%B} {_ordinal(d.day)}, {d.year}",
    lambda d: f"the {_ordinal(d.day)} of {d:%B} {d.year}",
    lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",
    lambda d: f"{d:%A}, {d:%B} {d.day}, {d.year}",
    lambda d: f"{d:%b} {d.day} {d.year}",
)
MONTH_SPELLINGS = (
    lambda y, m: f"{datetime(y, m, 1):%B} of {y}",
    lambda y, m: f"{datetime(y, m, 1):%b} {y}",
    lambda y, m: f"{y}-{m:02d}",
)
# A session's date and time, as apps and exports write them.
SESSION_SPELLINGS = (
    lambda d: d.strftime("%Y-%m-%d %H:%M"),
    lambda d: f"{d:%B} {d.day}, {d.year} at {d.hour % 12 or 12}:{d:%M} {'PM' if d.hour >= 12 else 'AM'}",
    lambda d: f"{d:%A} {d.day} {d:%B} {d.year}, {d:%H:%M}",
    lambda d: f"{d.day:02d}.{d.month:02d}.{d.year} {d:%H:%M}",
)


def respell_question(question: str, counter: itertools.count) -> str:
    """``question`` with each day and month it names spelled the next way along (``counter``)."""

    def day(m: re.Match, order: str) -> str:
        if order == "dmy":
            d, month, y = int(m.group(1)), _MONTHS[m.group(2).lower()], int(m.group(3))
        else:
            month, d, y = _MONTHS[m.group(1).lower()], int(m.group(2)), int(m.group(3))
        try:
            when = datetime(y, month, d)
        except ValueError:  # not a day ("31 February"): leave it as written
            return m.group(0)
        return DAY_SPELLINGS[next(counter) % len(DAY_SPELLINGS)](when)

    def month(m: re.Match) -> str:
        return MONTH_SPELLINGS[next(counter) % len(MONTH_SPELLINGS)](int(m.group(2)), _MONTHS[m.group(1).lower()])

    # One pass over every kind, so that a day once respelled ("the 13th of October 2023") is not read again.
    def one(m: re.Match) -> str:
        if m.group("dmy"):
            return day(_DAY_MONTH_YEAR.fullmatch(m.group("dmy")), "dmy")
        if m.group("mdy"):
            return day(_MONTH_DAY_YEAR.fullmatch(m.group("mdy")), "mdy")
        return month(_MONTH_YEAR.fullmatch(m.group("my")))

    return _ANY_DATE.sub(one, question)


def respell_session(value: str, k: int) -> str:
    """A session's date-time in spelling ``k``; a value naming no day is left as it is."""
    when = read_when(value)
    if when is None:
        return value
    return SESSION_SPELLINGS[k % len(SESSION_SPELLINGS)](when)


def respelled(samples: list[dict]) -> list[dict]:
    out = copy.deepcopy(samples)
    questions, sessions = itertools.count(), itertools.count()
    for sample in out:
        conv = sample.get("conversation", {})
        for key in sorted(k for k in conv if _SESSION_DATE.match(k)):
            conv[key] = respell_session(conv[key], next(sessions))
        for qa in sample.get("qa", []):
            qa["question"] = respell_question(qa["question"], questions)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--out", required=True, help="where to write the respelled file")
    args = parser.parse_args(argv)
    samples = json.loads(Path(args.data).read_text(encoding="utf-8"))
    out = respelled(samples)
    changed = sum(a["question"] != b["question"] for s, t in zip(samples, out) for a, b in zip(s["qa"], t["qa"]))
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{args.out}: {len(out)} conversations, {changed} questions with their dates respelled, every session date "
          f"respelled")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
