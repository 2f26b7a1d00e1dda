"""The knowledge benchmark's report as Markdown (bench/results/knowledge.md) and its RESULT lines."""

from __future__ import annotations

from typing import Any

LANGUAGE_NAMES = {"ja": "Japanese", "en": "English"}


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def _met(check: dict[str, Any]) -> str:
    if check["met"] is None:
        return "not measured"
    return "**met**" if check["met"] else "**not met**"


def _targets(report: dict[str, Any]) -> list[str]:
    lines = ["## Targets (issue 18, offline)", "",
             "| language | current-fact precision (≥ 0.9) | current-fact recall (≥ 0.8) | over-invalidation (≤ 2 %) |",
             "|---|---|---|---|"]
    for lang, r in report["languages"].items():
        t = r["targets"]
        lines.append(f"| {LANGUAGE_NAMES.get(lang, lang)} | {_f(t['precision']['value'])} {_met(t['precision'])} | "
                     f"{_f(t['recall']['value'])} {_met(t['recall'])} | "
                     f"{_pct(t['over_invalidation']['value'])} {_met(t['over_invalidation'])} |")
    return lines


def _figure_rows(r: dict[str, Any]) -> list[tuple[str, str]]:
    c, o, s, ro, p, e, d = (r[k] for k in ("current_facts", "over_invalidation", "superseded", "recall_order",
                                             "past_questions", "evidence_recall", "distractors"))
    fp = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c["false_positives"].items())
    miss = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c["misses"].items())
    sup, neg = s["by_how"]["supersede"], s["by_how"]["negate"]
    kinds = ", ".join(f"{k} {v['false_positives']}/{v['n']}" for k, v in d["by_kind"].items())
    return [
        ("stories / turns", f"{r['stories']} / {r['turns']}"),
        ("current facts: found / gold (recall)", f"{c['found']} / {c['gold']} ({_f(c['recall'])})"),
        ("current facts: correct / extracted (precision)", f"{c['correct']} / {c['judged']} ({_f(c['precision'])})"
         + (f"; not judged: {c['not_judged']['pet_species']} pet species" if c["not_judged"]["pet_species"] else "")),
        ("precision without attributes outside the stories' vocabulary", _f(c["precision_in_vocabulary"])),
        ("false positives by kind", fp),
        ("misses by kind", miss),
        ("duplicate current items of one fact", str(c["duplicates"])),
        ("accumulating facts: over-invalidated / stored (rate)",
         f"{o['over_invalidated']} / {o['stored']} ({_pct(o['rate'])}); {o['not_extracted']} of {o['accumulating']} never stored"),
        ("superseded facts stored as superseded / gold",
         f"{s['stored_superseded']} / {s['gold']} ({_f(s['share_stored_superseded'])}); still current "
         f"{s['still_current']}, never stored {s['not_extracted']}; of those stored {_f(s['share_of_stored'])}"),
        ("… replaced by a new value / taken back (negated)",
         f"{sup['stored_superseded']} / {sup['gold']} · {neg['stored_superseded']} / {neg['gold']}"),
        ("… the ended item points at its successor", f"{s['linked_to_successor']} / {s['link_checked']}"),
        ("current-tense questions: old value ranked below the current one, knowledge on",
         f"{ro['on']['below']} / {ro['n']} ({_f(ro['on']['share_below'])}); current one not recalled "
         f"{ro['on']['successor_missing']}, old value not recalled {ro['on']['old_absent']}"),
        ("… knowledge off (episodes only)",
         f"{ro['off']['below']} / {ro['n']} ({_f(ro['off']['share_below'])}); current one not recalled "
         f"{ro['off']['successor_missing']}"),
        ("past-tense questions: old value reached, on / off",
         f"{p['on']['reached']} / {p['n']} ({_f(p['on']['share_reached'])}) · {p['off']['reached']} / {p['n']} "
         f"({_f(p['off']['share_reached'])})"),
        ("… old value ahead of the current one, on / off",
         f"{_f(p['on']['share_old_first'])} · {_f(p['off']['share_old_first'])}"),
        ("questions' evidence recall@B, on / off (current · past)",
         f"{_f(e['on']['recall'])} / {_f(e['off']['recall'])} ({_f(e['by_tense']['current']['on']['recall'])} / "
         f"{_f(e['by_tense']['current']['off']['recall'])} · {_f(e['by_tense']['past']['on']['recall'])} / "
         f"{_f(e['by_tense']['past']['off']['recall'])})"),
        ("distractors taken as a current user fact", f"{d['false_positives']} / {d['n']} ({_pct(d['rate'])}): {kinds}"),
    ]


def _figures(report: dict[str, Any]) -> list[str]:
    langs = list(report["languages"])
    rows = {lang: dict(_figure_rows(report["languages"][lang])) for lang in langs}
    lines = ["## Figures", "", "| | " + " | ".join(LANGUAGE_NAMES.get(l, l) for l in langs) + " |",
             "|---|" + "---|" * len(langs)]
    for label in rows[langs[0]]:
        lines.append(f"| {label} | " + " | ".join(rows[lang][label] for lang in langs) + " |")
    return lines


def _attributes(report: dict[str, Any]) -> list[str]:
    lines = ["## Per attribute", ""]
    for lang, r in report["languages"].items():
        lines += [f"{LANGUAGE_NAMES.get(lang, lang)}:", "",
                  "| attribute | found / gold | recall | correct / extracted | precision | over-invalidated | "
                  "stored superseded / gold | old below current (on) |",
                  "|---|---|---|---|---|---|---|---|"]
        for attribute, a in r["by_attribute"].items():
            lines.append(f"| {attribute} | {a['found']} / {a['gold']} | {_f(a['recall'])} | {a['correct']} / "
                         f"{a['extracted']} | {_f(a['precision'])} | {a['over_invalidated']} | "
                         f"{a['stored_superseded']} / {a['superseded']} | {a['below']} / {a['order_pairs']} |")
        lines.append("")
    return lines


def _worst(report: dict[str, Any]) -> list[str]:
    lines = ["## Worst misses (grouped, most frequent first)", ""]
    for lang, r in report["languages"].items():
        lines += [f"### {LANGUAGE_NAMES.get(lang, lang)}", ""]
        if not r["worst"]:
            lines += ["(none)", ""]
        for n, group in enumerate(r["worst"], 1):
            lines.append(f"{n}. **{group['kind']}** — `{group['attribute']}` × {group['count']}")
            for ex in group["examples"]:
                where = f"{ex['story_id']} {ex['turn_id']}".strip()
                got = "; ".join(ex["got"])
                lines.append(f"   - {where}: “{ex['sentence']}” — expected {ex['expected']}; got {got}")
        lines.append("")
    return lines


def _locomo(report: dict[str, Any]) -> list[str]:
    lo = report.get("locomo")
    if not lo:
        return ["## LoCoMo", "", "Not run (no LoCoMo file given)."]
    k = lo["knowledge_items"]
    lines = ["## LoCoMo: deliberate recall with knowledge on vs off (same run, same query vectors)", "",
             f"{lo['data']}: {len(lo['conversations'])} conversations, {lo['questions']} questions; knowledge "
             f"learnt: {k['items']} items ({k['current']} current, {k['superseded']} superseded); by attribute "
             + ", ".join(f"{a} {n}" for a, n in sorted(k["by_attribute"].items(), key=lambda kv: -kv[1])), "",
             "| questions | B | n | recall on | recall off | Δ recall | hit on | hit off | not lower |",
             "|---|---|---|---|---|---|---|---|---|"]
    for sub, per in lo["results"].items():
        for budget, r in per.items():
            on, off = r["on"], r["off"]
            delta = "—" if r["recall_delta"] is None else f"{r['recall_delta']:+.4f}"
            lines.append(f"| {sub.replace('_', ' ')} | {budget} | {on['n']} | {_f(on['recall'], 4)} | "
                         f"{_f(off['recall'], 4)} | {delta} | {_f(on['hit'], 4)} | {_f(off['hit'], 4)} | "
                         f"{_f(r['not_lower'])} |")
    return lines


def render(report: dict[str, Any]) -> str:
    code = report["code"]
    dirty = f" with uncommitted edits in {', '.join(code['uncommitted'])}" if code["uncommitted"] else ""
    t = report["timing"]
    lines = [
        "# Knowledge benchmark (issue 18)", "",
        f"`{report['command']}` — {report['date']}, {report['machine']}, commit {code['commit']}{dirty}.",
        f"Data: {report['data']} ({report['stories']} stories); replayed through the real graph on the embedded "
        f"defaults, offline; recall budget {report['budget']} tokens. Ingest {t['turns']} turns in "
        f"{t['ingest_seconds']} s; {t['recalls']} recalls in {t['recall_seconds']} s; whole run {t['seconds']} s; "
        f"peak RSS {report['peak_rss_mb']} MB.", "",
        "Matching (bench/knowledge_match.py): same attribute (gold works_at = stored works_at or job; gold pet_age = "
        "stored age of the user's pet), values compared after NFKC/lower-case/punctuation and emoji removal — "
        "numbers exactly, English as a run of whole words either way (final plural s ignored), Japanese as a "
        "substring either way (≥ 2 characters); aliases count. Only positive items about the user are facts; a "
        "pet item holding a species (「うち猫飼ってるの」) is not judged (the gold names pets only).", "",
    ]
    lines += _targets(report) + [""] + _figures(report) + [""] + _attributes(report) + _worst(report) + _locomo(report)
    return "\n".join(lines)


def result_lines(report: dict[str, Any]) -> list[str]:
    out = []
    for lang, r in report["languages"].items():
        t = r["targets"]
        out.append(f"RESULT {lang} precision={_f(t['precision']['value'], 4)} recall={_f(t['recall']['value'], 4)} "
                   f"over_invalidation={_f(t['over_invalidation']['value'], 4)} "
                   f"below={_f(r['recall_order']['on']['share_below'], 4)}")
    lo = report.get("locomo")
    if lo:
        first = lo["results"]["all"][str(lo["budgets"][0])]
        out.append(f"LOCOMO knowledge_on={_f(first['on']['recall'], 4)} knowledge_off={_f(first['off']['recall'], 4)} "
                   f"delta={first['recall_delta']:+.4f}")
    return out
