"""Real technical writing that ships inside installed packages, as assistant replies for bench.realtext_data.

Two kinds of text, both read from what ``pip install`` put on the machine (nothing from ../shared, no network):

- Python's own reference: ``pydoc_data.topics.topics`` (CPython ships it; ``help("for")`` prints from it), 79
  topics from 28 to 8,500 words, with grammar and code;
- docstrings of the standard library and of installed libraries (langgraph, langchain-core, pydantic, numpy, duckdb
  …): module, class and function docstrings of at least ``MIN_WORDS`` words, many with examples and code.

Texts are kept as they are: real text, not templates, is the point. Every text has a stable name ("pydoc:for",
"doc:langgraph.graph.state.StateGraph") and the pool is sorted by it, so a seed picks the same texts wherever the
same package versions are installed (each generated sample lists the names it used).

``cloze`` picks, in one text, a distinctive word (an identifier, a number, a long word) in the middle of a prose
line, with a few words either side: the extraction questions ask for it.
"""

from __future__ import annotations

import importlib
import inspect
import random
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache

MIN_WORDS = 150
# Modules whose public objects' docstrings are read; a module that does not import is skipped.
DOC_MODULES = (
    "argparse", "asyncio", "collections", "contextlib", "csv", "dataclasses", "datetime", "decimal", "difflib",
    "doctest", "email.message", "enum", "fractions", "functools", "heapq", "inspect", "itertools", "json", "logging",
    "pathlib", "pickle", "re", "sqlite3", "string", "subprocess", "textwrap", "threading", "typing", "unittest",
    "urllib.parse", "zipfile",
    "duckdb", "langchain_core.messages", "langchain_core.prompts", "langchain_core.runnables",
    "langchain_core.tools", "langgraph.channels", "langgraph.func", "langgraph.graph", "langgraph.graph.state",
    "langgraph.prebuilt", "langgraph.store.base", "langgraph.store.memory", "langgraph.types", "numpy",
    "numpy.linalg", "numpy.random", "pydantic", "pydantic.fields", "pydantic_settings",
)
_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{4,}[A-Za-z0-9_]$")
_PUNCT = "`'\",.;:()[]*"
_COMMON = frozenset("""about above after again against because before being below between could during either
every first following further having however itself might never other others shall should since their there these
those through under until where whether which while within without would their example returns return value values
default object objects argument arguments function functions method methods string strings number numbers""".split())


@dataclass(frozen=True)
class Source:
    """One real text: its stable name, a title a user would ask about, and the text as shipped."""

    name: str
    title: str
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


def _pydoc_sources() -> list[Source]:
    from pydoc_data.topics import topics

    return [Source(f"pydoc:{key}", f"Python's reference on “{key}”", text.strip())
            for key, text in topics.items() if len(text.split()) >= MIN_WORDS]


def _doc_sources(modules: tuple[str, ...]) -> list[Source]:
    out: dict[str, Source] = {}
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except Exception:  # noqa: BLE001 - an optional library absent here: its texts are not in the pool
            continue
        objects = [(module_name, module)]
        for attr in sorted(dir(module)):
            if attr.startswith("_"):
                continue
            try:
                with warnings.catch_warnings():  # deprecated aliases (typing.io) warn when read
                    warnings.simplefilter("ignore")
                    obj = getattr(module, attr)
            except Exception:  # noqa: BLE001 - lazy attributes that fail to load
                continue
            # Not submodules: which of them are attributes depends on what else the process imported.
            if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
                objects.append((f"{getattr(obj, '__module__', None) or module_name}.{attr}", obj))
        for qualified, obj in objects:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                doc = inspect.getdoc(obj) or ""
            if len(doc.split()) >= MIN_WORDS and qualified not in out:
                out[qualified] = Source(f"doc:{qualified}", f"`{qualified}`", doc.strip())
    return list(out.values())


@lru_cache(maxsize=1)
def pool() -> tuple[Source, ...]:
    """Every text, sorted by name; a text that is another's copy (one docstring re-exported) is kept once."""
    seen: set[str] = set()
    out = []
    for source in sorted(_pydoc_sources() + _doc_sources(DOC_MODULES), key=lambda s: s.name):
        if source.text not in seen:
            seen.add(source.text)
            out.append(source)
    return tuple(out)


@dataclass(frozen=True)
class Cloze:
    """A word of a text and the words around it: the question shows ``left ___ right``, the answer is ``word``."""

    word: str
    left: str
    right: str


def _prose_lines(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        stripped = line.strip()
        if not fenced and not line.startswith(("    ", "\t", ">>>", "...")) and len(stripped.split()) >= 8:
            lines.append(stripped)
    return lines


def cloze(rng: random.Random, text: str, left_words: int = 4, right_words: int = 3) -> Cloze | None:
    """A distinctive word from a prose line in the middle 80% of the text (an identifier if there is one, else a
    long word), or None. The window ``left word right`` occurs once in the text: the question points at one
    passage."""
    lines = _prose_lines(text)
    middle = lines[len(lines) // 10: max(len(lines) // 10 + 1, len(lines) - len(lines) // 10)]
    named: list[Cloze] = []  # identifiers, numbers, CamelCase: what a user would come back for
    plain: list[Cloze] = []
    for line in middle:
        words = line.split()
        for i in range(left_words, len(words) - right_words):
            token = words[i]
            word = token.strip(_PUNCT)
            if not _WORD.match(word) or word.lower() in _COMMON or not (
                    any(c.isdigit() or c == "_" for c in word) or len(word) >= 8 or word[1:] != word[1:].lower()):
                continue
            at = token.index(word)
            left = " ".join(words[i - left_words:i]) + " " + token[:at]
            right = token[at + len(word):] + " " + " ".join(words[i + 1:i + 1 + right_words])
            if text.count(" ".join(words[i - left_words:i + 1 + right_words])) == 1:
                identifier = any(c.isdigit() or c in "_." for c in word) or word[1:] != word[1:].lower()
                (named if identifier else plain).append(Cloze(word, left, right))
    candidates = named or [c for c in plain if len(c.word) >= 9]
    return rng.choice(candidates) if candidates else None
