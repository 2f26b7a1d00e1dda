"""Cross-script keys, so a question in one language finds a memory written in the other (「ボブ」 ↔ "Bob").

Names and loanwords are the words the multilingual embedder blurs most and keyword search cannot bridge:
"Bob" and ボブ share no term. Both sides are brought to one spelling, a normalised romaji:

- a katakana noun (ボブ, マイケル, ハイキング) and a proper noun in kanji by its reading (東京 → トウキョウ,
  鈴木 → スズキ) are romanised (``kana_key``);
- a latin word is romanised through katakana: e2k's English→katakana model (offline, numpy only), a small
  table of frequent names e2k spells unlike Japanese usage (Michael → マイケル, not ミチェル), and the word
  itself when it already is Hepburn romaji (Tokyo, Suzuki, Kenji).

Normalising drops what katakana spellings vary in (long vowels ー/ou/ei, ッ, doubled consonants, ヴ/ブ), so
デビッド and デイビッド both give "debido".

Keys are tagged with the script of the word they come from, and a text and a query get opposite tags:
a memory's katakana word indexes ``KANA_TAG + key``, an English question's latin word asks for
``KANA_TAG + key`` (and the other way round). A key therefore only ever matches a word of the *other*
script: recall and search within one language see exactly the scores they saw before (the keys count
for no document length), and an English "light" never meets an English "right" through a shared ライト.

``index_keys(text)`` are added to an index's postings; ``query_aliases(query)`` maps each key a query asks
for to the query term it stands for (so a scorer can credit the term once). Both are cached per text.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

from .tokenize import EN_STOP, kana_nouns, terms

KANA_TAG, LATIN_TAG = "\u2060ᵏ", "\u2060ˡ"  # key of a katakana/kanji word, key of a latin word (never a term)
VERSION = 2  # bump when keys or terms (tokenize.terms, its stemmer) change: rows stamped otherwise are read again
STAMP = f"\u2060xlit:{VERSION}"  # a term every stored row indexed with these keys carries

# --- katakana → romaji -------------------------------------------------------------------------------
_DIGRAPHS = {
    "キャ": "kya", "キュ": "kyu", "キョ": "kyo", "シャ": "sha", "シュ": "shu", "ショ": "sho", "シェ": "she",
    "チャ": "cha", "チュ": "chu", "チョ": "cho", "チェ": "che", "ニャ": "nya", "ニュ": "nyu", "ニョ": "nyo",
    "ヒャ": "hya", "ヒュ": "hyu", "ヒョ": "hyo", "ミャ": "mya", "ミュ": "myu", "ミョ": "myo", "リャ": "rya",
    "リュ": "ryu", "リョ": "ryo", "ギャ": "gya", "ギュ": "gyu", "ギョ": "gyo", "ジャ": "ja", "ジュ": "ju",
    "ジョ": "jo", "ジェ": "je", "ビャ": "bya", "ビュ": "byu", "ビョ": "byo", "ピャ": "pya", "ピュ": "pyu",
    "ピョ": "pyo", "ティ": "ti", "ディ": "di", "トゥ": "tu", "ドゥ": "du", "デュ": "dyu", "テュ": "tyu",
    "ファ": "fa", "フィ": "fi", "フェ": "fe", "フォ": "fo", "フュ": "fyu", "ウィ": "wi", "ウェ": "we",
    "ウォ": "wo", "ヴァ": "ba", "ヴィ": "bi", "ヴェ": "be", "ヴォ": "bo", "ツァ": "tsa", "ツェ": "tse",
    "イェ": "ye", "クァ": "kwa", "クィ": "kwi", "クェ": "kwe", "クォ": "kwo", "グァ": "gwa",
}
_MONO = dict(zip(
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン"
    "ガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポヴァィゥェォャュョヮ",
    "a i u e o ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no ha hi fu he ho ma mi mu me mo "
    "ya yu yo ra ri ru re ro wa o n ga gi gu ge go za ji zu ze zo da ji zu de do ba bi bu be bo pa pi pu pe po "
    "bu a i u e o ya yu yo wa".split(),
))


def romanise(kana: str) -> str:
    """Hepburn-style romaji of a katakana word (ッ and ー dropped: normalising drops length anyway)."""
    out: list[str] = []
    i = 0
    while i < len(kana):
        pair = kana[i : i + 2]
        if pair in _DIGRAPHS:
            out.append(_DIGRAPHS[pair])
            i += 2
            continue
        out.append(_MONO.get(kana[i], ""))
        i += 1
    return "".join(out)


_LONG = [("ou", "o"), ("oo", "o"), ("uu", "u"), ("aa", "a"), ("ii", "i"), ("ee", "e"), ("ei", "e")]


def normalise(romaji: str) -> str:
    """What katakana spellings of one name vary in, removed: vowel length, doubled consonants, v/b, m/n."""
    text = romaji.lower().replace("v", "b")
    text = re.sub(r"m(?=[bpm])", "n", text)
    text = re.sub(r"([a-z])\1+", r"\1", text)  # ッ-doubling (sapporo) and repeated vowels
    for long, short in _LONG:
        text = text.replace(long, short)
    return text


@lru_cache(maxsize=65536)  # names and katakana words come back in every turn that mentions them
def kana_key(kana: str) -> str | None:
    """The key of a katakana word; None when too short to say anything (a lone kana)."""
    key = normalise(romanise(kana))
    return key if len(key) >= 2 else None


# --- latin → katakana -----------------------------------------------------------------------------
# Frequent names (and a few places) whose usual katakana e2k's character model does not produce. Project-
# written from common usage; e2k's spelling is kept as a second key, so a wrong entry costs only a miss.
COMMON_KATAKANA = {
    "paul": "ポール", "kyoto": "キョウト", "susan": "スーザン", "emma": "エマ", "jennifer": "ジェニファー",
    "michael": "マイケル", "mike": "マイク", "matthew": "マシュー", "brian": "ブライアン", "ryan": "ライアン",
    "steven": "スティーブン", "stephen": "スティーブン", "steve": "スティーブ", "noah": "ノア", "chloe": "クロエ",
    "rachel": "レイチェル", "jessica": "ジェシカ", "jake": "ジェイク", "amy": "エイミー", "lisa": "リサ",
    "caroline": "キャロライン", "david": "デイビッド", "ethan": "イーサン", "zoe": "ゾーイ", "kate": "ケイト",
    "sean": "ショーン", "isaac": "アイザック", "owen": "オーウェン", "jane": "ジェーン",
    "mary": "メアリー", "dave": "デイブ", "nate": "ネイト", "joe": "ジョー", "ian": "イアン", "seattle": "シアトル",
    "chicago": "シカゴ", "los": "ロス", "angeles": "アンジェルス", "york": "ヨーク", "hawaii": "ハワイ",
}
_ROMAJI = re.compile(r"^(?:(?:[kgsztdnhbpmr]y?|sh|ch|j|ts|f|w|y)?[aiueo]|n(?![aiueoy]))+$")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*[A-Za-z]|[A-Za-z]")

_e2k = None
_e2k_lock, _infer_lock = threading.Lock(), threading.Lock()


def _c2k():
    global _e2k
    with _e2k_lock:
        if _e2k is None:
            from e2k import C2K

            # "turbo": ~1.5 ms a new word against ~4 ms for the default model, whose better spellings the
            # table mostly covers (LoCoMo dev's 2,000 capitalised words cost ~3 s once per process).
            _e2k = C2K(model="turbo")
    return _e2k


@lru_cache(maxsize=65536)
def latin_keys(word: str) -> tuple[str, ...]:
    """Keys of a latin word (lower-cased): its katakana readings romanised, and itself if it is romaji."""
    word = word.lower()
    keys: list[str] = []
    if _ROMAJI.match(word):
        keys.append(normalise(word))
    if word in COMMON_KATAKANA:
        keys.append(normalise(romanise(COMMON_KATAKANA[word])))
    model = _c2k()
    with _infer_lock:  # one model, one forward pass at a time
        kana = model(word)
    keys.append(normalise(romanise(kana)))
    return tuple(k for k in dict.fromkeys(keys) if len(k) >= 2)


# --- a text's words on each side --------------------------------------------------------------------------
def kana_words(text: str) -> tuple[tuple[str, str], ...]:
    """(term as ``terms`` gives it, key) of the katakana nouns and kanji proper nouns of ``text``."""
    if text.isascii():
        return ()
    # From the Sudachi pass that gives the text's terms (cached per text): a long reply is read in slices
    # there too (a name cut at a slice edge is lost).
    return keyed(kana_nouns(text))


def keyed(kana: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """(term, key) of (term, katakana) pairs (``lumina_memory.nodes.text.tokenize.kana_nouns``) that make a key."""
    return tuple((norm, key) for norm, kana_word in kana if (key := kana_key(kana_word)))


def latin_words(text: str, every: bool = False) -> list[str]:
    """The latin words of ``text`` worth a key: capitalised ones (names, places) not a stop word; with
    ``every``, all content words (a question typed in lower case)."""
    out = []
    for w in _LATIN_WORD.findall(unicodedata.normalize("NFKC", text)):
        low = w.lower()
        if low in EN_STOP or len(low) < 2 or not (every or w[0].isupper()):
            continue
        out.append(w)
    return out


@lru_cache(maxsize=8192)
def index_keys(text: str) -> tuple[str, ...]:
    """The tagged keys to index ``text`` under, besides its terms (each once)."""
    return keys_of(text, kana_words(text))


def keys_of(text: str, kana: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """``index_keys`` of a text whose katakana words (``kana_words``) are known."""
    keys = [KANA_TAG + k for _, k in kana]
    keys += [LATIN_TAG + k for w in latin_words(text) for k in latin_keys(w)]
    return tuple(dict.fromkeys(keys))


@lru_cache(maxsize=4096)
def _aliases(query: str) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    for term, key in kana_words(query):
        out.setdefault(LATIN_TAG + key, term)
    every = not any(c.isupper() for c in query)
    for w in latin_words(query, every):
        source = terms(w)
        if not source:
            continue
        for k in latin_keys(w):
            out.setdefault(KANA_TAG + k, source[0])
    return tuple(out.items())


def query_aliases(query: str) -> dict[str, str]:
    """Key → the query term it stands for: the other script's keys a query's names and loanwords ask for."""
    return dict(_aliases(query))


def with_aliases(query: str, q_terms: list[str]) -> list[str]:
    """``q_terms`` and the keys standing for them (a term dropped from ``q_terms`` takes its keys along)."""
    have = set(q_terms)
    extra = [key for key, source in _aliases(query) if source in have]
    return [*q_terms, *extra] if extra else q_terms


class CrossTerms:
    """A store's tokenizer (stores.langgraph_store's ``tokenize``): a text's terms, its cross-script keys and
    the version stamp; ``split_query`` gives a query's terms and the keys standing for them."""

    stamp = STAMP

    def __call__(self, text: str) -> list[str]:
        return [*terms(text), *index_keys(text), STAMP]

    @staticmethod
    def split_query(query: str) -> tuple[list[str], dict[str, str]]:
        return list(dict.fromkeys(terms(query))), query_aliases(query)


cross_terms = CrossTerms()


CACHES = (latin_keys, kana_key, index_keys, _aliases)
"""This module's memos keyed by what users said: nodes.text.text_caches counts and empties them for erasure."""
