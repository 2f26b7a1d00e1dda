"""The text of a file added to a knowledge base: plain text, Markdown, or PDF (its text layer, via pypdf).

Every refusal says what is wrong with which file and what to do, before anything is written: a missing or
empty file, bytes that are not UTF-8 (the offset of the first bad byte), binary data, a PDF that pypdf
cannot read or that has no text layer (a scan).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path

from pydantic import BaseModel

from lumina_memory.stores.errors import InvalidInput

MAX_BYTES = 64 * 1024 * 1024


class Document(BaseModel):
    source: str
    """The file's name, shown with every passage."""
    kind: str
    """'text', 'markdown' or 'pdf'."""
    text: str
    sha256: str
    """Of the text (not the file): the same text is the same document, whatever its file."""


def _refuse(path: Path, problem: str) -> InvalidInput:
    return InvalidInput("file", f"{path}: {problem}")


def _decode(path: Path, data: bytes) -> str:
    if b"\x00" in data:
        raise _refuse(path, "holds NUL bytes (binary data, not text); give a .txt, .md or .pdf file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refuse(path, f"is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                            "convert it to UTF-8 first (e.g. `iconv -f SHIFT_JIS -t UTF-8`)") from None


def _pdf_text(path: Path) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise _refuse(path, "is an encrypted PDF; save a decrypted copy first")
        pages = [page.extract_text() or "" for page in reader.pages]
    except InvalidInput:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise _refuse(path, f"is not a readable PDF ({type(exc).__name__}: {exc})") from None
    return "\n\n".join(_unwrap(p.strip()) for p in pages if p.strip())


_CJK_CHAR = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff01-\uff9f]")


_LINE_BREAK = re.compile(r"(\S)[ \t]*\n[ \t]*(?=\S)")


def _unwrap(page: str) -> str:
    """A PDF's text layer breaks lines where the page did; a sentence split over two lines would be two
    units to the passage windows. Single line breaks inside a paragraph are joined (with a space between
    Latin words, with nothing between Japanese characters); blank lines stay paragraph ends."""
    def join(m: re.Match) -> str:
        before, after = m.group(1), page[m.end()]
        return before + ("" if _CJK_CHAR.match(before) and _CJK_CHAR.match(after) else " ")

    return _LINE_BREAK.sub(join, page)


def read_document(path: str | Path) -> Document:
    path = Path(path)
    if not path.exists():
        raise _refuse(path, "no such file")
    if not path.is_file():
        raise _refuse(path, "is not a regular file")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise _refuse(path, f"is {size} bytes; split files over {MAX_BYTES} bytes")
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        kind, text = "pdf", _pdf_text(path)
    else:
        data = path.read_bytes()
        if data.startswith(b"%PDF-"):
            kind, text = "pdf", _pdf_text(path)
        else:
            kind = "markdown" if suffix in (".md", ".markdown") else "text"
            text = _decode(path, data)
    # One form per character (a half-width or decomposed kana finds its full form); Windows line ends once.
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text:
        raise _refuse(path, "is empty" if kind != "pdf" else "has no text layer (a scan?); run OCR on it first")
    return Document(source=path.name, kind=kind, text=text, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())
