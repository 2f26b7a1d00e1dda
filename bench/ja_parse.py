"""Japanese sentences read by dependency parse (GiNZA, ``ja-ginza``): each predicate with its arguments and their
case particles, aligned onto the Sudachi morphemes the extractor's patterns read. A bench experiment
(``bench.knowledge_ja_parse``), not part of the installed package: see docs/knowledge.md for why.

The parse says which noun phrase belongs to which predicate and with which particle (に, で, を, として, しか …),
however many words stand between them; everything else (the noun phrase itself, negation, tense and aspect, who
the sentence is about) is read by the same helpers as the hand rules (``ja_grammar``, ``ja_sentence``), so both
paths give the same value keys. ``ja_parse_facts`` turns predicates into drafts.

``available()`` says whether ``ja-ginza`` is installed; the model is loaded once per process, lazily, on the first
sentence that needs it (logged with its load time). ja-ginza 5.3.0 requires SudachiPy < 0.7 while the package's
tokenizer uses SudachiPy 0.7's API: install it with ``pip install ja-ginza``, then put the project's versions back
with ``pip install 'sudachipy>=0.7' 'sudachidict-core>=20261015'`` (GiNZA runs on them despite its pin).
"""

from __future__ import annotations

import bisect
import importlib.util
import logging
import threading
import time
from dataclasses import dataclass

from lumina_memory.nodes.knowledge.ja_grammar import Mood, mood_after, noun_span_before
from lumina_memory.nodes.knowledge.ja_sentence import JaSentence

log = logging.getLogger("lumina.knowledge")

MODEL = "ja_ginza"
_lock = threading.Lock()  # the parser (and the Sudachi tokenizer inside it) is not safe to share between threads
_nlp = None


class ParserUnavailable(RuntimeError):
    """The dependency parser's package (``ja-ginza``) is not installed."""


def available() -> bool:
    return importlib.util.find_spec(MODEL) is not None and importlib.util.find_spec("spacy") is not None


def _parser():
    global _nlp
    if _nlp is None:
        if not available():
            raise ParserUnavailable(f"the Japanese dependency parse needs the {MODEL!r} package: pip install ja-ginza")
        import spacy

        started = time.perf_counter()
        # NER is not read: places and names come from Sudachi's parts of speech, as in the rules.
        _nlp = spacy.load(MODEL, exclude=["ner"])
        log.info("knowledge ja parse model %s loaded in %.2f s", MODEL, time.perf_counter() - started)
    return _nlp


def parse(text: str):
    """The spaCy ``Doc`` of one sentence (the model is loaded on first use)."""
    with _lock:
        return _parser()(text)


@dataclass(frozen=True)
class Arg:
    """One argument of a predicate, as Sudachi morpheme indices."""

    start: int
    end: int
    """The noun phrase ``s.toks[start:end]`` (``noun_span_before`` of the argument's head)."""
    case: str
    """What follows the noun inside the argument: に, で, を, が, は, として, しか, だけは …"""
    dep: str
    """GiNZA's label: nsubj, obj, obl, iobj."""

    def has(self, *particles: str) -> bool:
        return any(self.case.startswith(p) for p in particles)


@dataclass(frozen=True)
class Predicate:
    lemma: str
    at: int
    """Sudachi index of the predicate's last content morpheme (する of サ変 nouns), where ``mood_after`` reads."""
    mood: Mood
    args: tuple[Arg, ...]
    start: int
    """Sudachi index where the predicate's own words start (its arguments end before it)."""
    modifies_noun: bool = False
    """「大阪に住んでる友達」: the predicate describes a noun (GiNZA's acl) and states nothing by itself."""


_ARG_DEPS = frozenset(("nsubj", "obj", "obl", "iobj", "dislocated"))
_PREDICATE_POS = frozenset(("VERB", "ADJ", "NOUN", "PROPN"))


def _offsets(s: JaSentence) -> list[int]:
    starts, pos = [], 0
    for t in s.toks:
        starts.append(pos)
        pos += len(t.surface)
    return starts


def _morpheme_at(starts: list[int], char: int) -> int:
    """Index of the Sudachi morpheme holding character ``char`` (GiNZA may split a word Sudachi keeps whole)."""
    return max(bisect.bisect_right(starts, char) - 1, 0)


def predicates(s: JaSentence) -> list[Predicate]:
    """The sentence's predicates with their nominal arguments; a predicate with no argument is left out."""
    doc = parse(s.text)
    starts = _offsets(s)
    if not starts or "".join(t.surface for t in s.toks) != doc.text:
        return []  # the two analyses are not of the same text: nothing can be aligned
    out: list[Predicate] = []
    for tok in doc:
        if tok.pos_ not in _PREDICATE_POS:
            continue
        args = []
        for child in tok.children:
            if child.dep_ not in _ARG_DEPS or child.pos_ not in ("NOUN", "PROPN", "PRON", "NUM") or child.i > tok.i:
                continue
            arg = _argument(s, starts, child)
            if arg is not None:
                args.append(arg)
        if not args:
            continue
        at = _morpheme_at(starts, tok.idx + len(tok.text) - 1)
        if s.toks[at].pos[0] == "名詞" and at + 1 < len(s.toks) and s.toks[at + 1].dictionary == "する":
            at += 1  # 一人暮らしする: the auxiliaries follow する
        out.append(Predicate(tok.lemma_, at, mood_after(s.toks, at), tuple(args), _morpheme_at(starts, tok.idx),
                             modifies_noun=tok.dep_ == "acl"))
    return out


def _argument(s: JaSentence, starts: list[int], head) -> Arg | None:
    end = _morpheme_at(starts, head.idx + len(head.text) - 1) + 1
    span = noun_span_before(s.toks, end)
    if span is None:
        return None
    right = head.right_edge
    case = head.doc.text[head.idx + len(head.text):right.idx + len(right.text)] if right.i > head.i else ""
    return Arg(span[0], span[1], case, head.dep_)
