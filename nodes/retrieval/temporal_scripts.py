"""Arabic, Hindi, Thai and Russian time words rewritten into the English the cue finders read: relative times
("الأسبوع الماضي", "पिछले महीने", "3 วันที่แล้ว", "в прошлом году" → "last week", "last month", "3 days ago",
"last year") and named days and months, in their own digits too ("8 мая 2023", "८ मई २०२३", "٨ مايو", "в мае",
"मई में", "في شهر مايو", "8 พ.ค. 2566" with Thai's Buddhist-era year → "8 may 2023", "in may")."""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

from lumina_memory.nodes.text.calendar.names import (NATIVE_DIGITS, SCRIPT_WEEKDAY_NAMES, script_months,
                                                     script_weekdays)

from .temporal_patterns import alternation, rewrite

# Arabic, Hindi, Thai and Russian: the relative times (their holidays are not read); their months below. Hindi "कल"
# is yesterday and tomorrow, "परसों" the day before yesterday and after tomorrow: not read.
_SCRIPT_PHRASES: dict[str, tuple[str, ...]] = {
    "the day before yesterday": ("أول أمس", "أول البارحة", "позавчера"),
    "yesterday": ("أمس", "البارحة", "เมื่อวานนี้", "เมื่อวาน", "вчера"),
    "today": ("आज", "วันนี้", "сегодня"),  # not Arabic اليوم: it is "the day" as well
    "tomorrow": ("غدا", "غدًا", "พรุ่งนี้", "завтра"),
    "last weekend": ("عطلة نهاية الأسبوع الماضية", "पिछले सप्ताहांत", "สุดสัปดาห์ที่แล้ว", "в прошлые выходные"),
    "last week": ("الأسبوع الماضي", "الاسبوع الماضي", "पिछले हफ्ते", "पिछले हफ़्ते", "पिछले सप्ताह", "สัปดาห์ที่แล้ว",
                  "อาทิตย์ที่แล้ว", "на прошлой неделе", "прошлой неделе"),
    "last month": ("الشهر الماضي", "पिछले महीने", "เดือนที่แล้ว", "เดือนก่อน", "в прошлом месяце"),
    "last year": ("العام الماضي", "السنة الماضية", "العام المنصرم", "पिछले साल", "पिछले वर्ष", "ปีที่แล้ว", "ปีก่อน",
                  "ปีที่ผ่านมา", "в прошлом году"),
    "this week": ("هذا الأسبوع", "इस हफ्ते", "इस हफ़्ते", "इस सप्ताह", "สัปดาห์นี้", "อาทิตย์นี้", "на этой неделе"),
    "this month": ("هذا الشهر", "इस महीने", "เดือนนี้", "в этом месяце"),
    "this year": ("هذا العام", "هذه السنة", "इस साल", "इस वर्ष", "ปีนี้", "в этом году"),
    "next week": ("الأسبوع القادم", "الأسبوع المقبل", "अगले हफ्ते", "अगले हफ़्ते", "अगले सप्ताह", "สัปดาห์หน้า",
                  "อาทิตย์หน้า", "на следующей неделе"),
    "next month": ("الشهر القادم", "الشهر المقبل", "अगले महीने", "เดือนหน้า", "в следующем месяце"),
    "next year": ("العام القادم", "العام المقبل", "السنة القادمة", "अगले साल", "अगले वर्ष", "ปีหน้า", "в следующем году"),
    # Holidays, as temporal_holidays reads them in English; not Russian Рождество (the Orthodox one is on 7 January).
    "christmas eve": ("ليلة عيد الميلاد", "क्रिसमस ईव", "คริสต์มาสอีฟ"),
    "christmas": ("الكريسماس", "كريسماس", "عيد الميلاد المجيد", "क्रिसमस", "คริสต์มาส"),
    "halloween": ("الهالوين", "هالوين", "हैलोवीन", "हेलोवीन", "ฮาโลวีน", "ฮัลโลวีน", "хэллоуин", "хеллоуин"),
    "valentine's day": ("عيد الحب", "वैलेंटाइन डे", "वेलेंटाइन डे", "วันวาเลนไทน์", "день святого валентина",
                        "день валентина"),
    "new year's eve": ("ليلة رأس السنة", "คืนข้ามปี", "канун нового года"),
    "new year's day": ("رأس السنة", "วันขึ้นปีใหม่", "на новый год", "новый год"),
}
# As ``normalise`` has made the text: NFKC (Thai ำ is two characters there) and lower case.
_SCRIPT_ENGLISH = {unicodedata.normalize("NFKC", phrase).lower(): english
                   for english, phrases in _SCRIPT_PHRASES.items() for phrase in phrases}
_SCRIPT_UNITS = {unicodedata.normalize("NFKC", unit): english for unit, english in {
    **dict.fromkeys(("يوم", "أيام", "ايام", "दिन", "วัน", "день", "дня", "дней"), "day"),
    **dict.fromkeys(("أسبوع", "أسابيع", "اسبوع", "اسابيع", "हफ्ते", "हफ़्ते", "सप्ताह", "สัปดาห์", "อาทิตย์", "неделю",
                     "недели", "недель"), "week"),
    **dict.fromkeys(("شهر", "أشهر", "اشهر", "شهور", "महीने", "महीना", "เดือน", "месяц", "месяца", "месяцев"), "month"),
    **dict.fromkeys(("سنة", "سنوات", "سنين", "عام", "أعوام", "साल", "वर्ष", "ปี", "год", "года", "лет"), "year"),
}.items()}
_SCRIPT_WEEKDAYS = {lang: script_weekdays(lang) for lang in SCRIPT_WEEKDAY_NAMES}
_SCRIPT_DAY_MONTHS = script_months("ru_day", "hi", "ar", "th")
_SCRIPT_IN_MONTHS = script_months("ru_in")
_SCRIPT_YEAR_MONTHS = script_months("ru_day", "ru_year", "hi", "ar", "th")
_THAI_MONTHS = script_months("th")
_SCRIPTS = re.compile(r"[\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f\u0400-\u04ff]")
_THAI = re.compile(r"[\u0e00-\u0e7f]")
# The letters and marks of Arabic, Devanagari and Cyrillic words (not ؟ ، ؛ or the danda: they end a word).
_SPACED_LETTER = r"[\u0621-\u065f\u066e-\u06d3\u0900-\u0963\u0966-\u097f\u0400-\u04ff]"


def _script_ago(m: re.Match) -> str:
    number, unit = int(m["n"]), _SCRIPT_UNITS[m["u"]]
    return f" {number} {unit}{'s' if number != 1 else ''} ago "


def _thai_year(m: re.Match) -> str:
    """A year after a Thai month: Buddhist era (2566, or 66 after an abbreviation) unless ค.ศ. says Common Era."""
    month, year = m["m"] or m["m2"], int(m["y"] or m["y2"])
    if m["ce"]:
        return f"{month} {year}"
    year = year + 2500 if year < 100 else year
    return f"{month} {year - 543 if year >= 2400 else year}"


def _weekday(lang: str) -> Callable[[re.Match], str]:
    def english(m: re.Match) -> str:
        groups = m.groupdict()
        which = "last" if groups.get("p") else "next" if groups.get("n") else "this" if groups.get("t") else "on"
        return f" {which} {_SCRIPT_WEEKDAYS[lang][m['w']]} "
    return english


def _weekday_rules(edge_before: str, edge_after: str) -> list[Callable[[str], str]]:
    ru, hi, ar, th = (alternation(_SCRIPT_WEEKDAYS[lang]) for lang in ("ru", "hi", "ar", "th"))
    ar_last, ar_next = r"الماضي|الماضية|الفائت|الفائتة", r"القادم|القادمة|المقبل|المقبلة"
    # Each language's ways to point at a weekday, one rule each; what a rule writes is English, so no later one
    # reads it again.
    return [
        rewrite(rf"{edge_before}во?\s+(?:(?P<p>прошл(?:ый|ую|ое))\s+|(?P<n>следующ(?:ий|ую|ее))\s+|(?P<t>эт(?:от|у|о))\s+)?"
             rf"(?P<w>{ru}){edge_after}", _weekday("ru")),
        rewrite(rf"{edge_before}(?:(?P<p>पिछले)|(?P<n>अगले)|(?P<t>इस))\s+(?P<w>{hi})(?:\s+को)?{edge_after}", _weekday("hi")),
        rewrite(rf"{edge_before}(?P<w>{hi})\s+को{edge_after}", _weekday("hi")),
        rewrite(rf"{edge_before}يوم\s+(?P<w>{ar})(?:\s+(?:(?P<p>{ar_last})|(?P<n>{ar_next})))?{edge_after}", _weekday("ar")),
        rewrite(rf"{edge_before}(?P<w>{ar})\s+(?:(?P<p>{ar_last})|(?P<n>{ar_next})){edge_after}", _weekday("ar")),
        rewrite(rf"(?P<w>{th})(?:\s*(?P<p>ที่แล้ว|ก่อน)|\s*(?P<n>หน้า)|\s*(?P<t>นี้))?", _weekday("th")),
    ]


def _hindi_in(m: re.Match) -> str:
    """"मई में" (in May), "मार्च 2022 में", "2023 में": the month, the year or both; anything else "में" follows stays."""
    if not (m["m"] or m["y"]):
        return m.group()
    month = _SCRIPT_DAY_MONTHS[m["m"]] if m["m"] else ""
    return f" in {month} {m['y'] or ''} "


def _script_day(m: re.Match) -> str:
    month = _SCRIPT_DAY_MONTHS[m["m"]]
    if m["d1"]:  # "с 11 по 15 августа", "11-15 สิงหาคม": the stretch temporal_ranges reads
        return f" {int(m['d1'])} to {int(m['d'])} {month}{' ' + m['y'] if m['y'] else ''} "
    if m["y"]:
        return f" {int(m['d'])} {month} {m['y']} "
    return f" on {int(m['d'])} {month} "


def _script_rules() -> list[Callable[[str], str]]:
    units = "|".join(sorted(_SCRIPT_UNITS, key=len, reverse=True))
    day_months, year_months = alternation(_SCRIPT_DAY_MONTHS), alternation(_SCRIPT_YEAR_MONTHS)
    thai = [p for p in _SCRIPT_ENGLISH if _THAI.search(p)]
    spaced = [p for p in _SCRIPT_ENGLISH if p not in thai]
    # Arabic, Hindi and Russian write words apart, so a phrase is one only as whole words (आज is not inside
    # आजकल, "nowadays"); Thai writes none apart.
    edge_before, edge_after = rf"(?<!{_SPACED_LETTER})", rf"(?!{_SPACED_LETTER})"
    # A month's name is a time only with a day before it, a year after it or its language's "in": Russian март and
    # Hindi मई alone are words of a sentence about the month, and Arabic نيسان is a car as well.
    return [
        # "พ.ค. 66": two digits only after an abbreviation ("8 พฤษภาคม 10 โมง" is ten o'clock)
        rewrite(rf"(?:(?P<m>{alternation(_THAI_MONTHS)})\s*(?:(?P<ce>ค\.ศ\.)|พ\.ศ\.)?\s*(?P<y>\d{{4}})"
             rf"|(?P<m2>{alternation(n for n in _THAI_MONTHS if n.endswith('.'))})\s*(?P<y2>\d{{2}}))(?!\d)", _thai_year),
        rewrite(rf"(?:(?P<d1>\d{{1,2}})\s*(?:-|–|по|до|से|ถึง)\s*)?(?P<d>\d{{1,2}})\s*(?P<m>{day_months})"
             rf"(?:\s*(?P<y>(?:19|20)\d{{2}})(?!\d)(?:\s*(?:года|году|г\.))?)?{edge_after}", _script_day),
        rewrite(rf"{edge_before}(?:(?P<m>{alternation(script_months('hi'))})\s*)?(?P<y>(?:19|20)\d{{2}})?\s*(?<=\S)\s+में{edge_after}",
             _hindi_in),
        rewrite(rf"{edge_before}(?P<m>{year_months})\s*(?P<y>(?:19|20)\d{{2}})(?!\d)(?:\s*(?:года|году|г\.))?",
             lambda m: f" {_SCRIPT_YEAR_MONTHS[m['m']]} {m['y']} "),
        rewrite(rf"{edge_before}в\s+(?P<m>{alternation(_SCRIPT_IN_MONTHS)}){edge_after}",
             lambda m: f" in {_SCRIPT_IN_MONTHS[m['m']]} "),
        rewrite(rf"{edge_before}(?:في|خلال)\s+(?:شهر\s+)?(?P<m>{alternation(script_months('ar'))}){edge_after}",
             lambda m: f" in {_SCRIPT_DAY_MONTHS[m['m']]} "),
        rewrite(rf"(?:ใน)?เดือน\s*(?P<m>{alternation(_THAI_MONTHS)})", lambda m: f" in {_THAI_MONTHS[m['m']]} "),
        # a year: "в 2023 году", "في عام ٢٠٢٣", "ในปี 2566" (Hindi's "2023 में" is read with its month above)
        rewrite(rf"{edge_before}в\s+(?P<y>(?:19|20)\d{{2}})\s*(?:году|г\.)", lambda m: f" in {m['y']} "),
        rewrite(rf"{edge_before}(?:في|خلال)\s+(?:(?:عام|سنة)\s+)?(?P<y>(?:19|20)\d{{2}})(?!\d)", lambda m: f" in {m['y']} "),
        rewrite(r"(?:ใน)?ปี\s*(?:(?P<ce>ค\.ศ\.)|พ\.ศ\.)?\s*(?P<y>\d{4})(?!\d)",
             lambda m: f" in {int(m['y']) - (0 if m['ce'] or int(m['y']) < 2400 else 543)} "),
        *_weekday_rules(edge_before, edge_after),
        # قبل 3 أيام / منذ 3 أيام, 3 दिन पहले, 3 วันที่แล้ว / 3 วันก่อน, 3 дня назад (spaced: Thai writes no spaces)
        rewrite(rf"{edge_before}(?:قبل|منذ)\s*(?P<n>\d{{1,3}})\s*(?P<u>{units}){edge_after}", _script_ago),
        rewrite(rf"(?P<n>\d{{1,3}})\s*(?P<u>{units})\s*(?:(?:पहले|назад){edge_after}|ที่แล้ว|ก่อน)", _script_ago),
        rewrite(rf"{edge_before}(?:{'|'.join(sorted(map(re.escape, spaced), key=len, reverse=True))}){edge_after}",
             lambda m: f" {_SCRIPT_ENGLISH[m.group()]} "),
        rewrite("|".join(sorted(map(re.escape, thai), key=len, reverse=True)), lambda m: f" {_SCRIPT_ENGLISH[m.group()]} "),
    ]
_SCRIPT = _script_rules()


def to_english(text: str) -> str:
    """``text`` (NFKC, lower case) with these scripts' time words in English."""
    if not _SCRIPTS.search(text):
        return text
    text = text.translate(NATIVE_DIGITS)
    for rule in _SCRIPT:
        text = rule(text)
    return " ".join(text.split())  # the rules pad what they write; the finders' literal words have one space
