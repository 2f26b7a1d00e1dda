"""Outcome reports (A8 success/failure tracking): what the user says about having tried something. Pure.

Only the user's own turns count, only statements (a question 「うまくいった？」 asks), and never a condition
or a wish: 「失敗したら慰めてね」, 「うまくいったらいいな」, "if it doesn't work" report nothing. Within one turn
the last report wins (「最初は失敗したけど、二回目はうまくいった」 is a success). Which procedure a report is about
is the matcher's job (nodes.knowledge.procedure_match); this module only reads the verdict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from lumina_memory.nodes.text.sentences import sentences

from .models import SourceTurn, as_source_turn
from .procedure_text import normal

Verdict = Literal["success", "failure"]

# After a past ending, ら/り/い/く/て/ての… turn a report into a condition, a wish or a noun (できたての).
_NOT_REPORT = r"(?![らりいくてっ]|こと|ことない)"
_JA_FAILURE = re.compile(
    r"(?:失敗(?:し(?:た|ちゃった|ちゃいました|てしまった|ました)|だった|でした|に終わった)|大失敗"
    r"|(?:うまく|上手く|上手に|ちゃんと)(?:いか|行か|でき)(?:なかった|ませんでした)|できなかった|できませんでした"
    r"|(?:ダメ|だめ|駄目)だった|しくじった)" + _NOT_REPORT)
_JA_SUCCESS = re.compile(
    r"(?:(?:うまく|上手く|上手に|ちゃんと|無事|きれいに|綺麗に)?(?:いった|行った|いきました|行きました|できた|できました)"
    r"|成功(?:し(?:た|ました)|だった|でした)|大成功)" + _NOT_REPORT)
_BARE_WENT = re.compile(r"(?<![うまく上手ちゃんと無事])(?:いった|行った|いきました|行きました)")
"""いった alone is "went" (京都に行った), no verdict: it needs うまく/上手く before it."""
_EN_FAILURE = re.compile(
    r"\b(?:(?:didn'?t|did not|doesn'?t|does not|won'?t) work|failed|fail(?:ed)? miserably|was a (?:failure|disaster|flop)"
    r"|turned out (?:badly|terrible|awful|wrong|bad)|(?:messed|screwed) (?:it |that |this )?up|ruined (?:it|them|the)"
    r"|went wrong|was a mess)\b", re.I)
_EN_SUCCESS = re.compile(
    r"\b(?:(?:it|that|this|they|the \w+|your \w+) (?:really |totally |actually )?worked|worked (?:great|perfectly|well|like a charm)"
    r"|was a (?:success|hit)|turned out (?:great|perfect|perfectly|well|amazing|delicious|fine)|nailed it|succeeded"
    r"|it works)\b", re.I)
_EN_CONDITION = re.compile(r"\b(?:if|unless|in case|hope|hopefully|whether|when you)\b", re.I)


def _ja_verdicts(sentence: str) -> list[tuple[int, Verdict]]:
    found: list[tuple[int, Verdict]] = [(m.start(), "failure") for m in _JA_FAILURE.finditer(sentence)]
    failures = [(m.start(), m.end()) for m in _JA_FAILURE.finditer(sentence)]
    for m in _JA_SUCCESS.finditer(sentence):
        inside_failure = any(a <= m.start() < b for a, b in failures)
        bare_went = _BARE_WENT.fullmatch(m.group(0)) is not None
        if not inside_failure and not bare_went:
            found.append((m.start(), "success"))
    return found


def _en_verdicts(sentence: str) -> list[tuple[int, Verdict]]:
    if _EN_CONDITION.search(sentence):
        return []
    failures = list(_EN_FAILURE.finditer(sentence))
    found: list[tuple[int, Verdict]] = [(m.start(), "failure") for m in failures]
    found += [(m.start(), "success") for m in _EN_SUCCESS.finditer(sentence)
              if not any(f.start() <= m.start() < f.end() for f in failures)]
    return found


def verdict_of(text: str) -> Verdict | None:
    """The last outcome a user's turn reports, or None."""
    found: list[tuple[int, int, Verdict]] = []
    for n, sentence in enumerate(sentences(normal(text))):
        sentence = sentence.strip()
        if not sentence or sentence.endswith(("?", "？")):
            continue
        found += [(n, at, v) for at, v in _ja_verdicts(sentence) + _en_verdicts(sentence)]
    return max(found)[2] if found else None


def reports(turns: Sequence[Mapping[str, Any] | Any]) -> list[tuple[SourceTurn, Verdict]]:
    """The user's turns that report an outcome, with their verdicts, in order."""
    out = []
    for turn in (as_source_turn(t) for t in turns):
        if turn["speaker"] != "user":
            continue
        verdict = verdict_of(turn["text"])
        if verdict is not None:
            out.append((turn, verdict))
    return out
