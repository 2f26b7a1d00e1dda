"""A time the question names as the value of a decision, not as when something happened: "when did we move
the deadline to August 19?", "we settled on June 3", 「締め切りを8月19日にした日」「会議を来週に延期した」. The
decision was made on some other day (usually before that date), so such a time opens no window: boosting
the days around August 19 would point away from the turn that set it."""

from __future__ import annotations

import re

from .temporal_calendar import Cue

# A verb that sets a value, then its object, then the word that introduces the new value ("moved the
# deadline to", "fixed it at", "pushed it back until"); "settled on" names the value directly ("decided on"
# does not: "what did we decide on June 3?" asks what was decided that day).
_EN_SETTER = re.compile(
    r"\b(?:set|sets|setting|fix(?:ed|es|ing)?|mov(?:e|ed|es|ing)|chang(?:e|ed|es|ing)|push(?:ed|es|ing)?|"
    r"postpon(?:e|ed|es|ing)|reschedul(?:e|ed|es|ing)|delay(?:ed|s|ing)?|extend(?:ed|s|ing)?|shift(?:ed|s|ing)?|"
    r"bump(?:ed|s|ing)?|updat(?:e|ed|es|ing)|brought|bring(?:s|ing)?)\b[^.?!;:]{0,50}?\b(?:to|for|at|until|till|as)\s+(?:the\s+)?$"
    r"|\bsettl(?:e|ed|es|ing)\s+(?:on|upon)\s+(?:the\s+)?$")
# 「8月19日に延期」「来週に変更」: the time, then に/へ/まで and a verb that moves something to it.
_JA_SETTER_AFTER = re.compile(r"\s*(?:に|へ|まで)\s*(?:変更|変え|延期|延長|ずら|移|前倒し|繰り上げ|繰り下げ)")
# 「締め切りを8月19日にした／に決めた」: with を before it; without, 「先月末に決めた」 is when it was decided.
_JA_MADE = re.compile(r"\s*(?:に|へ)\s*(?:した|して|する|しよう|しま|決め|決ま|決定|設定|固定)")
_JA_OBJECT_BEFORE = re.compile(r"を\s*$")


_LEADING_WORD = re.compile(r"(?:to|for|at|until|till|as)\s+")  # a cue may begin with its preposition ("to june")


def is_value(text: str, cue: Cue) -> bool:
    lead = _LEADING_WORD.match(text, cue.start)
    before = lead.end() if lead else cue.start
    if _EN_SETTER.search(text, max(0, before - 70), before):
        return True
    if _JA_SETTER_AFTER.match(text, cue.end):
        return True
    return bool(_JA_MADE.match(text, cue.end) and _JA_OBJECT_BEFORE.search(text, max(0, cue.start - 3), cue.start))
