"""Reading Japanese grammar off Sudachi morphemes: noun phrases, the auxiliaries after a predicate, topics.

The patterns in ``ja_patterns`` are written with these; nothing here knows about attributes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lumina_memory.nodes.text.tokenize import Morpheme

FIRST_PERSON = frozenset("私 僕 俺 あたし わたし うち 自分 ぼく おれ わし わたくし".split())
HONORIFICS = frozenset("さん ちゃん くん 君 様 さま たん".split())
_VAGUE_NOUNS = frozenset("こと もの 物 事 の ん 方 ほう 感じ 奴 やつ ところ 所 気 時 とき ため よう そう".split())
INTERROGATIVES = frozenset("何 なに なん どこ 誰 だれ いつ どう どんな どれ なぜ 何で どちら どっち いくつ 幾つ".split())
CLAUSE_LINKS = frozenset("けど けれど けれども が から ので のに し ながら".split())
_KATAKANA = re.compile(r"^[\u30a0-\u30ffー・]+$")
_HIRAGANA = re.compile(r"^[\u3040-\u309fー]+$")


def is_katakana(text: str) -> bool:
    return bool(_KATAKANA.match(text))


def is_hiragana(text: str) -> bool:
    return bool(_HIRAGANA.match(text))


def key_of(toks: tuple[Morpheme, ...] | list[Morpheme]) -> str:
    """Normalised forms joined: コーヒー / 珈琲 and ネコ / 猫 give one key."""
    return "".join(t.normalized.lower() if t.surface.isascii() else t.normalized for t in toks)


def surface_of(toks: tuple[Morpheme, ...] | list[Morpheme]) -> str:
    return "".join(t.surface for t in toks)


def is_noun_part(t: Morpheme) -> bool:
    """A morpheme that can be part of a thing's name (not time words such as 最近, 毎朝)."""
    p0, p1, p2 = t.pos[0], t.pos[1], t.pos[2]
    if p0 == "名詞":
        return p2 != "副詞可能" or is_katakana(t.surface)
    return p0 == "接頭辞" or (p0 == "接尾辞" and p1 == "名詞的" and p2 != "助数詞")


def noun_span_before(toks: tuple[Morpheme, ...], end: int) -> tuple[int, int] | None:
    """The noun phrase ending right before ``end``: contiguous noun parts, never just a number or a vague noun."""
    start = end
    while start > 0 and (is_noun_part(toks[start - 1]) or _joins_ascii(toks, start - 1)):
        start -= 1
    while start < end and toks[start].pos[0] == "接尾辞":  # a phrase does not start with a suffix
        start += 1
    span = toks[start:end]
    if not span or all(t.pos[1] == "数詞" for t in span) or span[-1].surface in _VAGUE_NOUNS:
        return None
    if span[-1].pos[0] == "接頭辞":
        return None
    return start, end


def _joins_ascii(toks: tuple[Morpheme, ...], k: int) -> bool:
    """A hyphen inside an ASCII name (K-POP, T-shirt)."""
    return (toks[k].surface in ("-", "・") and 0 < k < len(toks) - 1 and toks[k - 1].surface.isascii()
            and toks[k + 1].surface.isascii() and is_noun_part(toks[k - 1]))


def noun_span_after(toks: tuple[Morpheme, ...], start: int) -> tuple[int, int] | None:
    end = start
    while end < len(toks) and (is_noun_part(toks[end]) or _joins_ascii(toks, end)):
        end += 1
    return noun_span_before(toks, end) if end > start else None


def strip_honorific(toks: tuple[Morpheme, ...] | list[Morpheme]) -> list[Morpheme]:
    out = list(toks)
    while len(out) > 1 and out[-1].surface in HONORIFICS:
        out.pop()
    return out


@dataclass(frozen=True)
class Mood:
    """What the auxiliaries after a predicate say about it."""

    negated: bool = False
    past: bool = False
    progressive: bool = False
    became: bool = False
    """…になった, 好きになれない: a change of state (negated or not)."""
    stopped: bool = False
    """…なくなった: a negation that came about (no longer)."""
    unreal: bool = False
    """Desire, volition, condition, question, hearsay or advice: not a statement of fact."""
    te_form: bool = False
    end: int = 0
    """Index after the chain."""


_CHAIN_PARTICLES = frozenset("て で は も ん の よ ね な わ さ ぞ ぜ っけ じゃん".split())
_UNREAL_SUFFIX = frozenset("らしい みたい そう っぽい べき はず".split())
_NONSTATE_AFTER = frozenset("方 ほう つもり".split())


def mood_after(toks: tuple[Morpheme, ...], i: int) -> Mood:
    """Read the auxiliaries after the predicate at ``i`` (its own conjugation included)."""
    negated = past = progressive = became = stopped = unreal = False
    head = toks[i]
    if head.pos[0] == "動詞" and head.surface != head.dictionary and head.surface.endswith("う"):
        unreal = True  # volitional: やめよう
    j = i + 1
    while j < len(toks):
        t = toks[j]
        p0, p1 = t.pos[0], t.pos[1]
        if p0 == "助動詞":
            d = t.dictionary
            if d in ("ない", "ぬ", "ず"):
                negated = True
            elif d == "た":
                if t.surface in ("たら", "だら"):
                    unreal = True
                past = True
            elif d in ("たい", "う", "よう", "まい", "らしい", "べし"):
                unreal = True
            elif d in ("てる", "でる", "とる"):
                progressive = True
            elif d in ("れる", "られる"):
                unreal = True  # passive (ねだられる): someone else does it to the user
            if t.surface != d and t.surface.endswith(("おう", "よう")):
                unreal = True  # volitional: しちゃおう
            elif d == "だ" and t.surface == "なら":
                unreal = True
        elif p0 == "形容詞" and p1 == "非自立可能" and t.dictionary == "ない":
            negated = True
        elif p0 == "形容詞" and t.dictionary in ("欲しい", "ほしい"):
            unreal = True
        elif p0 == "動詞" and p1 == "非自立可能":
            if t.dictionary in ("いる", "おる"):
                progressive = True
            elif t.dictionary in ("なる", "なれる"):
                became = True
                stopped = stopped or negated
            elif t.dictionary in ("始める", "出す", "続ける"):
                progressive = True  # 働き始めた: going on since
            elif t.dictionary not in ("ある", "しまう", "ちゃう", "くる", "いく", "みる", "おく", "くれる", "もらう"):
                break
            if t.surface != t.dictionary and t.surface.endswith("う"):
                unreal = True
        elif p0 == "形状詞" and t.surface in _UNREAL_SUFFIX:
            unreal = True
        elif p0 == "助詞" and p1 == "接続助詞" and t.surface in ("て", "で"):
            pass
        elif p0 == "助詞" and p1 == "接続助詞" and t.surface in ("ば", "たら", "なら", "ても", "でも"):
            unreal = True
        elif p0 == "助詞" and p1 == "終助詞":
            nxt = toks[j + 1].surface if j + 1 < len(toks) else ""
            if t.surface in ("かしら", "っけ") or (t.surface == "か" and nxt not in ("な", "も", "なあ")):
                unreal = True  # a question; かな / かも (I guess, maybe) still state it
        elif p0 == "助詞" and (p1 in ("準体助詞", "係助詞") or t.surface in _CHAIN_PARTICLES):
            pass
        else:
            break
        j += 1
    if j < len(toks) and toks[j].surface in _NONSTATE_AFTER:
        unreal = True  # やめた方がいい (advice), やめるつもり (intention)
    if j < len(toks) and toks[j].dictionary in ("思う", "言う", "聞く"):
        unreal = unreal or toks[j - 1].surface in ("と", "って")
    last = toks[j - 1]
    te_form = j > i + 1 and j < len(toks) and last.pos[1] == "接続助詞" and last.surface in ("て", "で")
    return Mood(negated, past, progressive, became, stopped, unreal, te_form, j)


def clause_start(toks: tuple[Morpheme, ...], i: int) -> int:
    """Index where the clause holding ``i`` starts (after a comma or a clause-joining particle)."""
    j = i
    while j > 0:
        t = toks[j - 1]
        if t.pos[0] == "補助記号" or (t.pos[0] == "助詞" and t.pos[1] == "接続助詞" and t.surface in CLAUSE_LINKS):
            break
        j -= 1
    return j


_UNREAL_WORDS = frozenset("もし もしも 仮に 冗談 なんてね".split())


def is_unreal(text: str, toks: tuple[Morpheme, ...]) -> bool:
    """「もし…たら」「…のになあ」「なんてね、冗談」: a wish, a condition or a joke, about no fact."""
    if any(t.surface in _UNREAL_WORDS for t in toks) or "のになあ" in text or "のにな" in text:
        return True
    for k, t in enumerate(toks):
        if t.pos[0] == "助動詞" and t.surface in ("たら", "だら"):
            return True
        if t.pos[1] == "接続助詞" and t.surface in ("ば", "たら", "なら"):
            if t.surface == "ば" and k > 0 and toks[k - 1].dictionary in ("言う", "いう"):
                continue  # そういえば, といえば: "by the way", no condition
            return True
    return False


def is_question(text: str, toks: tuple[Morpheme, ...]) -> bool:
    """A question mark, or a question word that asks (何も, 何か, いつでも, どうしても do not)."""
    if "?" in text:
        return True
    for k, t in enumerate(toks):
        if t.surface not in INTERROGATIVES and t.normalized not in INTERROGATIVES:
            continue
        after = "".join(x.surface for x in toks[k + 1:k + 4])
        if not after.startswith(("も", "でも", "か", "しても", "だって")):
            return True
    return False


def reports_speech(toks: tuple[Morpheme, ...]) -> bool:
    """「…って言ってた」「…らしい」: someone else's words, not the user's own statement."""
    for k, t in enumerate(toks):
        if t.dictionary in ("言う", "いう") and k > 0 and toks[k - 1].surface in ("って", "と") and t.pos[0] == "動詞":
            # 「って言ってた」「と言われた」 report; 「モカっていう猫」「拓海っていうの」 name
            if t.surface not in ("言う", "いう"):
                return True
        if t.surface in ("らしい", "みたい") or (t.surface == "そう" and t.pos[0] == "形状詞"):
            return True
    return False


_OPEN_QUOTES = {"』": "『", "」": "「"}


def phrase_before(toks: tuple[Morpheme, ...], end: int) -> tuple[int, int, int] | None:
    """(start, end, outer start) of the thing named right before ``end``: a quoted title (『千と千尋の神隠し』,
    quotes excluded) or a noun phrase (outer start = start)."""
    if end > 0 and toks[end - 1].surface in _OPEN_QUOTES:
        opener = _OPEN_QUOTES[toks[end - 1].surface]
        for k in range(end - 2, -1, -1):
            if toks[k].surface == opener:
                return (k + 1, end - 1, k) if end - 1 > k + 1 else None
        return None
    span = noun_span_before(toks, end)
    return (span[0], span[1], span[0]) if span else None


def phrase_after(toks: tuple[Morpheme, ...], start: int) -> tuple[int, int, int] | None:
    """(start, end, outer end) of the thing named from ``start`` on (adverbs such as 断然 skipped)."""
    while start < len(toks) and toks[start].pos[0] == "副詞":
        start += 1
    if start < len(toks) and toks[start].surface in _OPEN_QUOTES.values():
        closer = next(c for c, o in _OPEN_QUOTES.items() if o == toks[start].surface)
        for k in range(start + 1, len(toks)):
            if toks[k].surface == closer:
                return (start + 1, k, k + 1) if k > start + 1 else None
        return None
    span = noun_span_after(toks, start)
    return (span[0], span[1], span[1]) if span else None
