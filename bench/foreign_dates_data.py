"""A LoCoMo-format file with its dates written in another language: are time cues read beyond English?

    python -m bench.foreign_dates_data --data ../shared/data/locomo/locomo_dev.json --language es --out /tmp/dev_es.json
    python -m bench.locomo --data /tmp/dev_es.json --budget 1024,256 --no-ablation --no-mem0

A held-out set translated into Spanish, German or Korean asks "¿Qué hizo Nate el 25 de mayo de 2022?", and its
sessions are dated "25 de mayo de 2022, 13:56". Nothing here can translate a whole conversation offline, so
this probe changes only the dates: every session date is written in the language, and in each question every
date, month, year and "N years ago" with the words around it ("on 8 May, 2023" → "el 8 de mayo de 2023", "in
July 2023" → "im Juli 2023", "4 years ago" → "4년 전"; Russian, Arabic, Hindi and Thai too: "25 мая 2022 года",
"٢٥ مايو ٢٠٢٢" in Arabic digits, "25 พฤษภาคม 2565" in the Buddhist era). The rest of each question stays English. So the
probe measures whether dates written in another language open the windows their English spelling opens — not
whether the rest of a question in that language is understood (``bench.multilingual_data`` asks that).
Written from a file the caller points to (nothing derived from ../shared/data is kept in the repo).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Callable

from lumina_memory.nodes.text.calendar.names import EN_MONTHS
from lumina_memory.nodes.text.calendar.stamps import read_when

_EN = "|".join(name.capitalize() for name in EN_MONTHS)
_EN_MONTHS = {m.lower(): i for i, m in enumerate(_EN.split("|"), 1)}
_COUNT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10}

# The probe's own month names, not the reader's (nodes/text/calendar/names.py): a
# probe that shared the reader's table would share its mistakes.
MONTHS: dict[str, tuple[str, ...]] = {
    "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
           "noviembre", "diciembre"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre"),
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
           "November", "Dezember"),
    "it": ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
           "ottobre", "novembre", "dicembre"),
    "pt": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
           "novembro", "dezembro"),
    "nl": ("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober",
           "november", "december"),
}
# Russian in the genitive (a day's month) and the prepositional ("в мае"); Arabic as Egypt and the Gulf write it;
# Thai years in the Buddhist era (2023 is 2566).
SCRIPT_MONTHS: dict[str, tuple[str, ...]] = {
    "ru": ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября",
           "ноября", "декабря"),
    "ru_in": ("январе", "феврале", "марте", "апреле", "мае", "июне", "июле", "августе", "сентябре", "октябре",
              "ноябре", "декабре"),
    "hi": ("जनवरी", "फ़रवरी", "मार्च", "अप्रैल", "मई", "जून", "जुलाई", "अगस्त", "सितंबर", "अक्टूबर", "नवंबर", "दिसंबर"),
    "ar": ("يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر", "نوفمبر",
           "ديسمبر"),
    "th": ("มกราคม", "กุมภาพันธ์", "มีนาคม", "เมษายน", "พฤษภาคม", "มิถุนายน", "กรกฎาคม", "สิงหาคม", "กันยายน",
           "ตุลาคม", "พฤศจิกายน", "ธันวาคม"),
}
LANGUAGES = (*MONTHS, "ko", "zh", "ru", "ar", "hi", "th")
_ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")  # Arabic is written with its own digits here


def _script(lang: str, d: datetime | None, month: int, year: int | None, on: bool = False) -> str:
    """A day (``d``) or a month of a year in Russian, Arabic, Hindi or Thai."""
    name = SCRIPT_MONTHS[lang][month - 1]
    if lang == "ru":
        if d is None:
            return f"в {SCRIPT_MONTHS['ru_in'][month - 1]}" + (f" {year} года" if year else "")
        return f"{d.day} {name} {d.year} года"
    if lang == "hi":
        if d is None:
            return f"{name} {year} में" if year else f"{name} में"
        return f"{d.day} {name} {d.year}" + (" को" if on else "")
    if lang == "ar":
        if d is None:
            return (f"في {name} {year}" if year else f"في {name}").translate(_ARABIC_DIGITS)
        return (("في " if on else "") + f"{d.day} {name} {d.year}").translate(_ARABIC_DIGITS)
    if d is None:
        return f"ในเดือน{name}" + (f" {year + 543}" if year else "")
    return ("วันที่ " if on else "") + f"{d.day} {name} {d.year + 543}"


def _m(lang: str, month: int) -> str:
    return MONTHS[lang][month - 1]


def _day_number(lang: str, day: int) -> str:
    return "1er" if lang == "fr" and day == 1 else str(day)


# A day as a question writes it: with its "on" (``on=True``) or after another word ("before", "of").
def spell_day(lang: str, d: datetime, on: bool) -> str:
    if lang in SCRIPT_MONTHS:
        return _script(lang, d, d.month, d.year, on)
    if lang == "ko":
        return f"{d.year}년 {d.month}월 {d.day}일" + ("에" if on else "")
    if lang == "zh":
        return f"{d.year}年{d.month}月{d.day}日"
    core = {
        "es": f"{d.day} de {_m(lang, d.month)} de {d.year}", "pt": f"{d.day} de {_m(lang, d.month)} de {d.year}",
        "de": f"{d.day}. {_m(lang, d.month)} {d.year}",
    }.get(lang, f"{_day_number(lang, d.day)} {_m(lang, d.month)} {d.year}")
    preposition = {"es": "el", "fr": "le", "de": "am", "it": "il", "pt": "em", "nl": "op"}[lang]
    return f"{preposition} {core}" if on else core


def spell_month(lang: str, month: int, year: int | None) -> str:
    """"in July 2023" / "in July" in ``lang``."""
    if lang in SCRIPT_MONTHS:
        return _script(lang, None, month, year)
    if lang == "ko":
        return (f"{year}년 " if year else "") + f"{month}월에"
    if lang == "zh":
        return (f"{year}年" if year else "") + f"{month}月"
    name = _m(lang, month)
    preposition = {"es": "en", "fr": "en", "de": "im", "it": "a", "pt": "em", "nl": "in"}[lang]
    if year is None:
        return f"{preposition} {name}"
    return f"{preposition} {name} de {year}" if lang in ("es", "pt") else f"{preposition} {name} {year}"


def spell_year(lang: str, year: int) -> str:
    if lang in SCRIPT_MONTHS:
        return {"ru": f"в {year} году", "hi": f"{year} में", "ar": f"في عام {year}".translate(_ARABIC_DIGITS),
                "th": f"ในปี {year + 543}"}[lang]
    return {"es": f"en {year}", "fr": f"en {year}", "de": f"im Jahr {year}", "it": f"nel {year}", "pt": f"em {year}",
            "nl": f"in {year}", "ko": f"{year}년에", "zh": f"{year}年"}[lang]


def spell_years_ago(lang: str, n: int) -> str:
    if lang in SCRIPT_MONTHS:
        russian = "год" if n % 10 == 1 and n % 100 != 11 else "года" if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14 else "лет"
        return {"ru": f"{n} {russian} назад", "hi": f"{n} साल पहले", "ar": f"قبل {n} سنوات".translate(_ARABIC_DIGITS),
                "th": f"{n} ปีที่แล้ว"}[lang]
    return {"es": f"hace {n} años", "fr": f"il y a {n} ans", "de": f"vor {n} Jahren", "it": f"{n} anni fa",
            "pt": f"há {n} anos", "nl": f"{n} jaar geleden", "ko": f"{n}년 전", "zh": f"{n}年前"}[lang]


def spell_session(lang: str, d: datetime) -> str:
    """A session's date-time as an app in ``lang`` writes it (each read by the harness: bench.locomo_data)."""
    hm = f"{d.hour}:{d.minute:02d}"
    h12, pm = d.hour % 12 or 12, d.hour >= 12
    if lang == "ko":
        return f"{d.year}년 {d.month}월 {d.day}일 {'오후' if pm else '오전'} {h12}:{d.minute:02d}"
    if lang == "zh":
        return f"{d.year}年{d.month}月{d.day}日 {'下午' if pm else '上午'}{h12}点{d.minute:02d}分"
    if lang in SCRIPT_MONTHS:
        name = SCRIPT_MONTHS[lang][d.month - 1]
        return {"ru": f"{d.day} {name} {d.year} г., {hm}", "hi": f"{d.day} {name} {d.year}, {hm}",
                "ar": f"{d.day} {name} {d.year}، {hm}".translate(_ARABIC_DIGITS),
                "th": f"{d.day} {name} {d.year + 543} เวลา {d.hour:02d}:{d.minute:02d} น."}[lang]
    name = _m(lang, d.month)
    return {
        "es": f"{d.day} de {name} de {d.year}, {hm}", "fr": f"{d.day} {name} {d.year} à {d.hour}h{d.minute:02d}",
        "de": f"{d.day}. {name} {d.year}, {hm}", "it": f"{d.day} {name} {d.year}, {hm}",
        "pt": f"{d.day} de {name} de {d.year} às {hm}", "nl": f"{d.day} {name} {d.year} om {hm}",
    }[lang]


_DAY = re.compile(rf"(?:\b(?P<on>on)\s+)?(?:(?P<d1>\d{{1,2}}) (?P<m1>{_EN}),? (?P<y1>\d{{4}})|"
                  rf"(?P<m2>{_EN}) (?P<d2>\d{{1,2}}),? (?P<y2>\d{{4}}))\b")
_MONTH = re.compile(rf"\b(?:in|during)\s+(?P<m>{_EN})(?:,? (?P<y>\d{{4}}))?\b")
_YEAR = re.compile(r"\bin\s+(?P<y>(?:19|20)\d\d)\b")
_AGO = re.compile(rf"\b(?P<n>\d+|{'|'.join(_COUNT_WORDS)})\s+years?\s+ago\b", re.IGNORECASE)


def translate_question(question: str, lang: str) -> str:
    """``question`` with each date, month, year and "N years ago" it names written in ``lang``."""

    def day(m: re.Match) -> str:
        month = _EN_MONTHS[(m["m1"] or m["m2"]).lower()]
        try:
            when = datetime(int(m["y1"] or m["y2"]), month, int(m["d1"] or m["d2"]))
        except ValueError:
            return m.group(0)
        return spell_day(lang, when, on=bool(m["on"]))

    def month(m: re.Match) -> str:
        return spell_month(lang, _EN_MONTHS[m["m"].lower()], int(m["y"]) if m["y"] else None)

    def ago(m: re.Match) -> str:
        n = m["n"].lower()
        return spell_years_ago(lang, int(n) if n.isdigit() else _COUNT_WORDS[n])

    steps: tuple[tuple[re.Pattern, Callable[[re.Match], str]], ...] = (
        (_DAY, day), (_MONTH, month), (_YEAR, lambda m: spell_year(lang, int(m["y"]))), (_AGO, ago))
    # Each step reads only what no step before it wrote: what it writes holds no English month or "in".
    for pattern, write in steps:
        question = pattern.sub(write, question)
    return question


def translated(samples: list[dict], lang: str) -> list[dict]:
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; one of {', '.join(LANGUAGES)}")
    out = copy.deepcopy(samples)
    for sample in out:
        conv = sample.get("conversation", {})
        for key in [k for k in conv if re.fullmatch(r"session_\d+_date_time", k)]:
            if (when := read_when(conv[key])) is not None:
                conv[key] = spell_session(lang, when)
        for qa in sample.get("qa", []):
            qa["question"] = translate_question(qa["question"], lang)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--language", required=True, choices=LANGUAGES)
    parser.add_argument("--out", required=True, help="where to write the file")
    args = parser.parse_args(argv)
    samples = json.loads(Path(args.data).read_text(encoding="utf-8"))
    out = translated(samples, args.language)
    changed = sum(a["question"] != b["question"] for s, t in zip(samples, out) for a, b in zip(s["qa"], t["qa"]))
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{args.out}: {len(out)} conversations, {changed} questions with their dates in {args.language}, every "
          f"session date in {args.language}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
