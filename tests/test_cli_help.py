"""`lumina-memory --help` says where data lives and how to reach production backends, and every option of
every subcommand says what it does and, where it takes one of a fixed set of values, which ones."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from lumina_memory.graphs.cli import build_parser
from lumina_memory.stores.settings import LuminaSettings

PRODUCTION_VARIABLES = ("REDIS_URL", "QDRANT_URL", "NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "OPENAI_API_KEY",
                        "OPENAI_BASE_URL", "LUMINA_S3_ENDPOINT_URL")


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser) for the parser and every subcommand under it, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, (*path, name))


def _options():
    for path, parser in _parsers(build_parser()):
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            name = "/".join(action.option_strings) or action.dest
            expanded = formatter._expand_help(action) if action.help else ""
            yield " ".join(path) or "lumina-memory", name, action, expanded


OPTIONS = list(_options())


def test_the_walk_reaches_every_registered_command():
    commands = {path[0] for path, _ in _parsers(build_parser()) if path}
    # one of each module's commands: cli.py, cli_admin, cli_memories, cli_knowledge, cli_procedures, cli_kb
    assert {"recall", "erase", "memories", "knowledge", "outcome", "kb"} <= commands
    assert {" ".join(p) for p, _ in _parsers(build_parser())} >= {"kb add", "kb remove"}
    assert len(OPTIONS) > 60


@pytest.mark.parametrize(("command", "option", "action", "text"), OPTIONS,
                         ids=[f"{c}:{o}" for c, o, _, _ in OPTIONS])
def test_every_option_says_what_it_does(command, option, action, text):
    assert action.help not in (None, argparse.SUPPRESS) and len(text.split()) >= 2, (command, option, action.help)
    if action.choices is not None:
        missing = [str(c) for c in action.choices if str(c) not in text]
        assert missing == [], f"{command} {option}: its help does not list {missing}: {text!r}"


def test_every_subcommand_has_a_help_line():
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {c.dest: c.help for c in action._choices_actions}
                assert set(helps) == set(action.choices) and all(helps.values()), (path, helps)


def test_top_level_help_names_the_data_directory_and_the_production_variables():
    text = build_parser().format_help()
    default = LuminaSettings.model_fields["data_dir"].default
    assert "LUMINA_DATA_DIR" in text and f"./{default}" in text, text
    for name in PRODUCTION_VARIABLES:
        assert name in text, name


def test_the_installed_command_prints_it():
    done = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "LUMINA_DATA_DIR" in done.stdout and "REDIS_URL" in done.stdout
