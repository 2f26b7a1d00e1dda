"""The three characters are defined once (lumina_memory.nodes.characters) and every place that names them reads
that definition: speakers, the CLI's --character, the run context, who answers, the personas, greeting filler,
stop words. A spelling that differs in one place (ノックス for ノクス) made "こんにちは、ノクス！" no greeting."""

from __future__ import annotations

import argparse
import typing

import pytest

from lumina_memory.graphs.cli import build_parser
from lumina_memory.graphs.context import RunContext
from lumina_memory.nodes import characters
from lumina_memory.nodes.character_select import choose_character, named_characters
from lumina_memory.nodes import detect_boundary
from lumina_memory.nodes.priming.message_type import detect_message_type
from lumina_memory.nodes.respond import PERSONAS, offline_reply
from lumina_memory.nodes.text.tokenize import STOP_NOUNS
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings import CHARACTERS, SPEAKERS

CAST = characters.CAST


def test_the_cast_is_lumina_clarisse_and_nox_with_their_names_in_both_scripts():
    assert [(c.id, c.name, c.name_ja) for c in CAST] == [
        ("lumina", "Lumina", "ルミナ"), ("clarisse", "Clarisse", "クラリス"), ("nox", "Nox", "ノクス")]
    assert characters.CHARACTERS == CHARACTERS == ("lumina", "clarisse", "nox")
    assert SPEAKERS == ("user", *CHARACTERS)


def test_lookup_by_id_and_display_name():
    assert characters.get("nox").name_ja == "ノクス"
    assert characters.display_name("clarisse") == "Clarisse"
    assert characters.display_name("clarisse", "ja") == "クラリス"
    assert characters.names_phrase() == "Lumina, Clarisse and Nox"
    assert characters.names_phrase("ja") == "ルミナ、クラリス、ノクス"


@pytest.mark.parametrize(("call", "args"), [(characters.get, ("noxx",)), (characters.get, ("Nox",)),
                                            (characters.display_name, ("lumina", "fr"))])
def test_an_unknown_id_or_language_is_a_named_error(call, args):
    with pytest.raises(InvalidInput) as err:
        call(*args)
    assert repr(args[-1]) in str(err.value)


@pytest.mark.parametrize("char", CAST, ids=lambda c: c.id)
def test_every_spelling_of_a_name_is_recognised(char):
    for spelling in char.spellings:
        assert named_characters(f"ねえ{spelling}、聞いて") == [char.id], spelling
        assert choose_character(f"{spelling.upper()}, what do you think?", {}) == char.id, spelling


@pytest.mark.parametrize("char", CAST, ids=lambda c: c.id)
def test_a_greeting_with_only_a_name_is_a_greeting(char):
    for spelling in char.spellings:
        assert detect_message_type(f"こんにちは、{spelling}！") == "greeting", spelling
        assert detect_message_type(f"hi {spelling}!") == "greeting", spelling
    assert detect_message_type(f"こんにちは、{char.name_ja}、昨日の映画どうだった？") == "question"


def test_every_place_that_names_them_reads_the_definition():
    assert set(PERSONAS) == set(CHARACTERS)
    assert all(PERSONAS[c.id].startswith(f"{c.name_ja}:") for c in CAST)
    assert {c.name_ja for c in CAST} <= STOP_NOUNS
    assert detect_boundary.CHARACTERS is characters.CHARACTERS  # the open segment's per-character counts
    hints = typing.get_type_hints(RunContext)
    assert set(typing.get_args(typing.get_args(hints["character"])[0])) == set(CHARACTERS)
    chat = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["chat"]
    option = next(a for a in chat._actions if a.dest == "character")
    assert tuple(option.choices) == CHARACTERS
    for c in CAST:
        assert offline_reply(c.id, "元気？", [])  # each has its own voice


def test_the_misspelling_is_gone_from_the_package():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    hits = [str(p.relative_to(root)) for folder in ("graphs", "nodes", "stores")
            for p in (root / folder).rglob("*.py") if "ノックス" in p.read_text(encoding="utf-8")]
    assert hits == []
