"""What a question asks of time beyond a window: a length of time ("how many days between the launch and
the demo?", 「引っ越しから何日？」) or an order ("which came first?", 「どっちが先？」). Neither names a span to
look in — the answer needs both events' own dates — so recall can fetch each event and let the reader
count or compare, rather than boost an invented window."""

from __future__ import annotations

import re

from .temporal_patterns import Cued

_DURATION = [
    Cued(r"\bhow\s+long\b|\bhow\s+many\s+(?:more\s+)?(?:days|weeks|months|years|hours|minutes|nights|decades)\b"
         r"|\bhow\s+much\s+(?:time|later|earlier)\b|\bhow\s+(?:soon|far\s+apart)\b", ("how ",)),
    Cued(r"\b(?:time|days|weeks|months|years|gap|interval)\s+(?:between|elapsed|passed|apart)\b|\belapsed\b|\bduration\b",
         ("between", "elapsed", "passed", "apart", "duration")),
    # 何日 asks a length before 間, 前, 後, 経つ, かかる, くらい, or alone at the end; 「何日に」「何年の」 ask a date.
    Cued(r"何\s*(?:週間|ヶ月|か月|カ月|ヵ月|ケ月|箇月|時間)"
         r"|何\s*(?:日|週|年|分)\s*(?:間|前|後|経|た[っつ]|かか|くらい|ぐらい|ほど|目|[?？]|$)"
         r"|(?:から|まで)\s*何\s*(?:日|年|週)", ("何",)),
    Cued(r"(?:どの|どれ)\s*(?:くらい|ぐらい)\s*(?:前|後|経|た[っつ]|かか|の(?:期間|間|時間))|期間|経過", ("くらい", "ぐらい", "期間", "経過")),
]
_TIME_NOUNS = "week|weekend|month|year|night|time|summer|spring|fall|autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_ORDER = [
    Cued(r"\bwhich\b[^?.!]*\b(?:first|earlier|earliest|sooner|later|latest|more\s+recent(?:ly)?|most\s+recent(?:ly)?|"
         rf"newer|older|last(?!\s+(?:{_TIME_NOUNS})))\b", ("which",)),
    Cued(r"\b(?:before\s+or\s+after|after\s+or\s+before)\b|\b(?:what|which)\s+order\b|\border\s+of\b|\bchronolog",
         ("before or", "after or", "order", "chronolog")),
    Cued(r"\b(?:first|earlier|sooner)\b[^?.!]*\bor\b", ("first", "earlier", "sooner"), (" or",)),
    Cued(r"先に|(?:どっち|どちら)\s*(?:が|を)?\s*(?:先|早|前|後|最初)|順番|順序|前後関係|前か後|後か前|より\s*(?:前|後|先|早)",
         ("先", "早", "前", "後", "最初", "順")),
]
# A yes-or-no question about two events' order: "did the launch happen before the demo?"
_ORDER_YES_NO = re.compile(r"\s*(?:did|was|were|had|has|have|is|does|do)\b[^?.!]*\b(?:before|after|earlier\s+than|later\s+than|prior\s+to)\b")


def asks_duration(text: str) -> bool:
    """A normalised question asks for a length of time: "how long ago", "how many days between", 「何日間」."""
    return any(next(pattern.finditer(text), None) for pattern in _DURATION)


def asks_order(text: str) -> bool:
    """A normalised question asks which of two events came first: "which came first", "before or after",
    "did X happen before Y", 「どっちが先」「先に」."""
    return bool(_ORDER_YES_NO.match(text)) or any(next(pattern.finditer(text), None) for pattern in _ORDER)
