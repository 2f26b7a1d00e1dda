"""Lexicon emotion (F2) for Japanese and English: valence −1..1, arousal 0..1, tags.

Offline and deterministic; an LLM rater can replace it when configured. Small on purpose: it only
has to tell a worried or delighted segment from a neutral one for importance (L8).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

# word -> (valence, arousal, tag)
_LEXICON: dict[str, tuple[float, float, str]] = {
    "嬉しい": (0.8, 0.6, "joy"), "うれしい": (0.8, 0.6, "joy"), "楽しい": (0.7, 0.6, "joy"),
    "楽しみ": (0.7, 0.7, "anticipation"), "最高": (0.9, 0.8, "joy"), "好き": (0.6, 0.4, "love"),
    "大好き": (0.8, 0.6, "love"), "ありがとう": (0.6, 0.3, "gratitude"), "感謝": (0.6, 0.3, "gratitude"),
    "よかった": (0.7, 0.4, "relief"), "良かった": (0.7, 0.4, "relief"), "安心": (0.5, 0.2, "relief"),
    "すごい": (0.6, 0.7, "surprise"), "素敵": (0.7, 0.5, "joy"), "美味しい": (0.6, 0.4, "joy"),
    "おいしい": (0.6, 0.4, "joy"), "わくわく": (0.7, 0.8, "anticipation"), "ワクワク": (0.7, 0.8, "anticipation"),
    "成功": (0.7, 0.6, "pride"), "うまくいった": (0.7, 0.6, "pride"), "喜": (0.6, 0.5, "joy"),
    "頑張": (0.4, 0.6, "determination"), "がんば": (0.4, 0.6, "determination"), "決め": (0.3, 0.5, "determination"),
    "不安": (-0.7, 0.7, "anxiety"), "心配": (-0.6, 0.6, "anxiety"), "緊張": (-0.5, 0.8, "anxiety"),
    "怖い": (-0.7, 0.8, "fear"), "こわい": (-0.7, 0.8, "fear"), "ストレス": (-0.6, 0.7, "stress"),
    "疲れ": (-0.5, 0.3, "fatigue"), "しんどい": (-0.6, 0.4, "fatigue"), "つらい": (-0.7, 0.5, "sadness"),
    "辛い": (-0.6, 0.5, "sadness"), "悲しい": (-0.8, 0.4, "sadness"), "寂しい": (-0.6, 0.3, "sadness"),
    "さびしい": (-0.6, 0.3, "sadness"), "落ち込": (-0.7, 0.3, "sadness"), "泣": (-0.6, 0.6, "sadness"),
    "怒": (-0.7, 0.9, "anger"), "イライラ": (-0.6, 0.8, "anger"), "最悪": (-0.9, 0.8, "anger"),
    "失敗": (-0.6, 0.5, "disappointment"), "残念": (-0.5, 0.3, "disappointment"), "嫌": (-0.6, 0.5, "disgust"),
    "happy": (0.8, 0.6, "joy"), "glad": (0.7, 0.4, "joy"), "love": (0.8, 0.6, "love"), "great": (0.7, 0.6, "joy"),
    "excited": (0.7, 0.8, "anticipation"), "thanks": (0.6, 0.3, "gratitude"), "thank": (0.6, 0.3, "gratitude"),
    "proud": (0.7, 0.6, "pride"), "fun": (0.6, 0.6, "joy"), "wonderful": (0.8, 0.6, "joy"),
    "sad": (-0.8, 0.4, "sadness"), "worried": (-0.6, 0.6, "anxiety"), "anxious": (-0.7, 0.7, "anxiety"),
    "nervous": (-0.5, 0.8, "anxiety"), "stressed": (-0.6, 0.7, "stress"), "stress": (-0.6, 0.7, "stress"),
    "angry": (-0.7, 0.9, "anger"), "tired": (-0.5, 0.3, "fatigue"), "afraid": (-0.7, 0.8, "fear"),
    "lonely": (-0.6, 0.3, "sadness"), "failed": (-0.6, 0.5, "disappointment"), "hate": (-0.8, 0.8, "disgust"),
}
_NEGATIONS = ("ない", "なかった", "not ", "n't", "never")


@dataclass(frozen=True)
class Emotion:
    valence: float = 0.0
    arousal: float = 0.0
    tags: tuple[str, ...] = field(default_factory=tuple)
    method: str = "lexicon"


def analyse(text: str) -> Emotion:
    norm = unicodedata.normalize("NFKC", text).lower()
    hits: list[tuple[float, float, str]] = []
    for word, (valence, arousal, tag) in _LEXICON.items():
        pos = norm.find(word)
        if pos < 0:
            continue
        tail = norm[pos + len(word) : pos + len(word) + 6]
        negated = any(n in tail for n in _NEGATIONS[:2]) or any(
            n in norm[max(0, pos - 6) : pos] for n in _NEGATIONS[2:]
        )
        hits.append((-valence * 0.5 if negated else valence, arousal, tag))
    if not hits:
        return Emotion()
    valence = max(-1.0, min(1.0, sum(h[0] for h in hits) / len(hits) * min(1.0, 0.6 + 0.2 * len(hits))))
    arousal = max(h[1] for h in hits)
    tags = tuple(dict.fromkeys(h[2] for h in hits))
    return Emotion(round(valence, 4), round(arousal, 4), tags)
