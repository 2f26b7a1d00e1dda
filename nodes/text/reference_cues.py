"""F6 ``references``: does a turn explicitly refer back to an earlier conversation (「この前話した…」, "as I said")?

The notes' example of a ``references`` relation is 「前に話した○○」への言及, and their time-ordered lookup is
triggered by 「前回」「以前」「この前」. A cue here is a phrase that points at something said before, not at a
time: 「寝る前に」, 「この前髪」 (bangs), "before the meeting" are not cues. Which earlier memory the turn means
is not decided here (nodes.lifecycle.encode_relations matches it by meaning, above a floor), so a cue that is
sometimes loose (「先週の」, "last time") costs nothing when nothing earlier matches. Patterns compile once.
"""

from __future__ import annotations

import re
import unicodedata

_JA_CUES = re.compile(
    "|".join((
        # この前の / この前話した / この前、 — not この前髪, この前後
        r"この(?:前|間|あいだ)(?:の|は|も|、|,|さ|話|言|教え|聞い|相談)",
        r"(?<![名午直事手寸目腕出建])前(?:に|にも|回)?(?:話し|はなし|言っ|話題に|教え|相談し|聞い)(?:た|て)",  # not 名前言って
        r"前回(?:の|話|言|は)",
        r"以前(?:の話|話し|言っ|教え|相談し)",
        r"あの(?:時|とき|日)(?:の|に|は|、)",
        r"(?:先週|先月|昨日|おととい|一昨日|こないだ)(?:の|話し|言っ|相談し|教え)",
        r"さっき(?:の|話し|言っ|教え)",
        r"言って(?:た|いた|ました)",  # 言ってた / 言っていた (not いってた: 行ってた, went)
        r"話して(?:た|いた|ました)(?:よね|でしょ|じゃん|けど|こと|やつ|話|件)",
        r"例の(?:話|件|あれ|こと)",
        r"覚えて(?:る|いる|ます)(?:\?|か|よね|かな)",
    ))
)
_EN_CUES = re.compile(
    "|".join((
        r"\b(?:as|like)\s+i\s+(?:said|mentioned|told\s+you|was\s+saying)\b",
        r"\bremember\s+(?:when|that\s+time|the\s+time|how|what\s+i\s+(?:said|told))\b",
        r"\b(?:do|did)\s+you\s+remember\b",
        r"\blast\s+time\b",
        r"\bthe\s+other\s+day\b",
        r"\b(?:we|i)\s+(?:talked|spoke|were\s+talking|chatted)\s+about\b",
        r"\bi\s+(?:told|was\s+telling)\s+you\s+(?:about|that)\b",
        r"\byou\s+(?:said|mentioned|told\s+me)\s+(?:earlier|before|last)\b",
        r"\bearlier\s+(?:you|i|we)\s+(?:said|mentioned|talked)\b",
        r"\b(?:that|the)\s+thing\s+(?:i|you|we)\s+(?:said|mentioned|talked\s+about)\b",
    ))
)


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower().replace("’", "'")


def reference_cues(text: str) -> list[str]:
    """The cue phrases in ``text`` (normalised: NFKC, lower case), in order; empty when it refers to nothing."""
    norm = _normalise(text)
    found = [(m.start(), m.group(0)) for pattern in (_JA_CUES, _EN_CUES) for m in pattern.finditer(norm)]
    return [phrase for _start, phrase in sorted(found)]


def refers_back(text: str) -> bool:
    """True when the speaker refers back to something said in an earlier conversation."""
    norm = _normalise(text)
    return bool(_JA_CUES.search(norm) or _EN_CUES.search(norm))
