"""Kanji numerals as numbers: 三 3, 十五 15, 二十三 23, 二千二十三 2023, and digit by digit 二〇二三 2023 (Japanese
and Chinese write dates and counts with them)."""

from __future__ import annotations

KANJI_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
KANJI_POWERS = {"十": 10, "百": 100, "千": 1000}


def kanji_number(text: str) -> int:
    """A kanji numeral: 三 3, 十五 15, 二十三 23, 二千二十三 2023, and digit by digit 二〇二三 2023."""
    if not any(ch in KANJI_POWERS for ch in text):
        return int("".join(str(KANJI_DIGITS[ch]) for ch in text))
    total, digit = 0, 0
    for ch in text:
        if ch in KANJI_DIGITS:
            digit = KANJI_DIGITS[ch]
        else:  # 十, 百 or 千 multiplies the digit before it (一 when there is none)
            total += (digit or 1) * KANJI_POWERS[ch]
            digit = 0
    return total + digit
