"""Whether a turn says when something happened (nodes/retrieval/time_mentions.py): "I went to choir rehearsal
yesterday" does, "the choir rehearsal was great" does not; a long reply counts as saying when without being read."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.nodes.retrieval.time_mentions import mentions_time
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.stores.models import Turn


@pytest.mark.parametrize("text", [
    "Priya: I went to choir rehearsal yesterday and it was so moving.",
    "Repainted the fence last week - come see!", "We went camping two weekends ago.", "I ran a fundraiser on Saturday.",
    "My birthday is on the 15th.", "Back in 2022 I moved to Boston.", "I started in May 2023.",
    "It snowed a few days ago", "昨日、陶芸教室に行ってきた", "先週の金曜日に引っ越したよ", "3日前から風邪気味", "6月に旅行した",
    "Fui al ensayo del coro ayer.", "Letzte Woche habe ich gemalt.", "Je suis allée au parc vendredi.",
    "Hace tres días que llueve.", "Ci siamo trasferiti a maggio.", "어제 도서관에 갔어", "我上周去了北京",
    "ذهبت أمس إلى المكتبة", "मैं पिछले हफ्ते वहाँ गई", "ไปเมื่อวาน", "Я ходил туда вчера",
    "Я переехал 8 мая.", "मैं 8 मई को वहाँ गई", "انتقلت في ٨ مايو", "ย้ายบ้านวันที่ 8 พฤษภาคม", "Это было в марте.",
    "Я ходил туда в пятницу", "मैं शनिवार को वहाँ गई", "ذهبت يوم السبت", "ไปวันเสาร์",
])
def test_texts_that_say_when(text):
    assert mentions_time(text)


@pytest.mark.parametrize("text", [
    "The choir rehearsal was great, everyone was so kind.", "I love painting landscapes.",
    "This is the best ice cream!", "Last but not least, thank you.", "May I ask you something?",
    "陶芸って楽しいよね", "今度一緒に行こうよ",
    "Me encanta pintar paisajes.", "Ich liebe Hunde.", "我喜欢猫", "I ate 3 Mars bars", "Domingo came by.",
    "Two mai tais, please.", "Mei said hi.", "Extra mayo on mine.",
    "أحب القطط", "मुझे बिल्लियाँ पसंद हैं", "Я люблю кошек", "У меня 3 кошки", "Март — мой любимый месяц",
])
def test_texts_that_do_not(text):
    assert not mentions_time(text)


def _index(texts: list[str], counts: list[int] | None = None) -> UserTurns:
    turns = [Turn(turn_id=f"t{i}", source_id=f"s{i}", user_id="u", segment_id="g", speaker="user", text=t,
                  ts=1_700_000_000.0 + i) for i, t in enumerate(texts)]
    index = UserTurns.build(turns)
    if counts is not None:
        index.token_counts = np.asarray(counts, dtype=np.int32)
    return index


def test_a_long_turn_counts_as_saying_when_without_being_read():
    # A long reply names some time in passing nearly always, so its text says nothing either way and is not read.
    index = _index(["a reply that names no time at all", "short, no time either"], counts=[400, 5])
    assert index.time_mentions(np.array([0, 1])).tolist() == [0]

