"""Time words of other languages, rewritten into the forms the cue finders already read.

Arabic, Hindi, Thai and Russian questions get their relative times ("الأسبوع الماضي", "पिछले महीने",
"3 วันที่แล้ว", "в прошлом году" → "last week", "last month", "3 days ago", "last year") and their named days and
months, in their own digits too ("8 мая 2023", "८ मई २०२३", "٨ مايو", "в мае", "मई में", "في شهر مايو",
"8 พ.ค. 2566" with Thai's Buddhist-era year → "8 may 2023", "in may").

The finders read English and Japanese. A question in Spanish, French, German, Italian, Portuguese or Dutch
("¿Qué hice el 8 de mayo de 2023?", "letzte Woche", "il y a trois jours") is rewritten into the English it
says ("8 may 2023", "last week", "3 days ago"), one in Korean or Chinese ("2023년 5월 8일", "지난주", "上个月",
"三天前") into the Japanese ("2023年5月8日", "先週", "先月", "3日前"), so each cue is still written once, in
``temporal_dates`` / ``temporal_periods`` / ``temporal_relative``, and every language gets its windows.

No language detection: a question's language cannot be told reliably from eight words, and a date written in
one language inside a question in another ("what did I say on 8. Mai 2023?") is still a date. So only what
cannot be an English or Japanese word is read: a month name next to a day number, a year or a preposition of
its own language ("en mayo", "im Mai"), whole phrases ("la semana pasada"), and counts before a unit and that
language's "ago". "Mayo" in "I bought mayo" and "Mars" in "life on Mars" stay as they are; so does French
"hier", which is German and Dutch for "here". Japanese text is left alone: the Chinese words rewritten here
are not Japanese ones (前年, "the previous year" in Japanese, is not read as Chinese "the year before last").
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

from .temporal_text import Cued, kanji_number

_EN_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december")

# Each language's months (several spellings joined by "|"), in calendar order.
_MONTH_NAMES: dict[str, tuple[str, ...]] = {
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
MONTHS: dict[str, str] = {
    name: _EN_MONTHS[i]
    for names in _MONTH_NAMES.values() for i, spellings in enumerate(names) for name in spellings.split("|")
    if name != _EN_MONTHS[i]
}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
# Month names that are English words or names as well ("3 Mars bars", "a mai tai", "mayo", Mei): a month here only
# with a day number, and never alone for time_mentions.
LOOKALIKE_MONTHS: tuple[str, ...] = ("mars", "mayo", "mai", "mei")
# A weekday that is also a name (Domingo): never alone for time_mentions.
LOOKALIKE_WEEKDAYS: tuple[str, ...] = ("domingo",)
_LOOKALIKE = "|".join(LOOKALIKE_MONTHS)
_L = r"a-zà-ÿœ"  # the letters a word of these languages is made of, after NFKC and lower case
_END = rf"(?![{_L}])"
_START = rf"(?<![{_L}])"

# "in <month>" in each language's own words, with its own months only: English "a mai tai" or "in mars" is not.
_MONTH_PREPOSITIONS: dict[str, str] = {
    "es": r"en(?:\s+el\s+mes\s+de)?|durante|desde|a\s+finales\s+de|a\s+principios\s+de|a\s+mediados\s+de",
    "fr": r"en|au\s+mois\s+d(?:e\s+|')|depuis|début|fin|mi-",
    "de": r"im|seit|anfang|ende|mitte",
    "it": r"a|in|nel\s+mese\s+di|da|a\s+fine|a\s+inizio|a\s+metà",
    "pt": r"em|no\s+mês\s+de|desde|no\s+início\s+de|no\s+fim\s+de|em\s+meados\s+de",
    "nl": r"in|sinds|begin|eind|half",
}
# What the preposition says, in the English the period finder reads ("early june", "since june").
_PREPOSITION_SENSE = (
    (re.compile(r"principios|début|anfang|inizio|início|begin"), "early "),
    (re.compile(r"finales|fin|ende|fine|eind"), "late "),
    (re.compile(r"mediados|mi-|mitte|metà|meados|half"), "mid "),
    (re.compile(r"desde|depuis|seit|^da$|sinds"), "since "),
)

_COUNTS: dict[str, float] = {
    # es / pt
    "un": 1, "una": 1, "uno": 1, "um": 1, "uma": 1, "dos": 2, "dois": 2, "duas": 2, "tres": 3, "três": 3,
    "cuatro": 4, "quatro": 4, "cinco": 5, "seis": 6, "siete": 7, "sete": 7, "ocho": 8, "oito": 8, "nueve": 9,
    "nove": 9, "diez": 10, "dez": 10, "unos": 3, "unas": 3, "unos pocos": 3, "unas pocas": 3, "algunos": 3,
    "algunas": 3, "alguns": 3, "algumas": 3, "pocos": 3, "poucos": 3,
    # fr
    "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9,
    "dix": 10, "quelques": 3,
    # de
    "ein": 1, "eine": 1, "einem": 1, "einer": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "ein paar": 3, "paar": 3, "einigen": 3, "wenigen": 3,
    # it
    "due": 2, "tre": 3, "quattro": 4, "sei": 6, "sette": 7, "otto": 8, "dieci": 10, "qualche": 3,
    "alcuni": 3, "alcune": 3,
    # nl
    "een": 1, "één": 1, "twee": 2, "drie": 3, "vijf": 5, "zes": 6, "zeven": 7, "negen": 9, "tien": 10,
    "een paar": 3, "enkele": 3,
}
# "unos días", "quelques semaines", "ein paar Tage": the finder's "a few"
_VAGUE = frozenset({"unos", "unas", "unos pocos", "unas pocas", "algunos", "algunas", "alguns", "algumas", "pocos",
                    "poucos", "quelques", "ein paar", "paar", "einigen", "wenigen", "qualche", "alcuni", "alcune",
                    "een paar", "enkele"})
_COUNT = r"\d{1,3}|" + "|".join(sorted((re.escape(w).replace(r"\ ", r"\s+") for w in _COUNTS), key=len,
                                       reverse=True))
_UNITS: dict[str, str] = {
    **dict.fromkeys(("día", "días", "dia", "dias", "jour", "jours", "tag", "tage", "tagen", "giorno", "giorni",
                     "dag", "dagen"), "day"),
    **dict.fromkeys(("semana", "semanas", "semaine", "semaines", "woche", "wochen", "settimana", "settimane",
                     "week", "weken"), "week"),
    **dict.fromkeys(("mes", "meses", "mês", "mois", "monat", "monate", "monaten", "mese", "mesi", "maand",
                     "maanden"), "month"),
    **dict.fromkeys(("año", "años", "ano", "anos", "an", "ans", "année", "années", "jahr", "jahre", "jahren",
                     "anno", "anni", "jaar", "jaren"), "year"),
}
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))

# Whole phrases, each language's words for the English ones the relative finder reads.
_PHRASES: dict[str, tuple[str, ...]] = {
    "last weekend": ("el fin de semana pasado", "el último fin de semana", "le week-end dernier",
                     "le weekend dernier", "le dernier week-end", "letztes wochenende", "letzten wochenende",
                     "vergangenes wochenende", "vergangenen wochenende", "lo scorso fine settimana",
                     "il fine settimana scorso", "lo scorso weekend", "il weekend scorso", "o fim de semana passado",
                     "no fim de semana passado", "vorig weekend", "vorige weekend", "afgelopen weekend"),
    "this weekend": ("este fin de semana", "ce week-end", "ce weekend", "dieses wochenende", "diesem wochenende",
                     "questo fine settimana", "questo weekend", "este fim de semana", "neste fim de semana",
                     "dit weekend"),
    "last week": ("la semana pasada", "la última semana", "la semaine dernière", "la semaine passée",
                  "letzte woche", "letzten woche", "vergangene woche", "vergangenen woche", "vorige woche",
                  "la settimana scorsa", "la scorsa settimana", "la settimana passata", "a semana passada",
                  "na semana passada", "semana passada", "vorige week", "afgelopen week"),
    "this week": ("esta semana", "cette semaine", "diese woche", "dieser woche", "questa settimana",
                  "nesta semana", "deze week"),
    "next week": ("la próxima semana", "la semana que viene", "la semaine prochaine", "nächste woche",
                  "nächsten woche", "kommende woche", "la prossima settimana", "la settimana prossima",
                  "a próxima semana", "na próxima semana", "semana que vem", "volgende week"),
    "last month": ("el mes pasado", "el último mes", "le mois dernier", "le mois passé", "letzten monat",
                   "letzter monat", "vergangenen monat", "vorigen monat", "il mese scorso", "lo scorso mese",
                   "il mese passato", "o mês passado", "no mês passado", "mês passado", "vorige maand",
                   "afgelopen maand"),
    "this month": ("este mes", "ce mois-ci", "ce mois", "diesen monat", "diesem monat", "questo mese",
                   "este mês", "neste mês", "deze maand"),
    "next month": ("el próximo mes", "el mes que viene", "le mois prochain", "nächsten monat", "kommenden monat",
                   "il mese prossimo", "il prossimo mese", "o próximo mês", "no próximo mês", "mês que vem",
                   "volgende maand"),
    "last year": ("el año pasado", "el último año", "l'année dernière", "l'an dernier", "l'an passé",
                  "l'année passée", "letztes jahr", "letzten jahr", "vergangenes jahr", "vergangenen jahr",
                  "voriges jahr", "vorigen jahr", "l'anno scorso", "lo scorso anno", "l'anno passato",
                  "o ano passado", "no ano passado", "ano passado", "vorig jaar", "vorige jaar", "afgelopen jaar"),
    "this year": ("este año", "cette année", "dieses jahr", "diesem jahr", "quest'anno", "questo anno",
                  "este ano", "neste ano", "dit jaar"),
    "next year": ("el próximo año", "el año que viene", "l'année prochaine", "l'an prochain", "nächstes jahr",
                  "nächsten jahr", "kommendes jahr", "l'anno prossimo", "il prossimo anno", "o próximo ano",
                  "no próximo ano", "ano que vem", "volgend jaar", "volgende jaar"),
    "the day before yesterday": ("anteayer", "antier", "antes de ayer", "avant-hier", "vorgestern",
                                 "l'altro ieri", "ieri l'altro", "altroieri", "anteontem", "eergisteren"),
    "yesterday": ("ayer", "gestern", "ieri", "ontem", "gisteren"),
    "today": ("hoy", "aujourd'hui", "heute", "oggi", "hoje", "vandaag"),
    # Not "mañana" or "morgen": "esta mañana" is this morning, "Guten Morgen" a greeting.
    "tomorrow": ("demain", "domani", "amanhã"),
    # Holidays the finder reads in English (temporal_holidays). Not the ones whose day differs by country (Mother's
    # Day), nor words that are more often something else alone: Portuguese "natal" (native), Dutch "pasen" (Spanish
    # "may they pass"), German "Silvester" (a name) count with their preposition only.
    "christmas eve": ("nochebuena", "heiligabend", "heiligen abend", "vigilia di natale", "véspera de natal",
                      "kerstavond", "veille de noël", "réveillon de noël"),
    "christmas": ("navidad", "navidades", "noël", "weihnachten", "natale", "no natal", "o natal", "do natal", "kerstmis",
                  "kerst"),
    "last christmas": ("la navidad pasada", "las navidades pasadas", "letztes weihnachten", "letzte weihnachten",
                       "letzten weihnachten", "le noël dernier", "noël dernier", "lo scorso natale", "il natale scorso",
                       "o natal passado", "no natal passado", "vorige kerst", "afgelopen kerst"),
    "new year's eve": ("nochevieja", "an silvester", "zu silvester", "saint-sylvestre", "san silvestro", "oudejaarsavond",
                       "oudjaar", "réveillon de ano novo", "véspera de ano novo"),
    "new year's day": ("año nuevo", "neujahr", "neujahrstag", "jour de l'an", "nouvel an", "capodanno", "ano novo",
                       "nieuwjaarsdag", "nieuwjaar"),
    "easter": ("semana santa", "pascua", "pâques", "ostern", "pasqua", "páscoa", "met pasen", "rond pasen"),
    "valentine's day": ("san valentín", "san valentin", "saint-valentin", "valentinstag", "san valentino",
                        "valentijnsdag"),
}
_PHRASE_ENGLISH = {phrase: english for english, phrases in _PHRASES.items() for phrase in phrases}

_WEEKDAYS: dict[str, tuple[str, ...]] = {
    "monday": ("lunes", "lundi", "montag", "lunedì", "lunedi", "segunda-feira", "segunda", "maandag"),
    "tuesday": ("martes", "mardi", "dienstag", "martedì", "martedi", "terça-feira", "terça", "dinsdag"),
    "wednesday": ("miércoles", "mercredi", "mittwoch", "mercoledì", "mercoledi", "quarta-feira", "quarta",
                  "woensdag"),
    "thursday": ("jueves", "jeudi", "donnerstag", "giovedì", "giovedi", "quinta-feira", "quinta", "donderdag"),
    "friday": ("viernes", "vendredi", "freitag", "venerdì", "venerdi", "sexta-feira", "sexta", "vrijdag"),
    "saturday": ("sábado", "samedi", "samstag", "sonnabend", "sabato", "zaterdag"),
    "sunday": ("domingo", "dimanche", "sonntag", "domenica", "zondag"),
}
_WEEKDAY_ENGLISH = {name: english for english, names in _WEEKDAYS.items() for name in names}
_WEEKDAY = "|".join(sorted((re.escape(n) for n in _WEEKDAY_ENGLISH), key=len, reverse=True))

_KO_DIGITS = {"한": 1, "두": 2, "세": 3, "네": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10}
_KO_UNITS = {"일": "日", "주": "週間", "주일": "週間", "달": "ヶ月", "개월": "ヶ月", "년": "年"}
_KO_WEEKDAYS = {"월": "月", "화": "火", "수": "水", "목": "木", "금": "金", "토": "土", "일": "日"}
_KO_PHRASES = (  # longest first, so 지난 주말 is a weekend and not 지난 주 + 말
    ("크리스마스 이브", "クリスマスイブ"), ("크리스마스이브", "クリスマスイブ"), ("크리스마스", "クリスマス"), ("할로윈", "ハロウィン"),
    ("핼러윈", "ハロウィン"), ("발렌타인데이", "バレンタインデー"), ("밸런타인데이", "バレンタインデー"), ("부활절", "イースター"),
    ("새해 첫날", "元日"),
    ("지난 주말", "先週末"), ("지난주말", "先週末"), ("이번 주말", "今週末"), ("이번주말", "今週末"),
    ("지난주", "先週"), ("지난 주", "先週"), ("지난달", "先月"), ("지난 달", "先月"), ("재작년", "一昨年"),
    ("작년", "去年"), ("지난해", "去年"), ("올해", "今年"), ("금년", "今年"), ("그저께", "一昨日"), ("그제", "一昨日"),
    ("어제", "昨日"), ("오늘", "今日"), ("내일", "明日"), ("이번 주", "今週"), ("이번주", "今週"),
    ("이번 달", "今月"), ("이번달", "今月"), ("다음 주", "来週"), ("다음주", "来週"), ("다음 달", "来月"),
    ("다음달", "来月"), ("내년", "来年"),
)
_ZH_UNITS = {"天": "日", "日": "日", "周": "週間", "週": "週間", "个星期": "週間", "個星期": "週間", "星期": "週間",
             "个礼拜": "週間", "個禮拜": "週間", "个月": "ヶ月", "個月": "ヶ月", "年": "年"}
_ZH_WEEKDAYS = {"一": "月", "二": "火", "三": "水", "四": "木", "五": "金", "六": "土", "日": "日", "天": "日"}
_ZH_PHRASES = (
    ("平安夜", "クリスマスイブ"), ("圣诞节", "クリスマス"), ("聖誕節", "クリスマス"), ("圣诞", "クリスマス"), ("聖誕", "クリスマス"),
    ("万圣节", "ハロウィン"), ("萬聖節", "ハロウィン"), ("情人节", "バレンタインデー"), ("情人節", "バレンタインデー"),
    ("复活节", "イースター"), ("復活節", "イースター"),
    ("上个周末", "先週末"), ("上個週末", "先週末"), ("上周末", "先週末"), ("上週末", "先週末"),
    ("这个周末", "今週末"), ("這個週末", "今週末"), ("这周末", "今週末"), ("本周末", "今週末"),
    ("上个星期", "先週"), ("上個星期", "先週"), ("上星期", "先週"), ("上礼拜", "先週"), ("上禮拜", "先週"),
    ("上周", "先週"), ("上週", "先週"), ("上个月", "先月"), ("上個月", "先月"), ("上月", "先月"),
    ("这个星期", "今週"), ("這個星期", "今週"), ("这周", "今週"), ("這週", "今週"), ("本周", "今週"), ("本週", "今週"),
    ("这个月", "今月"), ("這個月", "今月"), ("下个星期", "来週"), ("下個星期", "来週"), ("下星期", "来週"),
    ("下周", "来週"), ("下週", "来週"), ("下个月", "来月"), ("下個月", "来月"), ("昨天", "昨日"), ("前天", "一昨日"),
    ("今天", "今日"), ("明天", "明日"),
)


# Public views for the turn-side test of whether a text names a time (time_mentions).
WEEKDAY_WORDS = frozenset(_WEEKDAY_ENGLISH)
DAY_WORDS = frozenset(p for key in ("yesterday", "the day before yesterday", "today", "tomorrow")
                      for p in _PHRASES[key] if " " not in p)
POINTER_WORDS = frozenset("pasado pasada pasados pasadas próximo próxima dernier dernière passé passée prochain "
                          "prochaine letzte letzten letzter letztes vergangene vergangenen nächste nächsten kommende "
                          "scorso scorsa passato passata prossimo prossima passado próximo vorige vorig afgelopen "
                          "volgende hace fa atrás geleden seit depuis desde sinds".split())
SPAN_WORDS = frozenset(_UNITS) | frozenset("fin wochenende weekend fine settimana fim verano été sommer estate verão "
                                           "zomer invierno hiver winter inverno".split())
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
# Their months, in calendar order ("|" between spellings): Russian after a day (genitive), after "в" (prepositional)
# and before a year (any case); Hindi; Arabic as Egypt and the Gulf name them, then as the Levant and Iraq do;
# Thai, then its abbreviation.
_SCRIPT_MONTH_NAMES: dict[str, tuple[str, ...]] = {
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


def _script_months(*languages: str) -> dict[str, str]:
    return {unicodedata.normalize("NFKC", name): _EN_MONTHS[i] for lang in languages
            for i, spellings in enumerate(_SCRIPT_MONTH_NAMES[lang]) for name in spellings.split("|")}


def _alternation(names) -> str:
    return "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))


# Their weekdays, Monday first: Russian after в (accusative), Hindi, Arabic after يوم or before "last" (الاثنين is "the
# two" as well, الأحد "the one"), Thai with its วัน (อาทิตย์ alone is "a week").
_SCRIPT_WEEKDAY_NAMES: dict[str, tuple[str, ...]] = {
    "ru": ("понедельник", "вторник", "среду", "четверг", "пятницу", "субботу", "воскресенье"),
    "hi": ("सोमवार", "मंगलवार", "बुधवार", "गुरुवार|बृहस्पतिवार", "शुक्रवार", "शनिवार", "रविवार"),
    "ar": ("الاثنين|الإثنين", "الثلاثاء", "الأربعاء|الاربعاء", "الخميس", "الجمعة", "السبت", "الأحد|الاحد"),
    "th": ("วันจันทร์", "วันอังคาร", "วันพุธ", "วันพฤหัสบดี|วันพฤหัส", "วันศุกร์", "วันเสาร์", "วันอาทิตย์"),
}
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _script_weekdays(lang: str) -> dict[str, str]:
    return {unicodedata.normalize("NFKC", name): _EN_WEEKDAYS[i]
            for i, spellings in enumerate(_SCRIPT_WEEKDAY_NAMES[lang]) for name in spellings.split("|")}


_SCRIPT_WEEKDAYS = {lang: _script_weekdays(lang) for lang in _SCRIPT_WEEKDAY_NAMES}
_SCRIPT_DAY_MONTHS = _script_months("ru_day", "hi", "ar", "th")
_SCRIPT_IN_MONTHS = _script_months("ru_in")
_SCRIPT_YEAR_MONTHS = _script_months("ru_day", "ru_year", "hi", "ar", "th")
_THAI_MONTHS = _script_months("th")
# Arabic-Indic, Persian, Devanagari and Thai digits: NFKC keeps them, the cue finders read ASCII ones.
NATIVE_DIGITS = str.maketrans({chr(base + i): str(i) for base in (0x0660, 0x06F0, 0x0966, 0x0E50) for i in range(10)})
_SCRIPTS = re.compile(r"[\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f\u0400-\u04ff]")
_THAI = re.compile(r"[\u0e00-\u0e7f]")
# The letters and marks of Arabic, Devanagari and Cyrillic words (not ؟ ، ؛ or the danda: they end a word).
_SPACED_LETTER = r"[\u0621-\u065f\u066e-\u06d3\u0900-\u0963\u0966-\u097f\u0400-\u04ff]"

CJK_TIME_WORDS = tuple(p for p, _ in _KO_PHRASES) + tuple(p for p, _ in _ZH_PHRASES) + (
    "요일", "일 전", "주 전", "달 전", "개월 전", "년 전", "星期", "礼拜", "禮拜", "周末", "週末", "天前", "个月前", "個月前", "年前",
    "ที่แล้ว", "назад")


_TOKEN = re.compile(r"[^\W\d_]+")


class _Rule:
    """A Latin-script rewrite: it runs only on a text holding one of its ``triggers`` (whole words, looked up in
    the text's word set, which ``to_cue_language`` makes once), and scans a long text only around its ``needs``
    (``Cued``: substrings one of which every match holds). A 2,000-character English question costs the rules
    ~0.1 ms instead of ~5."""

    __slots__ = ("cued", "replace", "triggers")

    def __init__(self, pattern: str, replace: Callable[[re.Match], str], needs: tuple[str, ...],
                 triggers: tuple[str, ...] | None = None) -> None:
        self.cued, self.replace = Cued(pattern, needs), replace
        self.triggers = frozenset(triggers or (_TOKEN.findall(word)[-1] for word in needs))

    def __call__(self, text: str) -> str:
        parts, last = [], 0
        for m in self.cued.finditer(text):
            if m.start() >= last:
                parts += (text[last:m.start()], self.replace(m))
                last = m.end()
        return "".join(parts) + text[last:] if parts else text


def _sub(pattern: str, replace: Callable[[re.Match], str]) -> Callable[[str], str]:
    compiled = re.compile(pattern)
    return lambda text: compiled.sub(replace, text)


def _english_month(name: str) -> str:
    return MONTHS.get(name, name)


def _day_month(m: re.Match) -> str:
    month = _english_month(m.group(2))
    if m.group(3):
        return f"{int(m.group(1))} {month} {m.group(3)}"
    # English reads a bare "8 may" as a day only after a word that makes it one: this is a day.
    return f"{'on ' if month == 'may' else ''}{int(m.group(1))} {month}"


def _lookalike_day(m: re.Match) -> str:
    if m[1]:
        return f"{int(m[1])} {_english_month(m[2])} {m[3]}"
    # "le 8 mai", "8 de mayo": said as a day, so "on" it, as the English finder reads a bare "8 may" only so
    day, month = (m[4], m[5]) if m[4] else (m[6], m[7])
    return f"on {int(day)} {_english_month(month)}"


def _month_year(m: re.Match) -> str:
    return f"{_english_month(m.group(1))} {m.group(2)}"


def _preposition_month(m: re.Match) -> str:
    word = m.group(1)
    sense = next((english for pattern, english in _PREPOSITION_SENSE if pattern.search(word)), "in ")
    return f"{sense}{_english_month(m.group(2))}"


def _ago(m: re.Match) -> str:
    count, unit = " ".join(m.group("count").split()), _UNITS[m.group("unit")]
    if count in _VAGUE:
        return f"a few {unit}s ago"
    number = int(count) if count.isdigit() else _COUNTS[count]
    return f"{number:g} {unit}{'s' if number != 1 else ''} ago"


def _ko_ago(m: re.Match) -> str:
    count = m.group(1)
    number = int(count) if count.isdigit() else _KO_DIGITS[count]
    return f"{number}{_KO_UNITS[m.group(2)]}前"


def _zh_number(word: str) -> int:
    if word.isdigit():
        return int(word)
    return 2 if word in ("两", "兩") else kanji_number(word)


def _zh_ago(m: re.Match) -> str:
    return f"{_zh_number(m.group(1))}{_ZH_UNITS[m.group(2)]}前"


def _phrases_by_last_word() -> dict[str, str]:
    groups: dict[str, list[str]] = {}
    for phrase in _PHRASE_ENGLISH:
        groups.setdefault(phrase.split()[-1], []).append(re.escape(phrase).replace(r"\ ", r"\s+"))
    return {last: "|".join(sorted(group, key=len, reverse=True)) for last, group in groups.items()}


def _latin_rules() -> list[_Rule]:
    month = rf"({_MONTH}){_END}"
    prepositions = [
        _Rule(rf"{_START}({_MONTH_PREPOSITIONS[lang]})(?:\s+|(?<=-))({'|'.join(own)}){_END}", _preposition_month,
             tuple(own))
        for lang, names in _MONTH_NAMES.items()
        if (own := [name for spellings in names for name in spellings.split("|") if name in MONTHS])
    ]
    return [
        # 8 de mayo de 2023, 8. Mai 2023, 1er mai, 8 maggio 2023, 8 mei: the day, then its month, then a year.
        # "Mars", "mai", "mayo" and "mei" are English words or names as well ("3 Mars bars", "2 mai tais"):
        # those are a day only with a year, the day's own "de" or dot, or the language's "on" before them.
        _Rule(rf"(?<!\d)(\d{{1,2}})(?:\.|º|ª|er|°)?\s+(?:de\s+)?((?!(?:{_LOOKALIKE}){_END})(?:{_MONTH})){_END}"
             rf"(?:\s*,?\s+(?:de\s+|del\s+)?(\d{{4}}))?", _day_month, tuple(MONTHS)),
        _Rule(rf"(?:(?<!\d)(\d{{1,2}})(?:\.|º|ª|er|°)?\s+(?:de\s+)?({_LOOKALIKE}){_END}\s*,?\s+(?:de\s+|del\s+)?"
             rf"(\d{{4}})|(?<!\d)(\d{{1,2}})(?:\.\s*|\s+de\s+)({_LOOKALIKE}){_END}|"
             rf"{_START}(?:le|el|am|il|l'|em|op|du|au|del|vom|zum)\s*(\d{{1,2}})(?:er)?\s+({_LOOKALIKE}){_END})",
             _lookalike_day, LOOKALIKE_MONTHS),
        # German writes a day with a dot before months English spells the same way too ("10. April 2023").
        _Rule(rf"(?<![\d.])(\d{{1,2}})\.\s+({'|'.join(_EN_MONTHS)}){_END}", lambda m: f"{m[1]} {m[2]}", _EN_MONTHS),
        _Rule(rf"{_START}{month}\s*,?\s+(?:de\s+|del\s+|van\s+)?(\d{{4}})(?!\d)", _month_year, tuple(MONTHS)),
        *prepositions,
        # a year after a preposition that is not English ("en 2022", "im Jahr 2022", "nel 2022", "em 2022")
        _Rule(rf"{_START}(?:en(?:\s+el\s+año)?|im(?:\s+jahre?)?|nel(?:l'anno)?|em|no\s+ano\s+de|dans\s+l'année)\s+"
             r"((?:19|20)\d\d)(?!\d)", lambda m: f"in {m.group(1)}", ("19", "20"),
              ("en", "im", "nel", "nell", "em", "no", "dans")),
        _Rule(rf"{_START}(?:hace|il\s+y\s+a|vor|há|faz)\s+(?P<count>{_COUNT})\s+(?P<unit>{_UNIT}){_END}", _ago,
             ("hace", "il y a", "vor", "há", "faz"), ("hace", "il", "vor", "há", "faz")),
        _Rule(rf"{_START}(?P<count>{_COUNT})\s+(?P<unit>{_UNIT})\s+(?:fa|atrás|geleden){_END}", _ago,
             ("fa", "atrás", "geleden")),
        # el viernes pasado, vendredi dernier, letzten Freitag, lo scorso venerdì, na sexta passada, vorige vrijdag
        _Rule(rf"{_START}(?:el\s+|la\s+|na\s+|no\s+|o\s+|a\s+|il\s+)?({_WEEKDAY}){_END}\s+"
             r"(?:pasado|pasada|dernier|scorso|passato|passada|passado)(?![a-zà-ÿ])",
             lambda m: f"last {_WEEKDAY_ENGLISH[m.group(1)]}", ("pasad", "dernier", "scorso", "passat", "passad"),
              ("pasado", "pasada", "dernier", "scorso", "passato", "passada", "passado")),
        _Rule(rf"{_START}(?:letzten|letzter|vergangenen|vergangener|vorigen|vorige|lo\s+scorso|la\s+scorsa|"
             rf"el\s+pasado|o\s+passado|a\s+passada|afgelopen)\s+({_WEEKDAY}){_END}",
             lambda m: f"last {_WEEKDAY_ENGLISH[m.group(1)]}",
             ("letzte", "vergangene", "vorige", "scors", "pasado", "passad", "afgelopen"),
             ("letzten", "letzter", "vergangenen", "vergangener", "vorigen", "vorige", "scorso", "scorsa", "pasado",
              "passado", "passada", "afgelopen")),
        # One rule per last word: a long text is scanned around "week" for the four phrases that end in it only.
        *(_Rule(rf"{_START}({group}){_END}", lambda m: _PHRASE_ENGLISH[" ".join(m.group(1).split())], (last,))
          for last, group in _phrases_by_last_word().items()),
    ]


def _korean_rules() -> list[Callable[[str], str]]:
    counts = "|".join(sorted(_KO_DIGITS, key=len, reverse=True))
    weekday = "".join(_KO_WEEKDAYS)
    return [
        _sub(r"(\d{4})\s*년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일", lambda m: f"{m[1]}年{m[2]}月{m[3]}日"),
        _sub(r"(\d{4})\s*년\s*(\d{1,2})\s*월", lambda m: f"{m[1]}年{m[2]}月"),
        _sub(r"(?<!\d)(\d{1,2})\s*월\s*(\d{1,2})\s*일", lambda m: f"{m[1]}月{m[2]}日"),
        _sub(rf"(\d{{1,3}}|{counts})\s*(주일|개월|일|주|달|년)\s*전", _ko_ago),
        _sub(rf"지난\s*([{weekday}])요일", lambda m: f"先週の{_KO_WEEKDAYS[m[1]]}曜日"),
        _sub(r"(\d{4})\s*년", lambda m: f"{m[1]}年"),
        _sub(r"(?<!\d)(\d{1,2})\s*월(?!\s*\d)", lambda m: f"{m[1]}月"),
        _sub("|".join(p for p, _ in _KO_PHRASES), lambda m: dict(_KO_PHRASES)[m.group()]),
    ]


def _chinese_rules() -> list[Callable[[str], str]]:
    units = "|".join(sorted(_ZH_UNITS, key=len, reverse=True))
    return [
        _sub(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[号號]", lambda m: f"{m[1]}月{m[2]}日"),
        _sub(rf"(\d{{1,3}}|[一二三四五六七八九十两兩]+)\s*({units})\s*(?:以前|之前|前)", _zh_ago),
        _sub(r"上(?:个|個)?(?:星期|周|週|礼拜|禮拜)([一二三四五六日天])", lambda m: f"先週の{_ZH_WEEKDAYS[m[1]]}曜日"),
        _sub("|".join(p for p, _ in _ZH_PHRASES), lambda m: dict(_ZH_PHRASES)[m.group()]),
    ]


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
    ru, hi, ar, th = (_alternation(_SCRIPT_WEEKDAYS[lang]) for lang in ("ru", "hi", "ar", "th"))
    ar_last, ar_next = r"الماضي|الماضية|الفائت|الفائتة", r"القادم|القادمة|المقبل|المقبلة"
    # Each language's ways to point at a weekday, one rule each; what a rule writes is English, so no later one
    # reads it again.
    return [
        _sub(rf"{edge_before}во?\s+(?:(?P<p>прошл(?:ый|ую|ое))\s+|(?P<n>следующ(?:ий|ую|ее))\s+|(?P<t>эт(?:от|у|о))\s+)?"
             rf"(?P<w>{ru}){edge_after}", _weekday("ru")),
        _sub(rf"{edge_before}(?:(?P<p>पिछले)|(?P<n>अगले)|(?P<t>इस))\s+(?P<w>{hi})(?:\s+को)?{edge_after}", _weekday("hi")),
        _sub(rf"{edge_before}(?P<w>{hi})\s+को{edge_after}", _weekday("hi")),
        _sub(rf"{edge_before}يوم\s+(?P<w>{ar})(?:\s+(?:(?P<p>{ar_last})|(?P<n>{ar_next})))?{edge_after}", _weekday("ar")),
        _sub(rf"{edge_before}(?P<w>{ar})\s+(?:(?P<p>{ar_last})|(?P<n>{ar_next})){edge_after}", _weekday("ar")),
        _sub(rf"(?P<w>{th})(?:\s*(?P<p>ที่แล้ว|ก่อน)|\s*(?P<n>หน้า)|\s*(?P<t>นี้))?", _weekday("th")),
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
    day_months, year_months = _alternation(_SCRIPT_DAY_MONTHS), _alternation(_SCRIPT_YEAR_MONTHS)
    thai = [p for p in _SCRIPT_ENGLISH if _THAI.search(p)]
    spaced = [p for p in _SCRIPT_ENGLISH if p not in thai]
    # Arabic, Hindi and Russian write words apart, so a phrase is one only as whole words (आज is not inside
    # आजकल, "nowadays"); Thai writes none apart.
    edge_before, edge_after = rf"(?<!{_SPACED_LETTER})", rf"(?!{_SPACED_LETTER})"
    # A month's name is a time only with a day before it, a year after it or its language's "in": Russian март and
    # Hindi मई alone are words of a sentence about the month, and Arabic نيسان is a car as well.
    return [
        # "พ.ค. 66": two digits only after an abbreviation ("8 พฤษภาคม 10 โมง" is ten o'clock)
        _sub(rf"(?:(?P<m>{_alternation(_THAI_MONTHS)})\s*(?:(?P<ce>ค\.ศ\.)|พ\.ศ\.)?\s*(?P<y>\d{{4}})"
             rf"|(?P<m2>{_alternation(n for n in _THAI_MONTHS if n.endswith('.'))})\s*(?P<y2>\d{{2}}))(?!\d)", _thai_year),
        _sub(rf"(?:(?P<d1>\d{{1,2}})\s*(?:-|–|по|до|से|ถึง)\s*)?(?P<d>\d{{1,2}})\s*(?P<m>{day_months})"
             rf"(?:\s*(?P<y>(?:19|20)\d{{2}})(?!\d)(?:\s*(?:года|году|г\.))?)?{edge_after}", _script_day),
        _sub(rf"{edge_before}(?:(?P<m>{_alternation(_script_months('hi'))})\s*)?(?P<y>(?:19|20)\d{{2}})?\s*(?<=\S)\s+में{edge_after}",
             _hindi_in),
        _sub(rf"{edge_before}(?P<m>{year_months})\s*(?P<y>(?:19|20)\d{{2}})(?!\d)(?:\s*(?:года|году|г\.))?",
             lambda m: f" {_SCRIPT_YEAR_MONTHS[m['m']]} {m['y']} "),
        _sub(rf"{edge_before}в\s+(?P<m>{_alternation(_SCRIPT_IN_MONTHS)}){edge_after}",
             lambda m: f" in {_SCRIPT_IN_MONTHS[m['m']]} "),
        _sub(rf"{edge_before}(?:في|خلال)\s+(?:شهر\s+)?(?P<m>{_alternation(_script_months('ar'))}){edge_after}",
             lambda m: f" in {_SCRIPT_DAY_MONTHS[m['m']]} "),
        _sub(rf"(?:ใน)?เดือน\s*(?P<m>{_alternation(_THAI_MONTHS)})", lambda m: f" in {_THAI_MONTHS[m['m']]} "),
        # a year: "в 2023 году", "في عام ٢٠٢٣", "ในปี 2566" (Hindi's "2023 में" is read with its month above)
        _sub(rf"{edge_before}в\s+(?P<y>(?:19|20)\d{{2}})\s*(?:году|г\.)", lambda m: f" in {m['y']} "),
        _sub(rf"{edge_before}(?:في|خلال)\s+(?:(?:عام|سنة)\s+)?(?P<y>(?:19|20)\d{{2}})(?!\d)", lambda m: f" in {m['y']} "),
        _sub(r"(?:ใน)?ปี\s*(?:(?P<ce>ค\.ศ\.)|พ\.ศ\.)?\s*(?P<y>\d{4})(?!\d)",
             lambda m: f" in {int(m['y']) - (0 if m['ce'] or int(m['y']) < 2400 else 543)} "),
        *_weekday_rules(edge_before, edge_after),
        # قبل 3 أيام / منذ 3 أيام, 3 दिन पहले, 3 วันที่แล้ว / 3 วันก่อน, 3 дня назад (spaced: Thai writes no spaces)
        _sub(rf"{edge_before}(?:قبل|منذ)\s*(?P<n>\d{{1,3}})\s*(?P<u>{units}){edge_after}", _script_ago),
        _sub(rf"(?P<n>\d{{1,3}})\s*(?P<u>{units})\s*(?:(?:पहले|назад){edge_after}|ที่แล้ว|ก่อน)", _script_ago),
        _sub(rf"{edge_before}(?:{'|'.join(sorted(map(re.escape, spaced), key=len, reverse=True))}){edge_after}",
             lambda m: f" {_SCRIPT_ENGLISH[m.group()]} "),
        _sub("|".join(sorted(map(re.escape, thai), key=len, reverse=True)), lambda m: f" {_SCRIPT_ENGLISH[m.group()]} "),
    ]


_LATIN = _latin_rules()
_SCRIPT = _script_rules()
_KOREAN = _korean_rules()
_CHINESE = _chinese_rules()
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_ZH_ONLY = re.compile("|".join(p for p, _ in _ZH_PHRASES) + r"|[号號天]|以前|之前|个|個")
def names_time_in_other_scripts(lowered: str) -> bool:
    """Whether an Arabic, Hindi, Thai or Russian text (lower case) holds one of the relative times read here."""
    if not _SCRIPTS.search(lowered):
        return False
    text = unicodedata.normalize("NFKC", lowered).translate(NATIVE_DIGITS)
    return any(rule(text) != text for rule in _SCRIPT)


def to_cue_language(text: str) -> str:
    """``text`` (NFKC, lower case) with the time words of the languages above in English or Japanese."""
    words = frozenset(_TOKEN.findall(text))
    for rule in _LATIN:
        if not rule.triggers.isdisjoint(words):
            text = rule(text)
    if text.isascii():
        return text
    if _SCRIPTS.search(text):
        text = text.translate(NATIVE_DIGITS)
        for rule in _SCRIPT:
            text = rule(text)
        text = " ".join(text.split())  # the rules pad what they write; the finders' literal words have one space
    if _HANGUL.search(text):
        for rule in _KOREAN:
            text = rule(text)
    # Chinese only where the text is not Japanese: kana mark Japanese, and 前天 or 个月 are not Japanese words.
    if not _KANA.search(text) and _ZH_ONLY.search(text):
        for rule in _CHINESE:
            text = rule(text)
    return text
