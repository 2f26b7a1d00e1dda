"""The README tables of knowledge extraction's settings (``KnowledgeParams``, defined in the settings layer):
how each attribute is updated and what every other setting does.
"""

from __future__ import annotations

from lumina_memory.stores.settings_knowledge import ATTRIBUTES, DEFAULT_POLICY, KnowledgeParams, Policy

__all__ = ["ATTRIBUTE_MEANINGS", "DEFAULT_POLICY", "KnowledgeParams", "Policy", "params_table_markdown"]

ATTRIBUTE_MEANINGS: dict[str, str] = {
    "likes": "something the user (or a person in their life) likes, loves or is into",
    "dislikes": "something they dislike, hate or cannot stand",
    "drink": "their current drink (a switch 「コーヒーやめて紅茶にした」, 「好きな飲み物は…」)",
    "food": "their current favourite food (「好きな食べ物は…」, a switch)",
    "film": "their current favourite film (「一番好きな映画は…」)",
    "name": "their name",
    "lives_in": "where they live now",
    "from": "where they are from (出身, born in, grew up in)",
    "works_at": "where they work",
    "job": "what they work as",
    "sibling": "a sister or brother, by name (detail: the relation)",
    "parent": "a parent or grandparent, by name",
    "child": "a son or daughter, by name",
    "partner": "a partner, by name",
    "friend": "a friend or colleague, by name",
    "pet": "a pet, by name (detail: the species), or a species kept (「犬を飼ってる」)",
    "age": "age in years (of the user, or of a named person or pet)",
    "has": "a possession (car, piano, laptop …)",
    "plan": "something they will do, with its day when said (12月5日に京都に行く)",
    "event": "something they did on a given day",
    "visited": "a place they have been to (「台湾行ってきた」, I went to Lisbon)",
    "habit": "something they do routinely (detail: how often, 毎朝 / every morning)",
    "issue": "a problem, worry or task still open (「プリンターが壊れて困ってる」); ended when resolved (nodes.knowledge.resolutions)",
}


def params_table_markdown(params: KnowledgeParams | None = None) -> str:
    """The README tables: how each attribute is updated, then every other setting."""
    params = params or KnowledgeParams()
    rows = ["| attribute | update | meaning |", "|---|---|---|"]
    for attribute in ATTRIBUTES:
        update = "supersede (one value at a time)" if params.is_single(attribute) else "accumulate (coexist)"
        if attribute in params.opposites:
            update += f"; ends the same value of `{params.opposites[attribute]}`"
        rows.append(f"| `{attribute}` | {update} | {ATTRIBUTE_MEANINGS[attribute]} |")
    rows += ["", "| parameter | value | meaning |", "|---|---|---|"]
    for name, field in KnowledgeParams.model_fields.items():
        if name in ("policy", "opposites"):
            continue
        value = getattr(params, name)
        shown = f"{len(value)} words" if isinstance(value, (dict, tuple)) and name != "extract_speakers" else str(value)
        if name in ("extract_speakers", "forget_protected_subjects"):
            shown = ", ".join(value)
        rows.append(f"| `{name}` | {shown} | {field.description} |")
    return "\n".join(rows)
