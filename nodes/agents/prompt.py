"""The cognitive controller's prompt assembled within P1's token budget (the note's section 4.2.1).

``prompt_tokens`` (4,096) is split by ``prompt_shares`` (system 10 %, working memory 30 %, goals 15 %, social 15 %,
memories 20 %, alerts 10 %) through nodes.priming.budgets.working_memory_split, so a call may replace the shares,
multiply some of them (``adjust``: more alerts in an emergency, more social while talking) or name a situation.
Each section is filled within its own budget, its heading included, tokens counted by nodes.text.token_count:

- a string is one item; a list holds items best first; a dict (the working-memory document) is compact JSON
  whose top-level keys are its items, in the document's order;
- items that do not fit are dropped from the lowest-ranked up (a dict loses its last keys, so the JSON stays
  valid); when even the best item alone does not fit a text section, it is cut at a token boundary (a whole word,
  or between two CJK characters: never inside a character).

Sections are written in the order of the shares, each under a "## name" heading (system without one), separated by
blank lines, so the prompt's token count is the sum of its sections'.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from lumina_memory.nodes.priming.budgets import working_memory_split
from lumina_memory.nodes.text.token_count import count_tokens, token_spans
from lumina_memory.nodes.validate import clean_text
from lumina_memory.stores.errors import InvalidInput

HEADINGS = {"system": "", "working_memory": "## Working memory", "goals": "## Goals", "social": "## Social",
            "memories": "## Memories", "alerts": "## Alerts"}

Section = str | Sequence[str] | Mapping[str, Any]


class Assembled(BaseModel):
    """The prompt, the tokens each section took (heading included), the budget it had, and what was left out:
    ``dropped`` names whole items ("memories[3]", "working_memory.inventory"), ``cut`` the items shortened."""

    model_config = ConfigDict(frozen=True)

    text: str
    tokens_by_section: dict[str, int]
    budget: dict[str, int]
    dropped: list[str]
    cut: list[str]


def _clean(field: str, text: object) -> str:
    """An item as nodes.validate reads input (valid Unicode, no control characters, NFC); a blank item is empty."""
    if isinstance(text, str) and not text.strip():
        return ""
    return clean_text(text, field)


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest start of ``text`` that costs at most ``budget`` tokens, ending at a token's end."""
    if budget <= 0:
        return ""
    spans = token_spans(text)
    if len(spans) <= budget:
        return text
    return text[: spans[budget - 1][1]]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _fill_dict(name: str, doc: Mapping[str, Any], room: int) -> tuple[str, list[str]]:
    keys = list(doc)
    for k in keys:
        _clean(f"{name}.{k}", k)
    text = _compact(doc)
    _clean(name, text)
    while keys and count_tokens(text) > room:
        keys.pop()
        text = _compact({k: doc[k] for k in keys})
    dropped = [f"{name}.{k}" for k in list(doc)[len(keys):]]
    return (text if keys else ""), dropped


def _fill_items(name: str, items: Sequence[str], room: int) -> tuple[str, list[str], list[str]]:
    clean = [_clean(f"{name}[{i}]", t) for i, t in enumerate(items)]
    kept: list[str] = []
    used = 0
    for i, text in enumerate(clean):
        cost = count_tokens(text)
        if used + cost > room:
            if not kept and room > 0:
                return cut_to_tokens(text, room), [f"{name}[{j}]" for j in range(1, len(clean))], [f"{name}[{i}]"]
            return "\n".join(kept), [f"{name}[{j}]" for j in range(i, len(clean))], []
        if text:
            kept.append(text)
        used += cost
    return "\n".join(kept), [], []


def assemble_prompt(sections: Mapping[str, Section], total: int | None = None,
                    shares: Mapping[str, float] | None = None, adjust: Mapping[str, float] | None = None, *,
                    params, situation: str = "normal") -> Assembled:
    """The prompt of ``sections`` (keys among the shares' sections) within ``total`` tokens (``prompt_tokens``)."""
    total = params.prompt_tokens if total is None else total
    if isinstance(total, bool) or not isinstance(total, int) or total < 1:
        raise InvalidInput("total", f"must be a whole number of tokens >= 1, got {total!r}")
    try:
        split = working_memory_split(total, situation=situation, shares=shares or params.prompt_shares,
                                     adjust=adjust)
    except ValueError as exc:
        raise InvalidInput("shares", str(exc)) from None
    unknown = sorted(set(sections) - set(split.parts))
    if unknown:
        raise InvalidInput("sections", f"unknown section(s) {', '.join(map(str, unknown))}; "
                                       f"choose among {', '.join(split.parts)}")
    pieces: list[str] = []
    tokens: dict[str, int] = {}
    dropped: list[str] = []
    cut: list[str] = []
    for name, budget in split.parts.items():
        value = sections.get(name)
        if value is None:
            continue
        heading = HEADINGS.get(name, f"## {name}")
        room = budget - count_tokens(heading)
        if isinstance(value, Mapping):
            body, lost = _fill_dict(name, value, room)
        else:
            body, lost, short = _fill_items(name, [value] if isinstance(value, str) else list(value), room)
            cut += short
        dropped += lost
        if not body:
            tokens[name] = 0
            continue
        piece = f"{heading}\n{body}" if heading else body
        pieces.append(piece)
        tokens[name] = count_tokens(piece)
    return Assembled(text="\n\n".join(pieces), tokens_by_section=tokens, budget=dict(split.parts), dropped=dropped,
                     cut=cut)
