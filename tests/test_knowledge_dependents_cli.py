"""F6 at the command line: `lumina-memory knowledge` shows why a fact is under review and what it rests on or
contradicted, `profile` lists it under review instead of among the current facts (the CLI run in this process
on a data dir of its own: every store real)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow  # the CLI opens every store and loads the embedder

MAY = 1_778_000_000.0
LINES = [("I live in Osaka. I take the train from Umeda every morning.", MAY),
         ("I really love coffee.", MAY + 60),
         ("I moved to Fukuoka last month.", MAY + 30 * 86_400)]


def test_the_cli_shows_why_a_fact_is_under_review(cli_factory, tmp_path):
    cli = cli_factory(in_process=True)
    transcript = tmp_path / "ken.jsonl"
    transcript.write_text("".join(json.dumps({"user_id": "ken", "speaker": "user", "text": text, "ts": ts}) + "\n"
                                  for text, ts in LINES), encoding="utf-8")
    cli("ingest", str(transcript))
    items = {k["value"]: k for k in json.loads(cli("knowledge", "--user", "ken", "--all", "--json").stdout)}
    train, osaka, fukuoka = items["take the train from Umeda"], items["Osaka"], items["Fukuoka"]
    assert train["derived_from"] == [osaka["item_id"]] and fukuoka["contradicts"] == [osaka["item_id"]]
    assert train["note"] == "needs review: rests on lives_in: Osaka, which changed, now Fukuoka"
    assert items["coffee"]["derived_from"] == [] and not items["coffee"]["note"].startswith("needs review")
    table = cli("knowledge", "--user", "ken", "--all").stdout
    assert "rests on lives_in: Osaka" in table and "contradicts lives_in: Osaka" in table
    profile = json.loads(cli("profile", "--user", "ken", "--json").stdout)
    assert "take the train from Umeda" not in {f["value"] for f in profile["facts"]}
    assert [(f["value"], f["why"]) for f in profile["under_review"]] == [
        ("take the train from Umeda", "rests on lives_in: Osaka, which changed, now Fukuoka")]
    assert "? habit: take the train from Umeda" in cli("profile", "--user", "ken").stdout
