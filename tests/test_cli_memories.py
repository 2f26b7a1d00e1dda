"""`lumina-memory memories | protect | unprotect | forget | maintain --now | recall --json`, run as a user would."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def cli(cli_factory):
    """The commands' ``main`` called in this process: what they do is the subject here, not the process boundary."""
    return cli_factory(in_process=True)


FIELDS = {"memory_id", "level", "retention", "intensity", "valence", "arousal", "tags", "category", "decay",
          "memory_days", "recall_count", "protected", "archived", "revival_requested", "text", "source_turn_ids",
          "source_ids", "created", "relations", "low_activity", "trigger", "content", "trigger_path"}


def test_the_memory_commands(cli, tmp_path):
    file = tmp_path / "chat.jsonl"
    lines = []
    for topic, text in enumerate(("猫のムギが最近よく寝ている", "転職の面接に受かった！本当に嬉しい！", "母の誕生日は三月十二日")):
        for i in range(6):
            lines.append({"user_id": "kana", "speaker": "user" if i % 2 == 0 else "nox", "source_id": f"d{topic}:{i}",
                          "text": f"{text}、その{i}", "ts": f"2026-01-0{topic + 1}T10:0{i}:00+09:00"})
    file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n", encoding="utf-8")
    cli("ingest", str(file))
    memories = json.loads(cli("memories", "--user", "kana", "--json").stdout)
    assert memories and all(set(m) == FIELDS for m in memories)
    assert {s for m in memories for s in m["source_ids"]} <= {r["source_id"] for r in lines}
    target = memories[0]["memory_id"]
    assert "protected" in cli("protect", "--user", "kana", target).stdout
    assert json.loads(cli("memories", "--user", "kana", "--json").stdout)[0]["protected"] is True
    cli("unprotect", "--user", "kana", target)
    refused = cli("protect", "--user", "someone", target, check=False)
    assert refused.returncode == 2 and "not found" in refused.stdout
    report = json.loads(cli("maintain", "--user", "kana", "--now", "2026-01-05T04:00+09:00", "--json").stdout)
    assert report["lifecycle"]["days"] == 1
    report = json.loads(cli("maintain", "--user", "kana", "--now", "2026-03-05T04:00+09:00", "--json").stdout)
    assert report["lifecycle"]["days"] == 59
    levels = json.loads(cli("memories", "--user", "kana", "--json").stdout)
    assert any(m["level"] > 1 for m in levels)
    items = json.loads(cli("recall", "--user", "kana", "猫の名前は？", "--json").stdout)
    assert items and all("level" in i and "archived" in i for i in items)
    bad = cli("maintain", "--now", "yesterday", check=False)
    assert bad.returncode == 2 and "ISO-8601" in bad.stderr  # refused while parsing: one line on stderr
    forgotten = json.loads(cli("forget", "--user", "kana", target, "--json").stdout)
    assert forgotten["lifecycle"] == 1
    assert target not in {m["memory_id"] for m in json.loads(cli("memories", "--user", "kana", "--json").stdout)}
