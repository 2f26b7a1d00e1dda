"""A turn as the recall index reads it, and that read kept in the archive (issue 19: a process that starts).

Reading the text (Sudachi, the cross-script keys, the passage windows of a long reply) is nine tenths of a
cold build of a user's turn index. The index keeps each read beside its turn (stores.turn_reads_duckdb) when
it reads it, at write time as a rule (the flush's last stage tops the index up), so a later build in a fresh
process decodes the reads instead of tokenising again. A read is only used with the text it came from and
the reader that made it (``reader()``): a tokeniser, dictionary or passage setting that changes reads again.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata

import numpy as np

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.records import text_md5

from ..text.token_count import count_tokens
from ..text.tokenize import terms
from ..text.transliterate import index_keys
from .passage_index import LongTurnTerms, assemble, long_turn_units

log = logging.getLogger("lumina.recall")

# Bumped whenever nodes.text.tokenize, nodes.text.transliterate or nodes.text.passages change what they give.
READ_VERSION = 6
_TERMS, _UNITS, _PARTS = "\x1f", "\x1e", "\x1d"  # never in a term or key: they are control characters
_HEAD = "\x1c"
_RESERVED = re.compile("[\x1c-\x1f]")


@lru_cache(maxsize=16)
def reader(cut: tuple[int, int]) -> str:
    """Who reads: the code's version, the tokeniser and its dictionary, the passage windows."""
    versions = []
    for package in ("SudachiPy", "sudachidict-core"):
        try:
            versions.append(metadata.version(package))
        except metadata.PackageNotFoundError:
            versions.append("-")
    return f"v{READ_VERSION}/sudachi {versions[0]}/dict {versions[1]}/passages {cut[0]},{cut[1]}"


@dataclass
class TurnReads:
    """Reads of a run of turns, by their position in it: token counts, terms and keys (a long turn's per
    passage too), and which of them were read now rather than decoded (they are the ones worth keeping)."""

    counts: np.ndarray
    reads: list[LongTurnTerms]
    fresh: list[int] = field(default_factory=list)
    units: dict[int, tuple[list, tuple]] = field(default_factory=dict)  # fresh long turns: (units, windows)


def read_turns(texts: Sequence[str], cut: tuple[int, int], stored: Mapping[int, str] | None = None) -> TurnReads:
    """Every turn among ``texts`` read: decoded from ``stored`` (position -> kept read) where it holds the turn,
    read from the text otherwise."""
    stored = stored or {}
    counts = np.zeros(len(texts), dtype=np.int32)
    reads: list[LongTurnTerms] = []
    out = TurnReads(counts, reads)
    for i, text in enumerate(texts):
        kept = stored.get(i)
        decoded = decode(kept) if kept is not None else None
        if decoded is not None:
            counts[i], read = decoded
        else:
            counts[i] = count_tokens(text)
            units = long_turn_units(text, cut) if cut[0] and counts[i] > cut[1] else None
            if units is not None:
                read = assemble(*units)
                out.units[i] = units
            else:
                read = LongTurnTerms(terms(text), index_keys(text), [])
            out.fresh.append(i)
        reads.append(read)
    return out


def encode(count: int, read: LongTurnTerms, units: tuple[list, tuple] | None) -> str | None:
    """One string (DuckDB decodes nothing of it); None when a term holds a separator (the turn is read again)."""
    if units is None:
        parts, windows = [(read.terms, read.keys)], ()
    else:
        parts, windows = units
    if any(_RESERVED.search("".join(t)) or _RESERVED.search("".join(k)) for t, k in parts):
        return None
    body = _PARTS.join(_TERMS.join(t) + _UNITS + _TERMS.join(k) for t, k in parts)
    head = f"{count}{_HEAD}" + ";".join(f"{a},{b}" for a, b in windows)
    return head + _HEAD + body


def decode(kept: str) -> tuple[int, LongTurnTerms] | None:
    """(token count, read) of an ``encode``d read; None for one that does not parse (read the text again)."""
    try:
        count, windows, body = kept.split(_HEAD, 2)
        parts = [_unit(p) for p in body.split(_PARTS)]
        if not windows:
            (words, keys), = parts
            return int(count), LongTurnTerms(words, keys, [])
        spans = tuple(tuple(int(x) for x in w.split(",")) for w in windows.split(";"))
        return int(count), assemble(parts, spans)
    except (ValueError, IndexError):
        return None


def _unit(part: str) -> tuple[list[str], tuple[str, ...]]:
    words, keys = part.split(_UNITS)
    return (words.split(_TERMS) if words else []), (tuple(keys.split(_TERMS)) if keys else ())


def stored_reads(archive, user_id: str, turn_ids: Sequence[str], cut: tuple[int, int],
                 only_these: bool = False) -> dict[int, str]:
    """Position among ``turn_ids`` -> the read kept for that turn; {} from an archive that keeps none or is down.
    ``only_these``: ask for these turns only (a top-up), not for every turn of the user (a build)."""
    table = getattr(archive, "turn_reads", None)
    if table is None or not turn_ids:
        return {}
    try:
        kept = table.stored(user_id, reader(cut), list(turn_ids) if only_these else None)
    except StoreUnavailable as exc:
        log.warning("kept reads of %s unavailable, reading the texts: %s", user_id, exc)
        return {}
    return {i: kept[t] for i, t in enumerate(turn_ids) if t in kept}


def keep_reads(archive, user_id: str, turn_ids: Sequence[str], texts: Sequence[str], cut: tuple[int, int],
               reads: TurnReads) -> int:
    """Keep the reads made now; how many were kept. A store that is down keeps none: the next build reads again."""
    table = getattr(archive, "turn_reads", None)
    if table is None or not reads.fresh:
        return 0
    rows = []
    for i in reads.fresh:
        kept = encode(int(reads.counts[i]), reads.reads[i], reads.units.get(i))
        if kept is not None:
            rows.append((turn_ids[i], text_md5(texts[i]), kept))
    try:
        return table.put(user_id, reader(cut), rows)
    except StoreUnavailable as exc:
        log.warning("reads of %s not kept (read again next build): %s", user_id, exc)
        return 0
