"""Reading LoCoMo-format files: conversations, turns with timestamps, and questions with clean evidence.

Works on any file of that layout, English or Japanese. Quirks handled (see ../shared/data/README.md):
``session_N`` keys are iterated (never the ``*_date_time`` keys), malformed evidence ids are split and
normalised ("D8:6; D9:17" → D8:6, D9:17; "D:11:26" → D11:26; "D" dropped), questions without usable
evidence are left out, ``blip_caption`` becomes part of its turn's text.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

_SESSION = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_MONTH_NAMES = (
    # English, then the languages a held-out set may be translated into (Spanish, French, German, Italian,
    # Portuguese, Dutch): full names and the abbreviations that are no everyday word.
    ("jan", "january", "enero", "janvier", "janv", "januar", "jän", "jänner", "gennaio", "janeiro", "januari"),
    ("feb", "february", "febrero", "février", "févr", "fevrier", "februar", "febbraio", "fevereiro", "februari"),
    ("mar", "march", "marzo", "mars", "märz", "maerz", "março", "marco", "maart"),
    ("apr", "april", "abril", "avril", "avr", "aprile"),
    ("may", "mayo", "mai", "maggio", "maio", "mei"),
    ("jun", "june", "junio", "juin", "juni", "giugno", "junho"),
    ("jul", "july", "julio", "juillet", "juil", "juli", "luglio", "julho"),
    ("aug", "august", "agosto", "août", "aout", "augustus"),
    ("sep", "sept", "september", "septiembre", "septembre", "settembre", "setembro"),
    ("oct", "october", "octubre", "octobre", "okt", "oktober", "ottobre", "outubro"),
    ("nov", "november", "noviembre", "novembre", "novembro"),
    ("dec", "december", "diciembre", "décembre", "decembre", "dez", "dezember", "dicembre", "dezembro"),
)
_MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, 1) for name in names}
# Russian (genitive, as a date writes it), Hindi, Arabic (Egypt and the Gulf, then the Levant) and Thai: read by
# writing their English name in their place ("8 мая 2023 г., 13:56" → "8 may 2023 г., 13:56").
_SCRIPT_MONTH_NAMES = (
    ("января", "जनवरी", "يناير", "كانون الثاني", "มกราคม"), ("февраля", "फ़रवरी", "फरवरी", "فبراير", "شباط", "กุมภาพันธ์"),
    ("марта", "मार्च", "مارس", "آذار", "มีนาคม"), ("апреля", "अप्रैल", "أبريل", "ابريل", "نيسان", "เมษายน"),
    ("мая", "मई", "مايو", "أيار", "พฤษภาคม"), ("июня", "जून", "يونيو", "حزيران", "มิถุนายน"),
    ("июля", "जुलाई", "يوليو", "تموز", "กรกฎาคม"), ("августа", "अगस्त", "أغسطس", "اغسطس", "آب", "สิงหาคม"),
    ("сентября", "सितंबर", "सितम्बर", "سبتمبر", "أيلول", "กันยายน"),
    ("октября", "अक्टूबर", "अक्तूबर", "أكتوبر", "اكتوبر", "تشرين الأول", "ตุลาคม"),
    ("ноября", "नवंबर", "नवम्बर", "نوفمبر", "تشرين الثاني", "พฤศจิกายน"),
    ("декабря", "दिसंबर", "दिसम्बर", "ديسمبر", "كانون الأول", "ธันวาคม"),
)
_ENGLISH_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                   "november", "december")
_SCRIPT_MONTHS = {unicodedata.normalize("NFKC", name): _ENGLISH_MONTHS[number]
                  for number, names in enumerate(_SCRIPT_MONTH_NAMES) for name in names}
_SCRIPT_MONTH = re.compile("|".join(sorted(map(re.escape, _SCRIPT_MONTHS), key=len, reverse=True)))
_THAI = re.compile(r"[\u0e00-\u0e7f]")
_BUDDHIST_YEAR = re.compile(r"(?<!\d)(2[45]\d\d)(?!\d)")  # Thai years: 2566 is 2023
# Arabic-Indic, Persian, Devanagari and Thai digits.
_DIGITS = str.maketrans({chr(base + i): str(i) for base in (0x0660, 0x06F0, 0x0966, 0x0E50) for i in range(10)})
_WORD = r"([^\W\d_]+)"
# "8 May, 2023", "8 de mayo de 2023", "8. Mai 2023"; "May 8, 2023"; "2023年5月8日" (and Chinese), "2023년 5월 8일"
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})\.?\s+(?:de\s+)?" + _WORD + r"\.?,?\s+(?:de\s+|del\s+)?(\d{4})")
_MONTH_DAY_YEAR = re.compile(_WORD + r"\.?\s+(\d{1,2}),?\s+(\d{4})")
_YEAR_MONTH_DAY = re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")
_ISO_DAY = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
# 08.05.2023: with dots the day comes first wherever the form is used (German, Russian, Turkish …), unlike
# slashes, which are month first in the US.
_DOTTED_DAY_FIRST = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.])")
# "13:56", "1:56 pm", "13h56", "午後1時56分", "0時5分", "1時半", "下午1点56分", "오후 1시 56분"
_CLOCK = re.compile(r"(\d{1,2})\s*(?:[:h]\s*(\d{2})(?!\d)|(?:時|点|點|시)\s*(?:(\d{1,2})\s*[分분]|(半|반))?)")
_PM = re.compile(r"\bp\.?\s?m\b|午後|下午|오후")
_AM = re.compile(r"\ba\.?\s?m\b|午前|上午|오전")


# Speakers the memory accepts; LoCoMo's two named speakers are mapped onto two of them and the real
# name stays in the text ("Caroline: ..."), because questions ask by name.
SPEAKER_A, SPEAKER_B = "user", "lumina"


@dataclass
class Turn:
    dia_id: str
    speaker: str  # user / lumina
    name: str  # the real speaker name
    text: str  # "Name: text [image: caption]"
    ts: float
    session: int


@dataclass
class Question:
    question: str
    evidence: list[str]
    category: int
    answer: str = ""


@dataclass
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    language: str = ""  # the sample's "language" (our own sets say it; LoCoMo does not)
    # Sessions whose date-time could not be read (or has none): each placed a day after the one before.
    unreadable_dates: list[str] = field(default_factory=list)


# LoCoMo's categories 1–4; its 5 (adversarial: no answer in the conversation) is left out. 6 is ours, for sets
# in this format that ask about a fact that changed later: the evidence is the latest statement.
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 6: "update"}


def categories_in(conversations: list[Conversation]) -> list[str]:
    """The names of the categories these conversations' questions have, in CATEGORY_NAMES order: the report's
    per-category columns (a LoCoMo file has no "update" column)."""
    present = {q.category for conv in conversations for q in conv.questions}
    return [name for number, name in CATEGORY_NAMES.items() if number in present]


def parse_when(value: str, fallback: datetime) -> datetime:
    """'1:56 pm on 8 May, 2023', '2023-05-08 13:56', '2023年5月8日 13:56', '8 de mayo de 2023, 13:56',
    '8. Mai 2023', '2023년 5월 8일 오후 1:56', '2023年5月8日 下午1点56分' ... → UTC datetime (noon without a time).

    Anything unreadable falls back to ``fallback`` (the previous session + 1 day) so that order survives; ``load``
    counts those (``Conversation.unreadable_dates``)."""
    return read_when(value) or fallback


def read_when(value: str) -> datetime | None:
    """``parse_when`` without a fallback: None for a text that names no day."""
    text = str(value or "").strip().lower()
    if not text:
        return None
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_DIGITS)
        text = _SCRIPT_MONTH.sub(lambda m: _SCRIPT_MONTHS[m.group()], text)
        if _THAI.search(text):
            text = _BUDDHIST_YEAR.sub(lambda m: str(int(m.group()) - 543), text)
    try:
        parsed = datetime.fromisoformat(text.replace("/", "-"))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
    except ValueError:
        pass
    year = month = day = None
    if m := (_YEAR_MONTH_DAY.search(text) or _ISO_DAY.search(text)):
        year, month, day = (int(x) for x in m.groups())
    elif m := _DOTTED_DAY_FIRST.search(text):
        day, month, year = (int(x) for x in m.groups())
    elif (m := _DAY_MONTH_YEAR.search(text)) and m.group(2) in _MONTHS:
        day, month, year = int(m.group(1)), _MONTHS[m.group(2)], int(m.group(3))
    elif (m := _MONTH_DAY_YEAR.search(text)) and m.group(1) in _MONTHS:
        month, day, year = _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3))
    if year is None:
        return None
    hour, minute = 12, 0
    # The clock is looked for outside the date itself, so that its day and year are not read as a time.
    rest = text[:m.start()] + " " + text[m.end():]
    if clock := _CLOCK.search(rest):
        hour = int(clock.group(1))
        minute = int(clock.group(2) or clock.group(3) or 0) if not clock.group(4) else 30
        if _PM.search(rest) and hour < 12:
            hour += 12
        if _AM.search(rest) and hour == 12:
            hour = 0
    try:
        return datetime(year, month, day, min(hour, 23), min(minute, 59), tzinfo=timezone.utc)
    except ValueError:
        return None


def normalise_evidence(raw) -> list[str]:
    out: list[str] = []
    for item in raw if isinstance(raw, list) else [raw]:
        for d, t in _EVIDENCE.findall(str(item)):
            ident = f"D{int(d)}:{int(t)}"
            if ident not in out:
                out.append(ident)
    return out


def load(path: str | Path, conversations: list[str] | None = None, turn_gap_seconds: float = 30.0) -> list[Conversation]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = [data]
    out: list[Conversation] = []
    for index, sample in enumerate(data):
        sample_id = str(sample.get("sample_id") or f"conv-{index}")
        if conversations and sample_id not in conversations:
            continue
        conv = sample["conversation"]
        a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
        item = Conversation(sample_id, a, b, language=str(sample.get("language") or ""))
        sessions = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)) and isinstance(conv[k], list))
        clock = datetime(2000, 1, 1, tzinfo=timezone.utc)
        seen: set[str] = set()
        for number, key in sessions:
            when = read_when(conv.get(f"{key}_date_time", ""))
            if when is None:
                item.unreadable_dates.append(key)
                when = clock + timedelta(days=1)
            clock = when
            for i, raw in enumerate(conv[key]):
                dia = str(raw.get("dia_id") or f"D{number}:{i + 1}")
                if dia in seen:
                    continue
                seen.add(dia)
                name = str(raw.get("speaker") or "")
                text = str(raw.get("text") or "").strip()
                caption = str(raw.get("blip_caption") or "").strip()
                if caption:
                    text = f"{text} [image: {caption}]".strip()
                if not text:
                    continue
                speaker = SPEAKER_B if name == b else SPEAKER_A
                item.turns.append(Turn(dia, speaker, name, f"{name}: {text}" if name else text,
                                       when.timestamp() + i * turn_gap_seconds, number))
        for qa in sample.get("qa", []):
            try:
                category = int(qa.get("category", 0))
            except (TypeError, ValueError):
                continue
            evidence = normalise_evidence(qa.get("evidence", []))
            if category not in CATEGORY_NAMES or not evidence or not qa.get("question"):
                continue
            item.questions.append(Question(str(qa["question"]), evidence, category, str(qa.get("answer", ""))))
        out.append(item)
    return out
