"""The function words of a query's language, so that the keyword channels do not rank by them.

English has its stop list (tokenize.EN_STOP) and Japanese Sudachi's parts of speech; in the other languages a
question's "es", "mi", "ist", "है", "ما" were keywords like any other. "¿Cuál es mi profesión?" shares no content
word with "Trabajo de técnica de laboratorio…", so BM25 ranked first every turn holding "es" and "mi", and fusion,
which reads ranks, put them above the vectors' answer. The user's own statistics cannot tell these words from a
developer's "api" or "ssh", which are as common in their conversations (bench/README.md "Other languages"), so
it takes knowledge of the language: the query's language (py3langid), and how common a word is in that language
(wordfreq's Zipf scale: "es" 7.0, "mi" 6.4, "trabajo" 5.8, "profesión" 4.3).

Only the query is read this way; what the index holds does not change.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache

from .tokenize import stem

LOG = logging.getLogger("lumina.text")
_LOADING = threading.Lock()

FUNCTION_ZIPF = 6.0
"""A word at least this common in its language (about once in every 1,000 words) is a function word here."""

MIN_CONFIDENCE = 0.5
"""Below this, the query's language is not known well enough to drop any of its words."""

# Languages read otherwise (English: the stop list; Japanese: Sudachi), and those whose words wordfreq looks up
# only with a segmenter we do not install (Chinese, Korean) or does not have (Thai).
_NOT_HERE = frozenset({"en", "ja", "zh", "ko", "th"})


@lru_cache(maxsize=1)
def _load_identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _identifier():
    with _LOADING:  # one load (~0.4 s), even when a recall asks while the background load runs
        return _load_identifier()


def preload_in_background() -> threading.Thread | None:
    """Load the language model in a thread of its own (services start it), so that no recall pays for it;
    None when it is loaded already."""
    if _load_identifier.cache_info().currsize:
        return None
    thread = threading.Thread(target=lambda: (_identifier(), _languages()), name="lumina-language-model", daemon=True)
    # (_languages imports wordfreq too; a language's own words are read at its first question, ~20 ms.)
    thread.start()
    return thread


@lru_cache(maxsize=1)
def _languages() -> frozenset[str]:
    from wordfreq import available_languages

    return frozenset(available_languages()) - _NOT_HERE


# Keyed by what users asked: one of the text caches that erasure empties (nodes.text.text_caches).
@lru_cache(maxsize=4096)
def query_language(text: str) -> str | None:
    """The language of ``text`` when it is one whose function words are known here, else None."""
    language, confidence = _identifier().classify(text)
    return language if confidence >= MIN_CONFIDENCE and language in _languages() else None


@lru_cache(maxsize=None)
def function_words(language: str) -> frozenset[str]:
    """The words at least FUNCTION_ZIPF common in ``language``: a few hundred, read once per language (~10 ms)
    from wordfreq's small list, whose tables are then let go (~5 MB a language; the large lists hold ~50 MB)."""
    import wordfreq

    with _LOADING:
        try:
            top = wordfreq.top_n_list(language, 2_000, wordlist="small")
            # Numbers are frequent everywhere and still what a question asks about ("Raum 3").
            # (Not str.isalpha: Devanagari's vowel signs are marks, not letters.)
            words = frozenset(w for w in top if not any(ch.isdigit() for ch in w)
                              and wordfreq.zipf_frequency(w, language, wordlist="small") >= FUNCTION_ZIPF)
        except (LookupError, ImportError) as exc:  # a word list or a segmenter missing: no function words
            LOG.warning("no function words for %s: %s", language, exc)
            words = frozenset()
        for cached in (getattr(wordfreq, "get_frequency_dict", None), getattr(wordfreq, "get_frequency_list", None)):
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()
    return words


@lru_cache(maxsize=None)
def _stems(language: str) -> frozenset[str]:
    """The function words of ``language`` as ``tokenize.terms`` gives a Latin word (stemmed: French "les", Spanish
    "todos" → "todo"), so they are known among the stemmed terms of a query too."""
    return frozenset(stem(w) for w in function_words(language) if w.isascii())


def content_terms(query: str, q_terms: list[str]) -> list[str]:
    """``q_terms`` without the function words of the query's language; all of them when every one is one."""
    # A long question is judged by its start: plenty for a language, and a bounded key and cost.
    language = query_language(query[:2_000]) if q_terms else None
    if language is None:
        return q_terms
    common = function_words(language)
    kept = [t for t in q_terms if t not in common and not (t.isascii() and t in _stems(language))]
    return kept or q_terms
