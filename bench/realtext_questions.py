"""The questions of a bench.realtext_data conversation, each with message-level evidence, its issue category
(``kind``), the LoCoMo category it is scored under, and where its answer lies (``answer_in``: ``turns`` — every
part of the answer is in the evidence turns' text — or ``dates`` — worked out from the evidence sessions' dates).

Statements are bench.realtext_data's ``Statement`` (kind, session, slot, value, old, item, dia_id); nothing here
imports that module, so the two stay one job each.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any, Sequence

from bench import realtext_phrases as ph
from bench.longreply_data import MONTHS_EN, SLOTS
from bench.realtext_sources import cloze


def date_answer(at: datetime, language: str) -> str:
    return f"{at.year}年{at.month}月{at.day}日" if language == "ja" else f"{at.day} {MONTHS_EN[at.month - 1]}, {at.year}"


def _qa(kind: str, question: str, answer: str, evidence: Sequence[str], answer_in: str = "turns") -> dict[str, Any]:
    return {"question": question, "answer": answer, "evidence": list(evidence), "category": ph.KIND_CATEGORY[kind],
            "kind": kind, "answer_in": answer_in}


def _all_text(conv: dict) -> str:
    return "\n".join(t["text"] for k, v in conv.items() if k.startswith("session_") and isinstance(v, list)
                     for t in v)


def _extraction(rng: random.Random, language: str, conv: dict, reply_of, count: int) -> list[dict]:
    """Cloze questions on words inside long replies, spread over the conversation; a window that occurs anywhere
    else in the conversation is not used (the question must point at one passage)."""
    q = ph.QUESTIONS[language]
    everything = _all_text(conv)
    order = list(range(len(reply_of)))
    rng.shuffle(order)
    out: list[dict] = []
    for i in order:
        if len(out) == count:
            break
        dia, parts = reply_of[i]
        part = rng.choice(parts)
        c = cloze(rng, part.text)
        if c is None or everything.count(f"{c.left}{c.word}{c.right}") != 1:
            continue
        out.append(_qa("extraction", ph.fill(q["extraction"], title=part.title, left=c.left, right=c.right),
                       c.word, [dia]))
    return out


def questions(rng: random.Random, language: str, conv: dict, statements: Sequence[Any], reply_of,
              dates: Sequence[datetime], size) -> list[dict]:
    """Every category of the issue, in the conversation's order of kinds; no question text twice."""
    q = ph.QUESTIONS[language]
    noun = lambda slot: SLOTS[slot].noun[language]  # noqa: E731
    chains: dict[str, list[Any]] = {}
    for s in sorted((s for s in statements if s.slot), key=lambda s: s.session):
        chains.setdefault(s.slot, []).append(s)
    out = _extraction(rng, language, conv, reply_of, size.extraction)
    current = []  # the latest statement of every fact
    for slot, chain in chains.items():
        last = chain[-1]
        current.append(last)
        if chain[-1].kind == "update":
            out.append(_qa("knowledge_update", ph.fill(q["update"], noun=noun(slot)), last.value, [last.dia_id]))
            if len(chain) >= 3:
                out.append(_qa("summarisation", ph.fill(q["summary_history"], noun=noun(slot)),
                               ", ".join(s.value for s in chain), [s.dia_id for s in chain]))
        elif chain[-1].kind == "contradict":
            out.append(_qa("contradiction", ph.fill(q["contradiction"], noun=noun(slot)),
                           f"{chain[0].value}, {last.value}", [chain[0].dia_id, last.dia_id]))
    if len(current) >= 3:
        three = rng.sample(current, 3)
        out.append(_qa("summarisation", ph.fill(q["summary_current"], **{f"noun{i}": noun(s.slot) for i, s in
                                                                        enumerate(three, 1)}),
                       ", ".join(s.value for s in three), [s.dia_id for s in three]))
    plain = [c[0] for c in chains.values() if len(c) == 1]
    pairs = [(a, b) for i, a in enumerate(plain) for b in plain[i + 1:] if a.session != b.session]
    for a, b in rng.sample(pairs, min(size.pairs, len(pairs))):
        out.append(_qa("multi_session", ph.fill(q["multi_session"], noun1=noun(a.slot), noun2=noun(b.slot)),
                       f"{a.value}, {b.value}", [a.dia_id, b.dia_id]))
    facts = [s for s in statements if s.slot]
    _orderings(rng, language, facts, size.orderings, out)
    _temporal(rng, language, facts, dates, size.temporal, out)
    for kind, table in (("prefer", ph.PREFERENCES), ("instruct", ph.INSTRUCTIONS)):
        for s in (s for s in statements if s.kind == kind):
            _, about, answer = table[language][s.item]
            name = "preference" if kind == "prefer" else "instruction"
            out.append(_qa(name, ph.fill(q[name], about=about), answer, [s.dia_id]))
    seen: set[str] = set()
    return [x for x in out if not (x["question"] in seen or seen.add(x["question"]))]


def _orderings(rng: random.Random, language: str, facts: Sequence[Any], count: int, out: list[dict]) -> None:
    q = ph.QUESTIONS[language]
    noun = lambda slot: SLOTS[slot].noun[language]  # noqa: E731
    for k in range(count):
        if k % 2 == 0:
            a, b = rng.sample(facts, 2)
            if a.session == b.session:
                continue
            first = min(a, b, key=lambda s: s.session)
            out.append(_qa("event_ordering", ph.fill(q["order_first"], noun1=noun(a.slot), v1=a.value,
                                                   noun2=noun(b.slot), v2=b.value), first.value, [a.dia_id, b.dia_id]))
        else:
            three = rng.sample(facts, 3)
            if len({s.session for s in three}) < 3 or len({s.value for s in three}) < 3:
                continue
            asked = {f"noun{i}": noun(s.slot) for i, s in enumerate(three, 1)}
            asked.update({f"v{i}": s.value for i, s in enumerate(three, 1)})
            ordered = sorted(three, key=lambda s: s.session)
            out.append(_qa("event_ordering", ph.fill(q["order_three"], **asked), ", ".join(s.value for s in ordered),
                           [s.dia_id for s in ordered]))


def _temporal(rng: random.Random, language: str, facts: Sequence[Any], dates: Sequence[datetime], count: int,
              out: list[dict]) -> None:
    q = ph.QUESTIONS[language]
    noun = lambda slot: SLOTS[slot].noun[language]  # noqa: E731
    for k in range(count):
        if k % 2 == 0:
            s = rng.choice(facts)
            out.append(_qa("temporal", ph.fill(q["when"], noun=noun(s.slot), value=s.value),
                           date_answer(dates[s.session], language), [s.dia_id], "dates"))
        else:
            a, b = sorted(rng.sample(facts, 2), key=lambda s: s.session)
            if a.session == b.session:
                continue
            days = (dates[b.session].date() - dates[a.session].date()).days
            out.append(_qa("temporal", ph.fill(q["gap"], noun1=noun(a.slot), v1=a.value, noun2=noun(b.slot),
                                             v2=b.value), ph.fill(q["gap_answer"], d=days), [a.dia_id, b.dia_id],
                           "dates"))
