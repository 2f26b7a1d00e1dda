"""Offline extraction (A6, no model): knowledge items from a segment's turns, deterministic and fast.

Only the speakers in ``KnowledgeParams.extract_speakers`` (the user) are read: what a character says about
the user is not the user's word. Each turn is cut into sentences; a sentence with Japanese script goes to the
Japanese patterns (Sudachi), any other to the English ones. Names met on the way (妹の美咲, my dog Rex) are
remembered for the rest of the call, so 「美咲は…」 / "Rex turned 4" later find their subject; names known from
earlier knowledge can be passed in as ``known_names``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from lumina_memory.nodes.text.sentences import sentences as split_sentences

from .draft import Draft, Registry
from .en_patterns import extract_en
from .ja_patterns import extract_ja
from .models import KnowledgeItem, SourceTurn, as_source_turn, knowledge_item_id
from .params import KnowledgeParams

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def sentences(text: str) -> list[str]:
    """NFKC-normalised sentences of a turn (the toolkit's splitter, ``nodes.text.sentences``)."""
    return split_sentences(unicodedata.normalize("NFKC", text))


def is_japanese(sentence: str) -> bool:
    return bool(_JAPANESE.search(sentence))


def extract_items(
    turns: Iterable[Mapping[str, Any] | Any],
    params: KnowledgeParams | None = None,
    *,
    known_names: Mapping[str, tuple[str, str]] | None = None,
) -> list[KnowledgeItem]:
    """Knowledge items said in ``turns`` (dicts shaped like ``TurnState`` or stored ``Turn`` models), in order.

    ``known_names``: name → (attribute, relation) of people and pets already known (e.g. モカ → (pet, 猫)).
    Items come out unvalidated (confidence 0); ``ground.validate_items`` keeps the grounded ones.
    """
    params = params or KnowledgeParams()
    registry = Registry(dict(known_names or {}))
    items: dict[str, KnowledgeItem] = {}
    for raw in turns:
        turn = as_source_turn(raw)
        if turn["speaker"] not in params.extract_speakers or not turn["text"].strip():
            continue
        registry.new_turn()
        for sentence in sentences(turn["text"]):
            for draft in extract_sentence(sentence, turn["ts"], params, registry):
                item = to_item(draft, sentence, turn)
                items.setdefault(item.item_id, item)
    return list(items.values())


def extract_sentence(sentence: str, said_at: float, params: KnowledgeParams, registry: Registry) -> list[Draft]:
    """Drafts from one (NFKC-normalised) sentence, duplicates removed."""
    drafts = (extract_ja if is_japanese(sentence) else extract_en)(sentence, params, registry, said_at)
    unique: dict[tuple[str, str, str, str], Draft] = {}
    for d in drafts:
        unique.setdefault((d.subject, d.attribute, d.value_key, d.polarity), d)
    return list(unique.values())


def to_item(draft: Draft, sentence: str, turn: SourceTurn) -> KnowledgeItem:
    return KnowledgeItem(
        item_id=knowledge_item_id(turn["turn_id"], draft.subject, draft.attribute, draft.value_key, draft.polarity),
        subject=draft.subject, attribute=draft.attribute, value=draft.value, value_key=draft.value_key,
        polarity=draft.polarity, detail=draft.detail, context=draft.context, category=draft.category,
        event_date=draft.event_date, when_text=draft.when_text, text=sentence,
        source_turn_ids=(turn["turn_id"],), source_ids=(turn["source_id"],),
        said_at=turn["ts"], valid_from=turn["ts"], pattern=draft.pattern, method="offline",
    )
