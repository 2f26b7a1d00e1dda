"""Spanish, French, German, Italian, Portuguese and Dutch time words rewritten into the English the cue finders
read: "¿Qué hice el 8 de mayo de 2023?" → "8 may 2023", "letzte Woche" → "last week", "il y a trois jours" →
"3 days ago". Only what cannot be an English word is read: a month name next to a day number, a year or a
preposition of its own language ("en mayo", "im Mai"), whole phrases ("la semana pasada"), and counts before a
unit and that language's "ago". "Mayo" in "I bought mayo" and "Mars" in "life on Mars" stay as they are; so does
French "hier", which is German and Dutch for "here"."""

from __future__ import annotations

import re
from typing import Callable

from lumina_memory.nodes.text.calendar.names import EN_MONTHS, LATIN_MONTH_NAMES, LATIN_WEEKDAYS, latin_months

from .temporal_patterns import Cued

MONTHS: dict[str, str] = latin_months()
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
# Month names that are English words or names as well ("3 Mars bars", "a mai tai", "mayo", Mei): a month here only
# with a day number.
LOOKALIKE_MONTHS: tuple[str, ...] = ("mars", "mayo", "mai", "mei")
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

_WEEKDAY_ENGLISH = {name: english for english, names in LATIN_WEEKDAYS.items() for name in names}
_WEEKDAY = "|".join(sorted((re.escape(n) for n in _WEEKDAY_ENGLISH), key=len, reverse=True))

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
        for lang, names in LATIN_MONTH_NAMES.items()
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
        _Rule(rf"(?<![\d.])(\d{{1,2}})\.\s+({'|'.join(EN_MONTHS)}){_END}", lambda m: f"{m[1]} {m[2]}", EN_MONTHS),
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


LATIN_RULES = _latin_rules()


def to_english(text: str) -> str:
    """``text`` (NFKC, lower case) with these languages' time words in English."""
    words = frozenset(_TOKEN.findall(text))
    for rule in LATIN_RULES:
        if not rule.triggers.isdisjoint(words):
            text = rule(text)
    return text
