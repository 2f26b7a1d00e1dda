"""Reading LoCoMo-format files: conversations, turns with timestamps, and questions with clean evidence.

Works on any file of that layout, English or Japanese. Quirks handled (see ../shared/data/README.md):
``session_N`` keys are iterated (never the ``*_date_time`` keys), malformed evidence ids are split and
normalised ("D8:6; D9:17" → D8:6, D9:17; "D:11:26" → D11:26; "D" dropped), questions without usable
evidence are left out, ``blip_caption`` becomes part of its turn's text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from lumina_memory.nodes.text.calendar.stamps import read_when

_SESSION = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")

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
    """A session's date-time as a UTC datetime (``nodes.text.calendar.stamps.read_when``: '1:56 pm on 8 May, 2023',
    '2023-05-08 13:56', '8 de mayo de 2023, 13:56', '2023년 5월 8일 오후 1:56' ...; noon without a time).

    Anything unreadable falls back to ``fallback`` (the previous session + 1 day) so that order survives; ``load``
    counts those (``Conversation.unreadable_dates``)."""
    return read_when(value) or fallback


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
