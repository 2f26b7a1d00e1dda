"""How procedural text reads, offline (Japanese over Sudachi, English by word shape): pure functions.

- ``clauses``: a turn cut into sentences, and sentences into the clauses a sequence marker starts
  (「まず…、次に…」, 「〜してから〜する」, numbered items 1. 2. / ①②, "first …, then …, finally …").
- ``quantities``: the numbers with their units (200g, 170度, 40分, 大さじ1, 350°F, 2 cups), units normalised,
  so 「170度で40分」 and 「160度で50分」 can be seen to disagree.
- ``is_action``: a clause that tells to do something (an object and a verb, a request, an imperative).
- A clause is ``narrative`` when its sentence ends in the past (「焼いたら…きつね色になった」, "I baked it"):
  the user telling what she did is no instruction.
- ``content_words`` / ``task_key``: the words two texts are compared by (Sudachi normalised forms,
  English light lemmas).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from lumina_memory.nodes.text.noun_lemma import noun_lemma
from lumina_memory.nodes.text.sentences import sentences as split_sentences
from lumina_memory.nodes.text.tokenize import EN_STOP, STOP_NOUNS, morphemes, nouns, terms

_JA_CHARS = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

# Numbered items: "1. ", "2) ", "３．" (not 1.5), ①…⑳, "Step 3", 「ステップ2」. A line break goes before each.
_NUMBERED = re.compile(r"(?:(?<!\S)\d{1,2}[.)．）](?!\d)|[\u2460-\u2473]|(?<![A-Za-z])[Ss]tep\s*\d{1,2}\b|ステップ\s*\d{1,2})")
_JA_CLAUSE = re.compile(r"、(?=(?:次に|次は|それから|その後|そのあと|続いて|最後に|仕上げに))|(?<=[てで]から)、?")
_EN_CLAUSE = re.compile(r"[,;]\s*(?=(?:and\s+)?(?:then|next|after that|afterwards|finally|lastly)\b)", re.I)
_JA_MARKER = re.compile(r"^(?:まずは?|最初に|最初は|はじめに|初めに|次に|次は|それから|その後|そのあと|続いて|最後に|最後は|仕上げに)")
_EN_MARKER = re.compile(r"^(?:and\s+)?(?:first(?:ly)?|to start|start by|begin by|then|next(?! (?:time|week|month|year|day))|"
                        r"after that|afterwards|finally|lastly|step\s*\d+)\b", re.I)
_NUMBER_START = re.compile(r"^(?:\d{1,2}[.)．）](?!\d)|[\u2460-\u2473]|[Ss]tep\s*\d{1,2}|ステップ\s*\d{1,2})")
_TEKARA = re.compile(r"[てで]から")

_UNITS = {
    "kg": "kg", "mg": "mg", "g": "g", "gram": "g", "grams": "g", "ml": "ml", "cc": "ml", "l": "l",
    "°c": "deg", "°": "deg", "度": "deg", "degree": "deg", "degrees": "deg", "°f": "degF",
    "分": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "秒": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "時間": "h", "hour": "h", "hours": "h", "hr": "h", "hrs": "h",
    "個": "pc", "枚": "sheet", "本": "stick", "cm": "cm", "mm": "mm", "カップ": "cup", "cup": "cup", "cups": "cup",
    "tbsp": "tbsp", "tablespoon": "tbsp", "tablespoons": "tbsp", "大さじ": "tbsp", "大匙": "tbsp",
    "tsp": "tsp", "teaspoon": "tsp", "teaspoons": "tsp", "小さじ": "tsp", "小匙": "tsp",
    "oz": "oz", "ounce": "oz", "ounces": "oz", "inch": "inch", "inches": "inch", "lb": "lb", "lbs": "lb",
    "pound": "lb", "pounds": "lb",
}
_UNIT_AFTER = re.compile(
    r"(\d+(?:\.\d+)?)\s*(°[cf]|°|kg|mg|ml|cc|grams?|g|l|度|分|秒|時間|個|枚|本|cm|mm|カップ|cups?|tbsp|tsp|"
    r"tablespoons?|teaspoons?|degrees?|minutes?|mins?|seconds?|secs?|hours?|hrs?|oz|ounces?|inch(?:es)?|lbs?|pounds?)"
    r"(?![a-z])", re.I)
_UNIT_BEFORE = re.compile(r"(大さじ|小さじ|大匙|小匙)\s*(\d+(?:\.\d+)?)")

_EN_NARRATIVE_START = frozenset("i we he she they my our his her their it its yesterday last i've i'd we've "
                                "i'm we're".split())
_EN_PAST = frozenset("was were did had went made took got saw came ate ran put let set cut felt kept left "
                     "found gave told thought bought brought tried baked cooked burnt burned".split())
_EN_NOT_VERB = frozenset(EN_STOP | set(
    "oh wow thanks thank ok okay yes yeah sure great cool nice haha lol hmm well sounds sorry please "
    "good perfect awesome anyway also because since while though although got love see alright right uh um "
    "aha mhm interesting maybe hopefully probably first then next finally lastly out".split()))
_EN_SKIP = frozenset("just then and also don't dont never always gently carefully slowly quickly now".split())
_SUFFIX_SPEECH = frozenset("笑 w ｗ 〜 ~ ー".split())


@dataclass(frozen=True)
class Clause:
    """A clause of a turn with what makes it a step."""

    text: str
    markers: int
    """Sequence markers in it: a leading まず/次に/then/1./①, and 〜てから."""
    question: bool
    narrative: bool
    language: str


def is_japanese(text: str) -> bool:
    return bool(_JA_CHARS.search(text))


def normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _sentences(text: str) -> list[str]:
    marked = _NUMBERED.sub(lambda m: "\n" + m.group(0), text)
    return split_sentences(marked)


def _ja_past(sentence: str) -> bool:
    """The sentence's last predicate is in the past (た, or だ after a verb: 飲んだ)."""
    ms = [m for m in morphemes(sentence)
          if m.pos[0] not in ("補助記号", "空白") and m.pos[1] != "終助詞" and m.surface not in _SUFFIX_SPEECH]
    if not ms:
        return False
    last = ms[-1]
    if last.pos[0] != "助動詞" or last.surface not in ("た", "だ"):
        return False
    return last.surface == "た" or (len(ms) > 1 and ms[-2].pos[0] == "動詞")


def _en_words(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z'’-]*", normal(text).lower().replace("’", "'"))


def _en_narrative(sentence: str) -> bool:
    """Someone telling what happened: "I baked it for 40 minutes" (a teacher's "I usually bake it…" still teaches)."""
    words = _en_words(_EN_MARKER.sub("", _NUMBER_START.sub("", sentence.strip())).strip(" ,"))
    return bool(words) and words[0] in _EN_NARRATIVE_START and any(
        w in _EN_PAST or (w.endswith("ed") and len(w) > 4) for w in words[1:])


def clauses(text: str) -> list[Clause]:
    """The turn's clauses in order, each with its markers and whether it asks or narrates."""
    out: list[Clause] = []
    for sentence in _sentences(text):
        ja = is_japanese(sentence)
        question = sentence.rstrip().endswith(("?", "？"))
        narrative = _ja_past(sentence) if ja else _en_narrative(sentence)
        parts = (_JA_CLAUSE if ja else _EN_CLAUSE).split(sentence)
        for part in (p.strip(" 、,;") for p in parts):
            if not part:
                continue
            if ja:
                markers = bool(_JA_MARKER.match(part)) + len(_TEKARA.findall(part))
            else:
                markers = int(bool(_EN_MARKER.match(part)))
            markers += int(bool(_NUMBER_START.match(part)))
            out.append(Clause(part, markers, question, narrative, "ja" if ja else "en"))
    return out


def quantities(text: str) -> list[tuple[float, str]]:
    """(value, normalised unit) for every measured amount: 200g → (200, g), 大さじ1 → (1, tbsp)."""
    t = normal(text).lower()
    found = [(float(v), _UNITS[u.lower()]) for v, u in _UNIT_AFTER.findall(t)]
    found += [(float(v), _UNITS[u]) for u, v in _UNIT_BEFORE.findall(t)]
    return found


def is_action(clause: Clause) -> bool:
    """Tells to do something: Japanese, a general verb with an object (〜を…) or in a request, polite,
    imperative or volitional form; English, a clause that starts with a verb (an imperative)."""
    if clause.language == "ja":
        ms = [m for m in morphemes(clause.text) if m.pos[0] not in ("補助記号", "空白") and m.pos[1] != "終助詞"]
        verbs = [i for i, m in enumerate(ms) if m.pos[0] == "動詞" and m.pos[1] == "一般"]
        if not verbs:
            return False
        if any(m.surface == "を" and m.pos[0] == "助詞" and i < verbs[-1] for i, m in enumerate(ms)):
            return True
        last = ms[-1]
        return (last.surface in ("て", "で", "ください", "下さい") or last.dictionary == "ます"
                or last.pos[5].startswith(("命令形", "意志推量形"))
                or (last.pos[0] == "動詞" and last.pos[1] == "一般" and last.pos[5].startswith("終止形")))
    words = _en_words(_EN_MARKER.sub("", _NUMBER_START.sub("", clause.text.strip())).strip(" ,:"))
    while words and words[0] in _EN_SKIP:
        words = words[1:]
    if words and words[0] == "you" and len(words) > 1 and not words[1].endswith("ed"):
        words = words[1:]  # "you mix…" reads as an instruction; "you baked…" does not
    return len(words) >= 2 and words[0] not in _EN_NOT_VERB


# Words that name the kind of text, not what it is about: a recipe of X and a how-to of X share X only.
_GENERIC = frozenset("レシピ 作り方 作る 遣り方 手順 方法 こつ コツ 材料 教える 分量 順番 "
                     "recipe instruction step way how make cook ingredient".split())


def content_words(text: str) -> list[str]:
    """Content words in order (Sudachi normalised forms; English lower-cased light lemmas), without numbers,
    units and the words that only say "a recipe" or "how to"."""
    out: list[str] = []
    for w in terms(text) if is_japanese(text) else ():
        if not w.isascii() and not re.fullmatch(r"[\d.]+", w) and w not in _GENERIC and w not in _UNITS:
            out.append(w)
    for w in _en_words(text):
        lemma = noun_lemma(w)
        if w not in EN_STOP and lemma not in _GENERIC and w not in _UNITS and len(w) > 1:
            out.append(lemma)
    return out


def task_key(title: str) -> str:
    """The title's content words, normalised: 「チーズケーキ」 and "Pancakes"/"pancake" each have one key."""
    return " ".join(dict.fromkeys(content_words(title)))


def frequent_nouns(texts: list[str], limit: int) -> list[str]:
    """The nouns said most often across ``texts`` (first said first among equals), no units or numbers."""
    counts: Counter = Counter()
    for text in texts:
        if is_japanese(text):
            counts.update(n for n in nouns(text) if n not in _UNITS and n.lower() not in _UNITS
                          and n not in STOP_NOUNS and not re.fullmatch(r"[\d.]+", n) and n not in _GENERIC)
        else:
            counts.update(noun_lemma(w) for w in _en_words(text)
                          if w not in _EN_NOT_VERB and w not in _UNITS and noun_lemma(w) not in _GENERIC and len(w) > 2)
    return [w for w, _ in counts.most_common(limit)]
