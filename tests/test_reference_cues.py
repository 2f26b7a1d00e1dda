"""F6 references: which turns refer back to an earlier conversation, in Japanese and English."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.text.reference_cues import reference_cues, refers_back


@pytest.mark.parametrize("text", [
    "この前話した猫のモカ、元気になったよ",
    "この前の件だけど、やっぱりやめた",
    "前に話した映画、ついに観たんだ",
    "前にも言ったけど、私は朝が苦手",
    "あの時の旅行の写真を見つけた",
    "先週の話の続きなんだけど",
    "さっきの話、もう少し聞いて",
    "ルミナが言ってたお店に行ってきた",
    "前回の相談のことで報告があります",
    "例の件、うまくいったよ",
    "モカのこと覚えてる？",
    "ＡＳ Ｉ ＳＡＩＤ, the project is late",  # full width: NFKC first
    "As I said, the project is late",
    "Like I told you, Mocha hates baths",
    "Remember when we went to Kyoto?",
    "Last time we talked about my new job",
    "I saw Mocha at the vet the other day",
    "We talked about this before, right?",
    "Do you remember my sister's name?",
])
def test_a_turn_that_refers_back_has_a_cue(text):
    assert refers_back(text)
    assert reference_cues(text)


@pytest.mark.parametrize("text", [
    "寝る前に本を読んだ",
    "この前髪型を変えたら似合わなかった",  # この前髪: the bangs, not "the other day"
    "名前言ってみて",
    "学校にいってた頃が懐かしい",  # 行ってた (went), not 言ってた (said)
    "明日は雨らしい",
    "猫のモカが元気になったよ",
    "覚えておいて、母の誕生日は三月十二日",  # a protect request, not a reference back
    "I will remember this forever",
    "Before the meeting I had coffee",
    "The time is right for a change",
    "Mocha is feeling better today",
])
def test_a_turn_that_does_not_refer_back_has_none(text):
    assert not refers_back(text)
    assert reference_cues(text) == []


def test_cues_come_in_the_order_they_are_said():
    assert reference_cues("さっきの話と、この前話したことだけど、as I said") == ["さっきの", "この前話", "as i said"]
