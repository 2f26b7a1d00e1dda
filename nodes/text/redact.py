"""S7: PII redaction before anything is stored, embedded or logged. Pure functions.

``redact(text, kinds)`` returns the text with every e-mail address, phone number, card number (Luhn),
マイナンバー (check digit), IP address and secret (API keys, tokens, JWTs, Bearer tokens, passwords, long
high-entropy strings) replaced by a typed placeholder, and the count per kind. The placeholder speaks the
language of the text around it — 「[電話番号]」 in Japanese, "[phone]" in English — so a recalled memory
still reads as a sentence. Placeholders hold no digits or '@', so redacting twice changes nothing.

Matching runs on an ASCII view of the text: full-width letters and digits (０９０…), full-width
punctuation and the dashes people type between digits (－, ー, ‐, –) map one character to one, so
offsets stay the same and the original text around a match is kept as it was.

Care against false positives: dates (2026-10-01), times (10:30:00), prices (¥12,000, $1,234.56), version
numbers (v1.2.3.4) and ordinary counts are not touched: card numbers must pass Luhn, マイナンバー its check
digit, phone numbers need a leading 0 or + (or the North American (415) 555-0100 shape) and the right
number of digits, IP addresses must parse.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from typing import Any, Iterable

KINDS = ("secret", "email", "card", "my_number", "phone", "ip")  # matching order: the most specific first

PLACEHOLDERS = {
    "email": ("[email]", "[メール]"),
    "phone": ("[phone]", "[電話番号]"),
    "card": ("[card]", "[カード番号]"),
    "my_number": ("[my number]", "[マイナンバー]"),
    "ip": ("[ip]", "[IPアドレス]"),
    "secret": ("[secret]", "[秘密情報]"),
}

# --- the ASCII view ------------------------------------------------------------------------------------
_ASCII = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}  # full-width ASCII → ASCII
_ASCII.update({ord(c): ord("-") for c in "‐‑‒–—―−ーｰ"})
_ASCII[0x3000] = ord(" ")


def _view(text: str) -> str:
    return text.translate(_ASCII)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")

# --- patterns (on the ASCII view) -------------------------------------------------------------------
_SECRET = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}"
    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{30,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r")",
    re.ASCII,
)
# The token after a scheme or a field name is the secret; the name stays, so the sentence still reads.
# (In the ASCII view the long-vowel mark ー reads as "-": パスワード is "パスワ-ド" here.)
_LABELLED = re.compile(
    r"(?i)(?:\b(?:bearer|basic)\s+|(?:password|passwd|pwd|passphrase|api[_ -]?key|secret|token|access[_ -]?key"
    r"|パスワ-ド|暗証番号|ト-クン|APIキ-)\s*(?P<sep>is|は|=|:)\s*)"
    r"(?P<value>[A-Za-z0-9_\-.~+/=!@#$%^&*]{6,})",
    re.ASCII,
)
_LONG_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{32,}(?![A-Za-z0-9_+/=-])", re.ASCII)
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b", re.ASCII)
_CARD = re.compile(r"(?<![\d.,-])\d(?:[ -]?\d){12,18}(?![\d.,]?\d)", re.ASCII)
_MY_NUMBER = re.compile(r"(?<![\d.,-])\d{4}[ -]?\d{4}[ -]?\d{4}(?![\d.,]?\d)", re.ASCII)
_PHONE = re.compile(
    r"(?<![\w.+/-])(?:"
    r"\+\d{1,3}[ -]?(?:\(\d{1,4}\)[ -]?)?\d{1,4}(?:[ -]?\d{1,4}){1,4}"  # +81 90 1234 5678, +1 (415) 555-0100
    r"|\(0\d{1,4}\)[ -]?\d{1,4}-?\d{3,4}"  # (03) 1234-5678
    r"|0\d{1,4}-\d{1,4}-\d{3,4}"  # 090-1234-5678, 03-1234-5678, 0120-123-456
    r"|0[5789]0\d{8}"  # 09012345678
    r"|\(\d{3}\)[ -]?\d{3}-\d{4}|\d{3}-\d{3}-\d{4}"  # (415) 555-0100, 415-555-0100
    r")(?![\w.]?\d)",
    re.ASCII,
)
_IPV4 = re.compile(r"(?<![\w.])(?<!v)(?:\d{1,3}\.){3}\d{1,3}(?![\w.]?\d)", re.ASCII)
_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w+)?(?![\w:])", re.ASCII)
# Every kind needs one of these (a digit, '@', '::', a 20+ character token, or a secret's label): most chat
# turns have none, and skip the per-kind patterns (a third of the cost of ingesting a short turn otherwise).
_MAYBE = re.compile(
    r"[0-9@]|::|[A-Za-z0-9_-]{20,}|(?i:bearer|basic|passw|pwd|secret|token|api|access|パスワ|暗証|ト-クン)", re.ASCII
)
_VERSION_BEFORE = re.compile(r"(?i)(?:version|ver\.?|バージョン)\s*$")


def luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def my_number_ok(digits: str) -> bool:
    """マイナンバー's check digit: P(n) the n-th digit from the right before it, Q(n) = n+1 (n ≤ 6) or
    n-6; remainder = Σ P·Q mod 11; check = 0 if remainder ≤ 1 else 11 - remainder."""
    if len(digits) != 12 or len(set(digits)) == 1:
        return False
    body = digits[:11]
    total = sum(int(p) * (n + 1 if n <= 6 else n - 6) for n, p in enumerate(reversed(body), start=1))
    remainder = total % 11
    return int(digits[11]) == (0 if remainder <= 1 else 11 - remainder)


def _entropy(token: str) -> float:
    counts = Counter(token)
    return -sum(c / len(token) * math.log2(c / len(token)) for c in counts.values())


def _is_secret_token(token: str) -> bool:
    """A long token that looks random: letters of both cases and digits, and high entropy (git hashes and
    UUIDs — one case of hex — are not secrets)."""
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    return classes == 3 and _entropy(token) >= 4.0


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _phone_ok(match: str) -> bool:
    n = len(_digits(match))
    return (8 if match.startswith("+") else 10) <= n <= 15


def _ip_ok(match: str, view: str, start: int) -> bool:
    try:
        ipaddress.ip_address(match.split("%")[0])
    except ValueError:
        return False
    if ":" in match:  # IPv6: "10:30:00" never parses, but "12::" does; want a real-looking address
        return match.count(":") >= 2 and (bool(re.search(r"[A-Fa-f]", match)) or "::" in match) and len(match) >= 3
    return not _VERSION_BEFORE.search(view[max(0, start - 12) : start])


def _spans(view: str, kind: str) -> Iterable[tuple[int, int]]:
    if kind == "secret":
        for m in _SECRET.finditer(view):
            yield m.span()
        for m in _LABELLED.finditer(view):
            # "password: hunter22" is a secret whatever it looks like; after "is"/"bearer" only a value
            # with a digit or a symbol is ("the bearer instruments", "the secret is patience" are not).
            value = m.group("value")
            if m.group("sep") in ("=", ":") or re.search(r"[\d_\-.~+/=!@#$%^&*]", value):
                yield m.span("value")
        for m in _LONG_TOKEN.finditer(view):
            if _is_secret_token(m.group()):
                yield m.span()
    elif kind == "email":
        for m in _EMAIL.finditer(view):
            yield m.span()
    elif kind == "card":
        for m in _CARD.finditer(view):
            if luhn_ok(_digits(m.group())) and len(set(_digits(m.group()))) > 1:
                yield m.span()
    elif kind == "my_number":
        for m in _MY_NUMBER.finditer(view):
            if my_number_ok(_digits(m.group())):
                yield m.span()
    elif kind == "phone":
        for m in _PHONE.finditer(view):
            if _phone_ok(m.group()):
                yield m.span()
    elif kind == "ip":
        for pattern in (_IPV4, _IPV6):
            for m in pattern.finditer(view):
                if _ip_ok(m.group(), view, m.start()):
                    yield m.span()


def placeholder(kind: str, text: str, start: int, end: int) -> str:
    """The placeholder for ``kind`` in the language of the 16 characters on each side."""
    around = text[max(0, start - 16) : start] + text[end : end + 16]
    english, japanese = PLACEHOLDERS[kind]
    return japanese if _CJK.search(around) else english


def redact(text: str, kinds: Iterable[str] = KINDS) -> tuple[str, dict[str, int]]:
    """``text`` with the PII of ``kinds`` replaced by placeholders, and how many of each kind went."""
    wanted = [k for k in KINDS if k in set(kinds)]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown PII kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
    counts: dict[str, int] = {}
    if not text or not wanted or not _MAYBE.search(_view(text)):
        return text, counts
    for kind in wanted:  # one kind at a time: a placeholder never matches a later kind
        view = _view(text)
        spans = sorted(set(_spans(view, kind)))
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        if not merged:
            continue
        out, last = [], 0
        for start, end in merged:
            out += [text[last:start], placeholder(kind, text, start, end)]
            last = end
        text = "".join(out) + text[last:]
        counts[kind] = len(merged)
    return text, counts


def redact_text(text: str, kinds: Iterable[str] = KINDS) -> str:
    return redact(text, kinds)[0]


def redact_value(value: Any, kinds: Iterable[str] = KINDS) -> Any:
    """Every string inside a JSON-like value (dict keys stay), redacted; other values as they are."""
    kinds = tuple(kinds)
    if isinstance(value, str):
        return redact(value, kinds)[0]
    if isinstance(value, dict):
        return {k: redact_value(v, kinds) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, kinds) for v in value)
    return value
