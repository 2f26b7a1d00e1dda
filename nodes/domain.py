"""Topic domain of a message from a small bilingual lexicon (L2's "domain change" rule).

Deliberately conservative: a domain is only named when the message clearly belongs to one, because a
wrong guess would cut a segment in two.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

DOMAINS: dict[str, tuple[str, ...]] = {
    "movie": ("映画", "監督", "上映", "俳優", "シネマ", "movie", "film", "cinema"),
    "food": ("料理", "レシピ", "焼い", "焼く", "ケーキ", "食べ", "ご飯", "ランチ", "夕飯", "紅茶", "recipe", "cook", "food"),
    "travel": ("旅行", "観光", "ホテル", "新幹線", "trip", "travel", "hotel"),
    "work": ("仕事", "会社", "上司", "会議", "プレゼン", "資料", "残業", "職場", "work", "meeting", "boss"),
    "health": ("ランニング", "走っ", "走る", "運動", "ジム", "睡眠", "健康", "ストレッチ", "running", "exercise", "workout"),
    "game": ("ゲーム", "プレイ", "攻略", "ステージ", "ボス戦", "game", "gaming"),
    "music": ("音楽", "ライブ", "ギター", "ピアノ", "music", "song", "concert"),
    "astronomy": ("宇宙", "星座", "流れ星", "星空", "天体", "流星", "惑星", "望遠鏡", "月食", "星座", "star", "planet", "telescope"),
    "pet": ("猫", "ペット", "子猫", "獣医", "cat", "dog", "pet"),
    "book": ("小説", "読書", "作家", "図書館", "book", "novel"),
}


@lru_cache(maxsize=8192)  # each open-segment turn is judged again on every later turn of the segment
def detect_domain(text: str, min_hits: int = 2) -> str:
    """The domain with the most cue words, if it has at least ``min_hits`` and no rival ties it."""
    norm = unicodedata.normalize("NFKC", text).lower()
    scores = {d: sum(norm.count(cue) for cue in cues) for d, cues in DOMAINS.items()}
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    return best if top >= min_hits and top > second else ""
