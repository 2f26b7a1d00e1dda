"""Korean and Chinese time words rewritten into the Japanese the cue finders read: "2023년 5월 8일" →
「2023年5月8日」, "지난주" → 「先週」, "上个月" → 「先月」, "三天前" → 「3日前」. Japanese text is left alone: the
Chinese words rewritten here are not Japanese ones (前年, "the previous year" in Japanese, is not read as Chinese
"the year before last")."""

from __future__ import annotations

import re
from typing import Callable

from lumina_memory.nodes.text.calendar.numerals import kanji_number

from .temporal_patterns import rewrite

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


def _korean_rules() -> list[Callable[[str], str]]:
    counts = "|".join(sorted(_KO_DIGITS, key=len, reverse=True))
    weekday = "".join(_KO_WEEKDAYS)
    return [
        rewrite(r"(\d{4})\s*년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일", lambda m: f"{m[1]}年{m[2]}月{m[3]}日"),
        rewrite(r"(\d{4})\s*년\s*(\d{1,2})\s*월", lambda m: f"{m[1]}年{m[2]}月"),
        rewrite(r"(?<!\d)(\d{1,2})\s*월\s*(\d{1,2})\s*일", lambda m: f"{m[1]}月{m[2]}日"),
        rewrite(rf"(\d{{1,3}}|{counts})\s*(주일|개월|일|주|달|년)\s*전", _ko_ago),
        rewrite(rf"지난\s*([{weekday}])요일", lambda m: f"先週の{_KO_WEEKDAYS[m[1]]}曜日"),
        rewrite(r"(\d{4})\s*년", lambda m: f"{m[1]}年"),
        rewrite(r"(?<!\d)(\d{1,2})\s*월(?!\s*\d)", lambda m: f"{m[1]}月"),
        rewrite("|".join(p for p, _ in _KO_PHRASES), lambda m: dict(_KO_PHRASES)[m.group()]),
    ]


def _chinese_rules() -> list[Callable[[str], str]]:
    units = "|".join(sorted(_ZH_UNITS, key=len, reverse=True))
    return [
        rewrite(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[号號]", lambda m: f"{m[1]}月{m[2]}日"),
        rewrite(rf"(\d{{1,3}}|[一二三四五六七八九十两兩]+)\s*({units})\s*(?:以前|之前|前)", _zh_ago),
        rewrite(r"上(?:个|個)?(?:星期|周|週|礼拜|禮拜)([一二三四五六日天])", lambda m: f"先週の{_ZH_WEEKDAYS[m[1]]}曜日"),
        rewrite("|".join(p for p, _ in _ZH_PHRASES), lambda m: dict(_ZH_PHRASES)[m.group()]),
    ]


_KOREAN = _korean_rules()
_CHINESE = _chinese_rules()
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_ZH_ONLY = re.compile("|".join(p for p, _ in _ZH_PHRASES) + r"|[号號天]|以前|之前|个|個")


def to_japanese(text: str) -> str:
    """``text`` (NFKC, lower case) with its Korean and Chinese time words in Japanese."""
    if _HANGUL.search(text):
        for rule in _KOREAN:
            text = rule(text)
    # Chinese only where the text is not Japanese: kana mark Japanese, and 前天 or 个月 are not Japanese words.
    if not _KANA.search(text) and _ZH_ONLY.search(text):
        for rule in _CHINESE:
            text = rule(text)
    return text
