"""What a pattern finds in one sentence, before it becomes a ``KnowledgeItem`` with ids and sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from .models import USER


@dataclass(frozen=True)
class Draft:
    attribute: str
    value: str
    value_key: str
    pattern: str
    """Pattern family, e.g. ``ja.like`` (the coverage table's rows)."""
    subject: str = USER
    polarity: str = "positive"
    detail: str = ""
    context: str = ""
    category: str = ""
    event_date: date | None = None
    when_text: str = ""


@dataclass
class Registry:
    """Names met so far in a user's conversation: name → (attribute, detail), so 「モカは4歳」 knows モカ."""

    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    recent: str | None = None
    """The name last introduced or mentioned in the current turn: 「猫のソラ飼ってるの。もう5歳だよ」."""
    asked: str = ""
    """An attribute the user just asked themself about in this turn (「一番好きな食べ物？」), answered next."""
    unnamed: tuple[str, str] | None = None
    """(attribute, kind) of a pet just mentioned without its name in this turn: 「うち猫飼ってるの。ソラっていう名前」."""

    def add(self, name: str, attribute: str, detail: str) -> None:
        self.names.setdefault(name, (attribute, detail))
        self.recent = name

    def new_turn(self) -> None:
        self.recent, self.asked, self.unnamed = None, "", None
