"""The knowledge benchmark's figures per language: the stories' judgements (``bench.knowledge_score``) added up,
per attribute, the targets of issue 18 with met / not met, and the misses grouped by what went wrong (the most
frequent first, with a few examples each) for the extractor's authors."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

TARGETS = {"precision": 0.9, "recall": 0.8, "over_invalidation": 0.02}  # issue 18, "Measured"
EXAMPLES_PER_GROUP = 3


def ratio(part: int | float, whole: int | float) -> float | None:
    return round(part / whole, 4) if whole else None


def _count(rows: Iterable[dict[str, Any]], key: str) -> Counter:
    return Counter(r[key] for r in rows)


def current_facts(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    extracted = [e for s in scored for e in s["extracted"]]
    gold = [c for s in scored for c in s["current"]]
    verdicts, outcomes = _count(extracted, "verdict"), _count(gold, "outcome")
    correct, found = verdicts["correct"], outcomes["found"]
    judged = len(extracted) - verdicts["pet_species"]  # a species kept is neither right nor wrong against the gold
    in_vocabulary = judged - verdicts["outside_vocabulary"]
    return {
        "gold": len(gold), "found": found, "recall": ratio(found, len(gold)),
        "extracted": len(extracted), "not_judged": {"pet_species": verdicts["pet_species"]}, "judged": judged,
        "correct": correct, "precision": ratio(correct, judged),
        "precision_in_vocabulary": ratio(correct, in_vocabulary),
        "duplicates": sum(e["duplicate"] for e in extracted),
        "false_positives": {k: verdicts[k] for k in
                            ("stale", "distractor", "wrong_attribute", "outside_vocabulary", "unsupported")},
        "misses": {k: outcomes[k] for k in ("not_extracted", "ended", "wrong_attribute")},
    }


def over_invalidation(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rows = [a for s in scored for a in s["accumulating"]]
    outcomes = _count(rows, "outcome")
    stored = outcomes["kept"] + outcomes["over_invalidated"]
    return {"accumulating": len(rows), "stored": stored, "kept": outcomes["kept"],
            "over_invalidated": outcomes["over_invalidated"], "not_extracted": outcomes["not_extracted"],
            "rate": ratio(outcomes["over_invalidated"], stored),
            "rate_of_all": ratio(outcomes["over_invalidated"], len(rows))}


def superseded(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for s in scored for r in s["superseded"]]

    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        outcomes = _count(rows, "outcome")
        stored = outcomes["stored_superseded"] + outcomes["still_current"]
        links = [r["linked"] for r in rows if r["linked"] is not None]
        return {"gold": len(rows), "stored_superseded": outcomes["stored_superseded"],
                "still_current": outcomes["still_current"], "not_extracted": outcomes["not_extracted"],
                "share_stored_superseded": ratio(outcomes["stored_superseded"], len(rows)),
                "share_of_stored": ratio(outcomes["stored_superseded"], stored),
                "linked_to_successor": sum(links), "link_checked": len(links)}

    out = block(rows)
    out["by_how"] = {how: block([r for r in rows if r["how"] == how]) for how in ("supersede", "negate")}
    return out


def _switches(rows: list[dict[str, Any]], flags: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for switch in ("on", "off"):
        out[switch] = {flag: sum(r[switch][flag] for r in rows) for flag in flags}
        out[switch].update({f"share_{flag}": ratio(out[switch][flag], len(rows)) for flag in flags})
    return out


def recall_order(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for s in scored for r in s["order"]]
    out = _switches(rows, ("below",))
    for switch in ("on", "off"):
        out[switch]["successor_missing"] = sum(r[switch]["new_at"] is None for r in rows)
        out[switch]["old_absent"] = sum(r[switch]["old_at"] is None for r in rows)
    return out


def past_questions(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return _switches([r for s in scored for r in s["past"]], ("reached", "old_first"))


def evidence_recall(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for s in scored for r in s["evidence"]]

    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(rows)}
        for switch in ("on", "off"):
            out[switch] = {"recall": ratio(sum(r[switch]["recall"] for r in rows), len(rows)),
                           "hit": ratio(sum(r[switch]["hit"] for r in rows), len(rows))}
        return out

    out = block(rows)
    out["by_tense"] = {tense: block([r for r in rows if r["tense"] == tense]) for tense in ("current", "past")}
    return out


def distractors(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rows = [d for s in scored for d in s["distractors"]]
    kinds = sorted({d["kind"] for d in rows})
    return {"n": len(rows), "false_positives": sum(d["false_positive"] for d in rows),
            "rate": ratio(sum(d["false_positive"] for d in rows), len(rows)),
            "by_kind": {k: {"n": sum(d["kind"] == k for d in rows),
                            "false_positives": sum(d["false_positive"] for d in rows if d["kind"] == k)}
                        for k in kinds}}


def by_attribute(scored: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    table: dict[str, Counter] = defaultdict(Counter)
    for s in scored:
        for e in s["extracted"]:
            table[e["attribute"]]["extracted"] += e["verdict"] != "pet_species"  # judged ones, as in the precision
            table[e["attribute"]]["correct"] += e["verdict"] == "correct"
        for c in s["current"]:
            table[c["attribute"]]["gold"] += 1
            table[c["attribute"]]["found"] += c["outcome"] == "found"
        for a in s["accumulating"]:
            table[a["attribute"]]["over_invalidated"] += a["outcome"] == "over_invalidated"
        for r in s["superseded"]:
            table[r["attribute"]]["superseded"] += 1
            table[r["attribute"]]["stored_superseded"] += r["outcome"] == "stored_superseded"
        for r in s["order"]:
            table[r["attribute"]]["order_pairs"] += 1
            table[r["attribute"]]["below"] += r["on"]["below"]
    out = {}
    for attribute in sorted(table):
        c = table[attribute]
        out[attribute] = {**{k: c[k] for k in ("gold", "found", "extracted", "correct", "over_invalidated",
                                               "superseded", "stored_superseded", "order_pairs", "below")},
                          "precision": ratio(c["correct"], c["extracted"]), "recall": ratio(c["found"], c["gold"])}
    return out


def failures(scored: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every miss as one row: what kind, which attribute, the sentence, what was expected and what was stored."""
    out = []
    for s in scored:
        sid = s["story_id"]
        for c in s["current"]:
            if c["outcome"] != "found":
                out.append({"kind": f"current fact {c['outcome'].replace('_', ' ')}", "attribute": c["attribute"],
                            "story_id": sid, "turn_id": c["turn_ids"][0], "sentence": c["sentence"],
                            "expected": f"{c['attribute']}={c['value']} (current)", "got": c["got"] or ["nothing"]})
        for e in s["extracted"]:
            if e["verdict"] not in ("correct", "pet_species"):
                out.append({"kind": f"false positive ({e['verdict'].replace('_', ' ')})", "attribute": e["attribute"],
                            "story_id": sid, "turn_id": (e["turn_ids"] or [""])[0], "sentence": e["sentence"],
                            "expected": "no current user fact", "got": [f"{e['stored_attribute']}={e['value']}"]})
        for a in s["accumulating"]:
            if a["outcome"] == "over_invalidated":
                out.append({"kind": "over-invalidated", "attribute": a["attribute"], "story_id": sid,
                            "turn_id": a["turn_ids"][0], "sentence": a["sentence"],
                            "expected": f"{a['attribute']}={a['value']} stays current", "got": a["ended_by"] or ["ended"]})
        for r in s["superseded"]:
            if r["outcome"] == "still_current":
                out.append({"kind": f"old value still current ({r['how']})", "attribute": r["attribute"],
                            "story_id": sid, "turn_id": r["ended_by"], "sentence": r["sentence"],
                            "expected": f"{r['attribute']}={r['value']} ended"
                                        + (f" by {r['superseded_by']}" if r["superseded_by"] else ""),
                            "got": r["got"]})
        for d in s["distractors"]:
            if d["false_positive"]:
                out.append({"kind": f"distractor taken ({d['kind']})", "attribute": d["attribute"], "story_id": sid,
                            "turn_id": d["turn_ids"][0], "sentence": d["sentence"],
                            "expected": f"nothing about the user ({d['subject']})", "got": d["got"]})
        for r in s["order"]:
            if not r["on"]["below"]:
                out.append({"kind": "old value not ranked below the current one", "attribute": r["attribute"],
                            "story_id": sid, "turn_id": "", "sentence": r["question"],
                            "expected": f"{r['new']} before {r['old']}",
                            "got": [f"{r['new']} at {r['on']['new_at']}, {r['old']} at {r['on']['old_at']}"]})
        for r in s["past"]:
            if not r["on"]["reached"]:
                out.append({"kind": "past question misses the old value", "attribute": r["attribute"],
                            "story_id": sid, "turn_id": "", "sentence": r["question"],
                            "expected": f"{r['answer']} recalled", "got": ["not in the recalled items"]})
    return out


def worst(rows: Sequence[dict[str, Any]], groups: int = 10) -> list[dict[str, Any]]:
    """Failures grouped by (kind, attribute), the most frequent first, with a few examples each."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[(row["kind"], row["attribute"])].append(row)
    ranked = sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [{"kind": kind, "attribute": attribute, "count": len(items),
             "examples": [{k: r[k] for k in ("story_id", "turn_id", "sentence", "expected", "got")}
                          for r in items[:EXAMPLES_PER_GROUP]]}
            for (kind, attribute), items in ranked[:groups]]


def targets(current: dict[str, Any], invalidation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    def check(value: float | None, target: float, at_most: bool = False) -> dict[str, Any]:
        met = None if value is None else value <= target if at_most else value >= target  # None: nothing measured
        return {"value": value, "target": target, "at_most": at_most, "met": met}

    return {"precision": check(current["precision"], TARGETS["precision"]),
            "recall": check(current["recall"], TARGETS["recall"]),
            "over_invalidation": check(invalidation["rate"], TARGETS["over_invalidation"], at_most=True)}


def language_report(scored: Sequence[dict[str, Any]], worst_groups: int = 15) -> dict[str, Any]:
    current, invalidation = current_facts(scored), over_invalidation(scored)
    every_failure = failures(scored)
    return {
        "stories": len(scored), "turns": sum(s["turns"] for s in scored),
        "targets": targets(current, invalidation),
        "current_facts": current, "over_invalidation": invalidation, "superseded": superseded(scored),
        "recall_order": recall_order(scored), "past_questions": past_questions(scored),
        "evidence_recall": evidence_recall(scored), "distractors": distractors(scored),
        "by_attribute": by_attribute(scored), "worst": worst(every_failure, worst_groups),
        "failures": every_failure,
    }
