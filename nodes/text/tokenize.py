"""Japanese + English tokenisation with Sudachi (keeps 東京駅, 月曜日 whole), and the words of other scripts.

Latin, Greek and Cyrillic words come out of Sudachi as nouns; the scripts its dictionary does not hold (Hangul,
Arabic, Devanagari, Hebrew, Thai …) come out as symbols, and are read here instead: words as written, Hangul and
the unspaced scripts in pairs of letters (``_unknown_script_view``).

Two views of a text: ``terms`` (content words, normalised, for BM25 and concept matching) and
``nouns`` (keyword candidates).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import NamedTuple

import Stemmer

from lumina_memory.nodes.characters import CAST

_local = threading.local()  # a Sudachi tokenizer is not safe to share between threads

_CONTENT_POS = {"名詞", "動詞", "形容詞", "形状詞", "副詞"}
_NOUN_SKIP_SUB = {"数詞", "助数詞可能"}
# Nouns that say nothing about a topic; kept short on purpose — the scorer down-weights the rest.
STOP_NOUNS = frozenset(
    "こと もの 事 物 何 なに 誰 どこ それ これ あれ そこ ここ 方 ほう 感じ 時 とき 今 今日 明日 昨日 "
    "みんな 皆 自分 私 僕 俺 あなた 君 さん ちゃん くん 様 人 気 話 話題 ところ 本当 ほんと 大丈夫 "
    "よう そう 一緒 ありがとう 的 中 前 後 次 最近 今度 全部 一番 普通 "
    "ん の まま 時間 的".split()
) | {c.name_ja for c in CAST}  # the characters' names say nothing about a topic
EN_STOP = frozenset(
    "a an the and or but if of to in on at for with from by about as is are was were be been being "
    "i you he she it we they me him her us them my your his its our their this that these those "
    "do does did have has had not no yes so just very really what when where who why how which "
    "can could would should will shall may might must there here then than too also oh okay ok "
    "yeah hey hi im i'm it's that's dont don't".split()
)
_ASCII_WORD = re.compile(r"^[a-z0-9][a-z0-9'\-]*$")


_dictionary = None
_dictionary_lock = threading.Lock()


def _tokenizer():
    tok = getattr(_local, "tokenizer", None)
    if tok is None:
        from sudachipy import Dictionary, SplitMode

        global _dictionary
        with _dictionary_lock:  # one dictionary per process (it is shareable; tokenizers are not)
            if _dictionary is None:
                _dictionary = Dictionary(dict="core")
        # Only the fields read below are loaded: -15 % tokenising time, the same morphemes. The reading costs
        # nothing measurable, and gives the cross-script keys of kanji names without a second pass.
        tok = _dictionary.tokenizer(mode=SplitMode.C, fields={"pos", "normalized_form", "reading_form"})
        _local.tokenizer = tok
    return tok


def _morphemes(text: str):
    # Sudachi rejects inputs above ~49,149 bytes; long texts are tokenised in slices.
    text = unicodedata.normalize("NFKC", text)
    tok = _tokenizer()
    if len(text) <= _SLICE:
        return tok.tokenize(text)  # the common case: no generator between Sudachi and the loop
    return [m for start in range(0, len(text), _SLICE) for m in tok.tokenize(text[start : start + _SLICE])]


_SLICE = 8000


# PyStemmer: the Snowball algorithms compiled (the same stems as the pure-Python snowballstemmer, about 2 µs a
# word against 21). A stemmer object keeps state between calls, so threads take turns.
_snowball = Stemmer.Stemmer("english")
_snowball_lock = threading.Lock()


def stem(word: str) -> str:
    """The Snowball (Porter2) English stem of a lower-cased word: hobbies and hobby → hobbi, cities and city →
    citi, news stays news. Every lexical index and query reads English terms through it (``terms``)."""
    with _snowball_lock:
        return _snowball.stemWord(word)


# Both views are pure functions of the text, and the same texts come back often: a segment's turns
# are tokenised for its keywords, its mention counts and its low-value check, and again by the BM25
# indexes. Cached per text (tuples, so a caller cannot change a cached answer).
_CACHE_SIZE = 8192


def terms(text: str) -> list[str]:
    """Content words, normalised and lower-cased; English words stemmed (``stem``)."""
    return list(_views(text)[0])


def nouns(text: str) -> list[str]:
    """Noun keyword candidates in order of appearance (with repeats)."""
    return list(_views(text)[1])


def read_once(text: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(terms, kana nouns) of a text read once and not cached: the sentences of a long reply as an index
    reads them, which would only push the texts recall asks about again out of the cache."""
    views = _views.__wrapped__(text)
    return views[0], views[2]


def kana_nouns(text: str) -> tuple[tuple[str, str], ...]:
    """(normalised form, katakana) of the katakana nouns (their surface) and kanji proper nouns (their
    reading) of ``text``: what nodes.text.transliterate keys names by, from the same Sudachi pass as ``terms``."""
    return _views(text)[2]


@lru_cache(maxsize=_CACHE_SIZE)
def _ascii_views(lowered: str) -> tuple[str | None, str | None]:
    """(term, noun if the morpheme is a noun) of an ASCII surface: neither depends on the context, and
    English text repeats few words, so they are worked out once per word."""
    if not _ASCII_WORD.match(lowered) or lowered in EN_STOP:
        return None, None
    return stem(lowered), (lowered if len(lowered) > 2 else None)


# Part-of-speech flags by Sudachi's POS id: part_of_speech() builds a 6-tuple of strings on every call,
# and a text has dozens of morphemes; the dictionary has ~1,500 POS ids, each classified once.
_POS_FLAGS: dict[int, tuple[bool, bool, bool, bool, bool]] = {}


def _pos_flags(m) -> tuple[bool, bool, bool, bool, bool]:
    """(content term, noun keyword candidate, 名詞, 固有名詞, 補助記号) for a morpheme's part of speech."""
    pos_id = m.part_of_speech_id()
    flags = _POS_FLAGS.get(pos_id)
    if flags is None:
        pos = m.part_of_speech()
        flags = (
            pos[0] in _CONTENT_POS and pos[1] != "非自立可能",
            pos[0] == "名詞" and pos[1] not in _NOUN_SKIP_SUB and pos[1] != "代名詞",
            pos[0] == "名詞",
            pos[0] == "名詞" and pos[1] == "固有名詞",
            pos[0] == "補助記号",
        )
        _POS_FLAGS[pos_id] = flags
    return flags


_KANJI = re.compile(r"[\u4e00-\u9fff]")
_KATAKANA_WORD = re.compile(r"^[\u30a1-\u30fa\u30fc]{2,}$")


class _MorphemeViews:
    """What ``_views`` makes of one dictionary entry as written: (term, noun candidate, kana noun), each None
    when it makes none. A pure function of (surface, word id, part of speech), so worked out once per distinct
    word: the per-morpheme method calls were half the time of reading a long reply. Holds words users wrote,
    so it is one of the text caches erasure empties (nodes.text.text_caches), and it is bounded."""

    MAX = 262_144

    def __init__(self) -> None:
        self._views: dict[tuple[str, int, int], tuple[str | None, str | None, tuple[str, str] | None, str | None]] = {}
        self._lock = threading.Lock()

    def get(self, m) -> tuple[str | None, str | None, tuple[str, str] | None, str | None]:
        raw = m.surface()
        key = (raw, m.word_id(), m.part_of_speech_id())
        view = self._views.get(key)
        if view is None:
            view = _morpheme_view(m, raw.strip())
            with self._lock:
                if len(self._views) >= self.MAX:
                    self._views.clear()
                self._views[key] = view
        return view

    def cache_info(self):
        from functools import _CacheInfo

        return _CacheInfo(0, 0, self.MAX, len(self._views))

    def cache_clear(self) -> None:
        with self._lock:
            self._views.clear()


# Scripts read in overlapping character pairs: Hangul (words carry their particles: 서울에서 = Seoul + "in")
# and the scripts written without spaces between words (Thai, Lao, Myanmar, Khmer), as Lucene's CJK bigram
# filter does for want of a dictionary.
_PAIRED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3130-\u318f\ua960-\ua97f"
                     r"\uac00-\ud7af\ud7b0-\ud7ff]")
_PAIRED_NOUN_MAX = 8  # a Hangul word is a keyword candidate; a Thai run is a whole sentence, not a keyword


# Japanese letters Sudachi calls symbols (ーーー, a lone 々) stay dropped: they are its script, not an unknown one.
_JAPANESE_LETTER = re.compile(r"[\u3005\u3006\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")


def _letter_runs(surface: str) -> list[str]:
    """The runs of letters (with their combining marks: Devanagari's vowel signs) in ``surface``, each starting
    with a letter: a mark left alone (the ´ of a kaomoji) is no word."""
    runs, run = [], []
    for ch in surface:
        kind = unicodedata.category(ch)[0]
        if (kind == "L" or (kind == "M" and run)) and not _JAPANESE_LETTER.match(ch):
            run.append(ch)
        elif run:
            runs.append("".join(run))
            run = []
    if run:
        runs.append("".join(run))
    return runs


def _clusters(run: str) -> list[str]:
    """``run`` as letters each with the combining marks that follow it."""
    units: list[str] = []
    for ch in run:
        if units and unicodedata.category(ch)[0] == "M":
            units[-1] += ch
        else:
            units.append(ch)
    return units


@lru_cache(maxsize=_CACHE_SIZE)
def _unknown_script_view(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(terms, noun candidates) of letters Sudachi read as symbols (a script its dictionary does not hold):
    words as written (case-folded), or Hangul and unspaced scripts in character pairs. ``text`` is a run of such
    morphemes joined back: Sudachi cuts them where its character classes change, not between words
    (Hebrew 「את」 came as two)."""
    out: list[str] = []
    candidates: list[str] = []
    for run in _letter_runs(text):
        if _PAIRED.match(run):
            # Pairs of letters with their marks (Thai vowel and tone marks are combining characters): a pair
            # of a letter and its own mark says nothing.
            units = _clusters(run)
            out += units if len(units) == 1 else [units[i] + units[i + 1] for i in range(len(units) - 1)]
            if 1 < len(run) <= _PAIRED_NOUN_MAX and run[0] >= "\uac00":
                candidates.append(run)
        elif len(run) > 1:  # a lone letter (the ω of a kaomoji, Arabic's و "and") is no word; घी (ghee) is
            out.append(run.casefold())
            candidates.append(run)
    return tuple(out), tuple(candidates)


def _morpheme_view(m, surface: str) -> tuple[str | None, str | None, tuple[str, str] | None, str | None]:
    """(term, noun candidate, kana noun, unknown-script letters) of a morpheme: the last one (the surface) only
    for letters of a script Sudachi does not know, which ``_views`` reads with their neighbours."""
    if not surface:
        return None, None, None, None
    if surface.isascii():
        term, noun = _ascii_views(surface.lower())
        if noun is not None and not _pos_flags(m)[2]:
            noun = None
        return term, noun, None, None
    content, candidate, is_noun, proper, symbol = _pos_flags(m)
    if symbol and any(unicodedata.category(ch)[0] == "L" for ch in surface):
        return None, None, None, m.surface()
    term = noun = kana = None
    if is_noun:
        if _KATAKANA_WORD.match(surface):
            kana = (m.normalized_form(), surface)
        elif proper and _KANJI.search(surface):
            kana = (m.normalized_form(), m.reading_form())
    if content:
        norm = m.normalized_form()
        if norm not in STOP_NOUNS:
            term = norm
    # a lone kana is almost never a topic
    if candidate and (len(surface) > 1 or _KANJI.match(surface)) and surface not in STOP_NOUNS:
        noun = surface
    return term, noun, kana, None


morpheme_views = _MorphemeViews()


@lru_cache(maxsize=_CACHE_SIZE)
def _views(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(terms, nouns, kana nouns) from one Sudachi pass: most texts are asked for all three (an index takes
    a turn's terms and its cross-script keys; a second pass for the keys was half a cold build's time)."""
    out_terms: list[str] = []
    out_nouns: list[str] = []
    out_kana: list[tuple[str, str]] = []
    view = morpheme_views.get
    unknown: list[str] = []  # consecutive morphemes of a script Sudachi does not know, read together
    for m in _morphemes(text):
        term, noun, kana, letters = view(m)
        if letters is not None:
            unknown.append(letters)
            continue
        if unknown:
            _read_unknown(unknown, out_terms, out_nouns)
        if term is not None:
            out_terms.append(term)
        if noun is not None:
            out_nouns.append(noun)
        if kana is not None:
            out_kana.append(kana)
    if unknown:
        _read_unknown(unknown, out_terms, out_nouns)
    if not _KANA.search(text):
        read = set(out_terms)  # a pair Sudachi made a word of is counted once
        out_terms.extend(p for p in _han_pairs(text) if p not in read)
    return tuple(out_terms), tuple(out_nouns), tuple(out_kana)


_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")


def _han_pairs(text: str) -> list[str]:
    """Overlapping pairs of the Han characters of a text without kana: Chinese, which Sudachi reads with a Japanese
    dictionary (「最近我特别爱吃麻辣烫」: 特 / 别爱 / 吃麻 / 辛い / 烫). Added to Sudachi's terms, not instead of them: a
    kanji-only Japanese line keeps its words, and a Chinese question and a Chinese turn meet on their pairs
    whatever Sudachi made of each (Lucene's CJK bigram filter, for want of a Chinese dictionary)."""
    return [run[i:i + 2] for run in _HAN_RUN.findall(unicodedata.normalize("NFKC", text)) for i in range(len(run) - 1)]


def _read_unknown(unknown: list[str], out_terms: list[str], out_nouns: list[str]) -> None:
    more, candidates = _unknown_script_view("".join(unknown))
    out_terms.extend(more)
    out_nouns.extend(candidates)
    unknown.clear()


class Morpheme(NamedTuple):
    """One Sudachi morpheme with what grammar-reading callers need (knowledge extraction)."""

    surface: str
    pos: tuple[str, ...]
    normalized: str
    dictionary: str


def _grammar_tokenizer():
    # A second per-thread tokenizer that also loads the dictionary form: the content-word views above
    # stay on the cheaper field set, and the two share the one dictionary.
    tok = getattr(_local, "grammar_tokenizer", None)
    if tok is None:
        from sudachipy import SplitMode

        _tokenizer()  # makes sure the shared dictionary exists
        tok = _dictionary.tokenizer(mode=SplitMode.C, fields={"pos", "normalized_form", "dictionary_form"})
        _local.grammar_tokenizer = tok
    return tok


@lru_cache(maxsize=_CACHE_SIZE)
def morphemes(text: str) -> tuple[Morpheme, ...]:
    """Every morpheme of an NFKC-normalised text, in order, with its part of speech and forms."""
    text = unicodedata.normalize("NFKC", text)
    tok = _grammar_tokenizer()
    out: list[Morpheme] = []
    for start in range(0, max(len(text), 1), _SLICE):
        for m in tok.tokenize(text[start : start + _SLICE]):
            out.append(Morpheme(m.surface(), tuple(m.part_of_speech()), m.normalized_form(), m.dictionary_form()))
    return tuple(out)


CACHES = (_ascii_views, _views, morphemes, morpheme_views, _unknown_script_view)
"""This module's memos keyed by what users said (each has cache_info/cache_clear): nodes.text.text_caches
counts and empties them for erasure."""
