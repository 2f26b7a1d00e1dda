"""F8: does a turn ask for its memory to be protected (「覚えておいて」, "don't forget")?

Read clause by clause: a clause is a request when it holds a request phrase and no phrase that
cancels it (「覚えておかなくていい」, 「忘れていいよ」, "no need to remember", reported speech such
as 「忘れないでって言われた」). Phrases describing one's own memory ("I remember this", 「覚えてる？」,
"I'll never forget that day") are not requests. Patterns are compiled once, at import.
"""

from __future__ import annotations

import re
import unicodedata

from .important_tag import has_important_tag
from .sentences import sentences

_JA_REQUEST = re.compile(
    "|".join((
        # 覚えておいて / 覚えといて / 覚えててね / 覚えておいてほしい / 覚えとけ / これ覚えて。
        r"覚え(?:て(?:おいて|おけ(?!な)|おきな|おくように|て(?:ね|よ|ほしい|欲しい|ください|くれ|!|。|$)"
        r"|ください|ほしい|欲しい|くれ|ね|よ|!|。|$)|とい?て|とけ(?!な))",
        r"忘れ(?:ないで|ないように|るな(?!んて)|ちゃ(?:だめ|ダメ|いけない)|ては(?:いけない|だめ|ダメ))",
        # これは大事 / それ重要だから — but not 大事な会議 (describing, not asking)
        r"(?:これ|それ|ここ|この話|このこと|今の)(?:は|が)?(?:本当に|ほんとに|すごく|とても|めっちゃ|絶対)?"
        r"(?:大事|重要|大切)(?![なに])",
        r"(?:記憶|メモ)(?:して(?:おいて|ね|ください|ほしい|欲しい|くれ|!|。|$)|しといて)",
        r"心に留めて|肝に銘じて",
    ))
)
_JA_CANCEL = re.compile(
    "|".join((
        r"なくて(?:も)?(?:いい|良い|よい|大丈夫|平気|ok)",  # 覚えておかなくていい, 覚えなくても大丈夫
        r"(?:ほし|欲し)くない",
        r"忘れて(?:いい|も|ください|ね|くれ|ok|!|。|$)",
        r"(?:大事|重要|大切)(?:じゃ|では|でも)?(?:ない|なかった)",
        r"言われ",  # someone else's request, reported
        r"ないでいてくれ(?:た|て)",  # 忘れないでいてくれてありがとう: thanks, not a request
    ))
)
_EN_REQUEST = re.compile(
    "|".join((
        # imperative "remember": clause start, after please / you must / can you / a comma
        r"(?:^|\bplease\s+|\byou\s+(?:must|should|need\s+to|have\s+to|gotta|to)\s+"
        r"|\b(?:can|could|will|would)\s+you\s+(?:please\s+)?|[,;:\-]\s*|\band\s+)"
        r"remember\b(?!\s+when\b)(?!\s+(?:that|the)\s+(?:time|day)\b)",
        r"(?:^|\bplease\s+|[,;:\-]\s*|\band\s+)(?:don'?t|do\s+not|never)\s+forget\b",
        r"\bdon'?t\s+let\s+(?:me|us)\s+forget\b",
        r"\bmake\s+sure\s+(?:you\s+|to\s+)?(?:remember|(?:you\s+)?don'?t\s+forget|not\s+to\s+forget)\b",
        r"\bkeep\s+(?:this|that|it)\s+in\s+mind\b",
        r"\b(?:memori[sz]e|make\s+a\s+note\s+of|take\s+note\s+of)\s+(?:this|that|it)\b",
        r"\b(?:note|write|jot)\s+(?:this|that|it)\s+down\b",
        r"\b(?:this|that)(?:'s|\s+is)\s+(?:really\s+|very\s+|super\s+|so\s+)?important\b(?!\s+to\s+(?!remember|me\b|us\b))",
    ))
)
_EN_CANCEL = re.compile(
    "|".join((
        r"\bno\s+need\s+to\s+(?:remember|keep|save)\b",
        r"\b(?:don'?t|do\s+not|doesn'?t)\s+(?:need|have)\s+to\s+(?:remember|keep)\b",
        r"(?<!n't\s)(?<!not\s)(?<!never\s)(?<!dont\s)\bforget\s+(?:about\s+)?(?:it|this|that|what\s+i\s+said)\b",
        r"\b(?:isn'?t|is\s+not|not)\s+(?:that\s+|very\s+|really\s+)?important\b",
        r"\b(?:told|asked|reminded)\s+me\s+(?:to\s+remember|not\s+to\s+forget|to\s+never\s+forget)\b",
    ))
)


def protect_request(text: str) -> bool:
    """True when the speaker asks for this to be remembered (F8 protected memory), in words or with the notes'
    ``[IMPORTANT]`` tag (nodes.text.important_tag)."""
    if has_important_tag(text):
        return True
    for sentence in sentences(unicodedata.normalize("NFKC", text)):
        clause = sentence.lower().replace("’", "'")
        if _JA_REQUEST.search(clause) and not _JA_CANCEL.search(clause):
            return True
        if _EN_REQUEST.search(clause) and not _EN_CANCEL.search(clause):
            return True
    return False
