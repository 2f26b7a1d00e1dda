"""The names of months and weekdays, each written once, for every reader of calendar expressions.

The recall cue finders (``nodes/retrieval/temporal_*``), the knowledge extractor's dates (``nodes/knowledge/dates``)
and the session stamps of the bench loader (``calendar.stamps``) all take their month and weekday names from here,
so a spelling added for one reader is read by all of them."""

from __future__ import annotations

import unicodedata

EN_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
             "november", "december")
EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
JA_WEEKDAYS = "月火水木金土日"  # Monday first, as in 月曜日

# English month names and their abbreviations ("jan", "sept") → month number.
MONTHS: dict[str, int] = {
    name: number
    for number, full in enumerate(EN_MONTHS, 1)
    for name in dict.fromkeys((full, full[:3], *(("sept",) if full == "september" else ())))
}

# Spanish, French, German, Italian, Portuguese and Dutch months (several spellings joined by "|"), in calendar order.
LATIN_MONTH_NAMES: dict[str, tuple[str, ...]] = {
    "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre|setiembre",
           "octubre", "noviembre", "diciembre"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre"),
    "de": ("januar|jänner", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober",
           "november", "dezember"),
    "it": ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
           "ottobre", "novembre", "dicembre"),
    "pt": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
           "novembro", "dezembro"),
    "nl": ("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober",
           "november", "december"),
}
# Abbreviations and spellings without accents that dates written in those languages use as well; a month name
# only next to a day and a year (session stamps), since "dez" or "marco" alone are other words.
DATE_SPELLINGS: tuple[tuple[str, ...], ...] = (
    ("janv", "jän"), ("févr", "fevrier"), ("maerz", "marco"), ("avr",), (), (), ("juil",), ("aout",), (), ("okt",),
    (), ("decembre", "dez"),
)
# Their months, in calendar order ("|" between spellings): Russian after a day (genitive), after "в" (prepositional)
# and before a year (any case); Hindi; Arabic as Egypt and the Gulf name them, then as the Levant and Iraq do;
# Thai, then its abbreviation.
SCRIPT_MONTH_NAMES: dict[str, tuple[str, ...]] = {
    "ru_day": ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября",
               "ноября", "декабря"),
    "ru_in": ("январе", "феврале", "марте", "апреле", "мае", "июне", "июле", "августе", "сентябре", "октябре",
              "ноябре", "декабре"),
    "ru_year": ("январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август", "сентябрь", "октябрь",
                "ноябрь", "декабрь"),
    "hi": ("जनवरी", "फ़रवरी|फरवरी", "मार्च", "अप्रैल|अप्रेल", "मई", "जून", "जुलाई", "अगस्त", "सितंबर|सितम्बर",
           "अक्टूबर|अक्तूबर", "नवंबर|नवम्बर", "दिसंबर|दिसम्बर"),
    "ar": ("يناير|كانون الثاني", "فبراير|شباط", "مارس|آذار", "أبريل|ابريل|إبريل|نيسان", "مايو|أيار|ايار",
           "يونيو|يونية|حزيران", "يوليو|يولية|تموز", "أغسطس|اغسطس|آب", "سبتمبر|أيلول|ايلول",
           "أكتوبر|اكتوبر|تشرين الأول|تشرين الاول", "نوفمبر|تشرين الثاني", "ديسمبر|كانون الأول|كانون الاول"),
    "th": ("มกราคม|ม.ค.", "กุมภาพันธ์|ก.พ.", "มีนาคม|มี.ค.", "เมษายน|เม.ย.", "พฤษภาคม|พ.ค.", "มิถุนายน|มิ.ย.",
           "กรกฎาคม|ก.ค.", "สิงหาคม|ส.ค.", "กันยายน|ก.ย.", "ตุลาคม|ต.ค.", "พฤศจิกายน|พ.ย.", "ธันวาคม|ธ.ค."),
}


LATIN_WEEKDAYS: dict[str, tuple[str, ...]] = {
    "monday": ("lunes", "lundi", "montag", "lunedì", "lunedi", "segunda-feira", "segunda", "maandag"),
    "tuesday": ("martes", "mardi", "dienstag", "martedì", "martedi", "terça-feira", "terça", "dinsdag"),
    "wednesday": ("miércoles", "mercredi", "mittwoch", "mercoledì", "mercoledi", "quarta-feira", "quarta",
                  "woensdag"),
    "thursday": ("jueves", "jeudi", "donnerstag", "giovedì", "giovedi", "quinta-feira", "quinta", "donderdag"),
    "friday": ("viernes", "vendredi", "freitag", "venerdì", "venerdi", "sexta-feira", "sexta", "vrijdag"),
    "saturday": ("sábado", "samedi", "samstag", "sonnabend", "sabato", "zaterdag"),
    "sunday": ("domingo", "dimanche", "sonntag", "domenica", "zondag"),
}
# Their weekdays, Monday first: Russian after в (accusative), Hindi, Arabic after يوم or before "last" (الاثنين is "the
# two" as well, الأحد "the one"), Thai with its วัน (อาทิตย์ alone is "a week").
SCRIPT_WEEKDAY_NAMES: dict[str, tuple[str, ...]] = {
    "ru": ("понедельник", "вторник", "среду", "четверг", "пятницу", "субботу", "воскресенье"),
    "hi": ("सोमवार", "मंगलवार", "बुधवार", "गुरुवार|बृहस्पतिवार", "शुक्रवार", "शनिवार", "रविवार"),
    "ar": ("الاثنين|الإثنين", "الثلاثاء", "الأربعاء|الاربعاء", "الخميس", "الجمعة", "السبت", "الأحد|الاحد"),
    "th": ("วันจันทร์", "วันอังคาร", "วันพุธ", "วันพฤหัสบดี|วันพฤหัส", "วันศุกร์", "วันเสาร์", "วันอาทิตย์"),
}
# Arabic-Indic, Persian, Devanagari and Thai digits: NFKC keeps them, the readers read ASCII ones.
NATIVE_DIGITS = str.maketrans({chr(base + i): str(i) for base in (0x0660, 0x06F0, 0x0966, 0x0E50) for i in range(10)})


def script_months(*languages: str) -> dict[str, str]:
    """The months of ``SCRIPT_MONTH_NAMES``' languages (NFKC) → their English names."""
    return {unicodedata.normalize("NFKC", name): EN_MONTHS[i] for lang in languages
            for i, spellings in enumerate(SCRIPT_MONTH_NAMES[lang]) for name in spellings.split("|")}


def script_weekdays(lang: str) -> dict[str, str]:
    """One language's weekdays of ``SCRIPT_WEEKDAY_NAMES`` (NFKC) → their English names."""
    return {unicodedata.normalize("NFKC", name): EN_WEEKDAYS[i]
            for i, spellings in enumerate(SCRIPT_WEEKDAY_NAMES[lang]) for name in spellings.split("|")}


def latin_months() -> dict[str, str]:
    """Every spelling of ``LATIN_MONTH_NAMES`` that is not the English name → the English name."""
    return {name: EN_MONTHS[i] for names in LATIN_MONTH_NAMES.values() for i, spellings in enumerate(names)
            for name in spellings.split("|") if name != EN_MONTHS[i]}
