"""Documents the knowledge-base tests write: long enough to be chunked, one answer hidden in each."""

from __future__ import annotations

from pathlib import Path

# Filler on other topics, so the answer has to be found among unrelated passages.
_FILLER_JA = (
    "駅前の商店街では毎週土曜日に朝市が開かれ、地元の農家が野菜や果物を売っている。",
    "市立図書館は改装工事のため、来月から三か月間休館する予定だと発表された。",
    "梅雨の時期は湿度が高く、洗濯物が乾きにくいので除湿機が重宝する。",
    "新しい路線バスは市役所と大学を結び、朝夕は十五分おきに運行される。",
    "文房具店で買った万年筆は書き心地がよく、インクの色も気に入っている。",
    "サッカー部の練習は雨の日でも体育館で筋力トレーニングを行う。",
)
_FILLER_EN = (
    "The committee approved a new budget for road repairs in the northern district.",
    "Our office printer jams whenever someone feeds it recycled paper.",
    "The museum's winter exhibition features textiles from the eighteenth century.",
    "Local farmers reported a good harvest of apples and pears this autumn.",
    "The train timetable changes on the first Monday of every month.",
    "A new bakery opened near the station and sells rye bread on weekends.",
)

ANSWERS = {
    "fuji.txt": "富士山の吉田ルートの山開きは毎年七月一日で、登山シーズンは九月上旬まで続く。",
    "cheesecake.md": "ベイクドチーズケーキはオーブンを百七十度に予熱して、四十分焼いてから一晩冷やすとおいしい。",
    "lighthouse.pdf": "The lighthouse keeper repaints the tower every spring using twelve buckets of white paint.",
}
QUESTIONS = {
    "fuji.txt": "富士山の山開きはいつですか？",
    "cheesecake.md": "チーズケーキは何度で何分焼けばいい？",
    "lighthouse.pdf": "How often is the lighthouse tower repainted, and with what?",
}


def long_text(answer: str, sentences: int, *, english: bool = False, markdown: bool = False) -> str:
    """``sentences`` filler sentences in paragraphs of four, the answer in the middle of the text."""
    filler = _FILLER_EN if english else _FILLER_JA
    body = [f"{filler[i % len(filler)]}" for i in range(sentences)]
    body.insert(sentences // 2, answer)
    sep = " " if english else ""
    paragraphs = [sep.join(body[i:i + 4]) for i in range(0, len(body), 4)]
    if markdown:
        paragraphs = [f"## 第{i}節\n\n{p}" for i, p in enumerate(paragraphs)]
    return "\n\n".join(paragraphs)


def pdf_bytes(lines: list[str]) -> bytes:
    """A minimal one-page PDF whose text layer holds ``lines`` (ASCII; Helvetica), xref offsets computed."""
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops = ["BT", "/F1 9 Tf", "11 TL", "36 800 Td"] + [f"({esc(line)}) Tj T*" for line in lines] + ["ET"]
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def write_documents(folder: Path, sentences: int = 240) -> dict[str, Path]:
    """The three documents (text, Markdown, PDF) in ``folder``; each has more than 2,000 tokens."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / name for name in ANSWERS}
    paths["fuji.txt"].write_text(long_text(ANSWERS["fuji.txt"], sentences), encoding="utf-8")
    paths["cheesecake.md"].write_text("# お菓子の本\n\n" + long_text(ANSWERS["cheesecake.md"], sentences, markdown=True),
                                      encoding="utf-8")
    english = long_text(ANSWERS["lighthouse.pdf"], sentences, english=True)
    lines = [line for p in english.split("\n\n") for line in _wrap(p, 110)]
    paths["lighthouse.pdf"].write_bytes(pdf_bytes(lines))
    return paths


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + [line]
