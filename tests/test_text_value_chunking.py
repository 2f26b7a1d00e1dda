"""S3 helpers: chunking long texts under one id, and skipping low-value content."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.text.chunking import chunk_text, reassemble
from lumina_memory.nodes.text.token_count import count_tokens
from lumina_memory.nodes.text.value import is_small_talk, low_value_reason


def test_tokens_count_cjk_characters_and_words():
    assert count_tokens("猫が好き") == 4
    assert count_tokens("I like cats") == 3
    assert count_tokens("モカ is 3 years old") == 6


@pytest.mark.parametrize(
    "text", ["あ" * 4500, " ".join(f"w{i}" for i in range(5000)), ("猫 cat " * 1500).strip()],
    ids=["kana", "words", "mixed"],
)
def test_chunks_overlap_and_reassemble_exactly(text):
    chunks = chunk_text(text, 2000, 200)
    assert len(chunks) > 1 and all(count_tokens(c) <= 2000 for c in chunks)
    assert reassemble(chunks, 200) == text


def test_short_text_is_one_chunk():
    assert chunk_text("短い", 2000, 200) == ["短い"]
    with pytest.raises(ValueError):
        chunk_text("x", 10, 10)


def test_low_value_content_is_named():
    assert is_small_talk("うん！") and is_small_talk("OK, thanks!") and not is_small_talk("猫が好き")
    assert low_value_reason(["おはよう", "おはよう！"]) == "small talk"
    assert low_value_reason(["Traceback (most recent call last):\n  File x\nValueError: bad"]) == "error output"
    assert low_value_reason(["眠い"]) == "too short"
    assert low_value_reason(["うん", "来週、京都の金閣寺に行く予定なんだ"]) is None
