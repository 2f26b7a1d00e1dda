"""Item ids of the LangGraph store (stores.langgraph_store): one id per (namespace, key), never shared.

The first scheme was uuid5("lgstore|<labels joined by '.'>|<key>"). LangGraph forbids '.' inside a label,
but labels and keys may contain '|', so ``(("memories", "alice|note"), "1")`` and
``(("memories", "alice"), "note|1")`` got the same id: a get, put or delete through one reached the other
namespace's item (issue 16). Now:

- no '|' in any label or in the key: the first scheme, unchanged. On such parts it is injective (the text
  splits at its only two '|', the labels at '.'), and every item written before keeps its id — its row and
  its vector points need no migration;
- otherwise: uuid5("lgstore2|" + JSON of [labels, key]) — JSON is injective, and its prefix differs from
  the first scheme's, so the two never produce the same name.

Items with a '|' written under the first scheme are the only ones whose id changes: ``legacy_rows`` finds
them (one scan of two columns) and the store re-keys them when it opens (LuminaStore._rekey_legacy).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence

from . import ids
from .kv_duckdb import Row, ns_path
from .protocols_files import ItemTable

AMBIGUOUS = "|"


def item_id(namespace: Sequence[str], key: str) -> str:
    if AMBIGUOUS in key or any(AMBIGUOUS in label for label in namespace):
        canonical = json.dumps([list(namespace), key], ensure_ascii=False, separators=(",", ":"))
        return str(uuid.uuid5(ids.NAMESPACE, f"lgstore2|{canonical}"))
    return str(uuid.uuid5(ids.NAMESPACE, f"lgstore|{ns_path(namespace)}|{key}"))


def legacy_rows(items: ItemTable) -> list[Row]:
    """Rows stored under an id the current scheme does not give them (written before it, with a '|')."""
    return [row for row in items.containing(AMBIGUOUS) if row.item_id != item_id(row.namespace, row.key)]
