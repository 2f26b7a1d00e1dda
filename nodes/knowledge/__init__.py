"""Semantic memory (A4, A6, A7): knowledge items read from the user's turns, validated, and kept with history.

- ``models``: ``KnowledgeItem`` (subject / attribute / value, polarity, validity, sources) and its id.
- ``extract``: ``extract_items`` — the offline extractor (Japanese over Sudachi in ``ja_patterns``, English in
  ``en_patterns``, dates in ``dates``).
- ``ground``: ``validate_items`` — keep items grounded in their source turns (A6), with a reviewer seam for the
  model path.
- ``resolve``: ``resolve`` / ``resolve_all`` — supersede, merge or coexist (A7), ``current_facts``, ``history``.
- ``params``: ``KnowledgeParams`` (which attributes are single-valued, the word lists) and its README table.
- ``coverage``: the README table of what the offline extractor recognises.
"""

from .coverage import coverage_table_markdown
from .extract import extract_items
from .ground import Rejection, Validation, validate_items
from .models import ATTRIBUTES, USER, KnowledgeItem, knowledge_item_id
from .params import KnowledgeParams, params_table_markdown
from .resolve import Resolution, current_facts, history, resolve, resolve_all

__all__ = [
    "ATTRIBUTES", "USER", "KnowledgeItem", "KnowledgeParams", "Rejection", "Resolution", "Validation",
    "coverage_table_markdown", "current_facts", "extract_items", "history", "knowledge_item_id",
    "params_table_markdown", "resolve", "resolve_all", "validate_items",
]
