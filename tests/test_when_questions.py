"""A when-question lifts the candidates that say when (nodes/retrieval/time_mentions.py, recall.py).

"When did Priya go to the choir rehearsal?" is answered by "I went to choir rehearsal yesterday", not by "the
choir rehearsal was great": the turns that answer "when" questions mostly name a time in their text, and most other
turns do not. The lift is relevance × (1 + recall_when_lift) for such candidates; not where the
other side answers at length (an assistant's replies name times in passing; the decisions are short user turns
dated by their timestamps)."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.ranking import lift_time_mentions as _lift_time_mentions
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.time_mentions import asks_when, mentions_time
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.stores.models import Turn


@pytest.mark.parametrize("question", [
    "When did Priya go to the choir rehearsal?", "when did i start pottery?", "So when did we move?",
    "You went to Rome when?", "What date did we fix the deadline?", "Which year did Omar open his bakery?",
    "How long ago did I adopt Mocha?", "Since when has Ines played the cello?",
    "いつ引っ越したっけ？", "いつから陶芸を始めたの？", "モカを迎えたのは何月だった？", "何曜日にジムに行った？",
    "¿Cuándo fue Priya al ensayo del coro?", "Wann bin ich umgezogen?", "Quand ai-je commencé la poterie ?",
    "Quando ho adottato Mocha?", "Wanneer ben ik verhuisd?", "¿En qué año abrió Omar su panadería?", "언제 이사했어?",
    "我什么时候搬家的？", "متى انتقلت إلى هنا؟", "मैं कब गई थी?", "ฉันย้ายบ้านเมื่อไหร่", "Когда я переехал?",
])
def test_questions_asking_when(question):
    assert asks_when(question)


@pytest.mark.parametrize("question", [
    "Who helps Priya when she feels low?",  # "when" opens a clause, it asks who
    "What does Ines hear when playing the cello underwater?", "What did Marek paint?",
    "How long did the trip take?", "いつも何を食べてる？", "いつか行きたい場所は？", "どこに行ったの？",
    "¿Qué hago cuando llueve?", "Was mache ich, wenn es regnet?", "Que fais-je quand il pleut ?",
])
def test_questions_not_asking_when(question):
    assert not asks_when(question)


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


def test_the_lift_reorders_only_the_turns_that_say_when():
    index = _index(["The pottery class teacher is so kind.", "I went to my first pottery class last Saturday!",
                    "Pottery is my favourite hobby."])
    rel = np.array([1.0, 0.9, 0.5])
    _lift_time_mentions(index, rel, 0.25)
    assert rel.tolist() == pytest.approx([1.0, 0.9 * 1.25, 0.5])
    flat = np.array([1.0, 0.9, 0.5])
    _lift_time_mentions(index, flat, 0.0)  # 0 = off
    assert flat.tolist() == [1.0, 0.9, 0.5]


def test_a_long_turn_counts_as_saying_when_without_being_read():
    # A long reply names some time in passing nearly always, so its text says nothing either way and is not read.
    index = _index(["a reply that names no time at all", "short, no time either"], counts=[400, 5])
    assert index.time_mentions(np.array([0, 1])).tolist() == [0]


def test_recall_lifts_the_turn_that_says_when(memory):
    user = "mika"
    pottery = {0: "I love going to the pottery class, the pottery class teacher is so kind.",
               4: "Yesterday was my first pottery lesson!",
               8: "Going to the pottery class makes me calm; the pottery class is my thing."}
    filler = ["Did you see the match?", "The weather is lovely.", "I made pasta for dinner.", "My cat is asleep.",
              "That song is stuck in my head.", "I need new shoes.", "The train was late.", "Coffee helps."]
    texts = [pottery.get(n) or filler.pop() for n in range(11)]
    rows = [{"user_id": user, "speaker": "user" if n % 2 == 0 else "lumina", "text": text,
             "ts": 1_790_000_000.0 + 600 * n, "source_id": f"m:{n}"} for n, text in enumerate(texts)]
    replay(memory.graph, user, rows, flush=True)
    question = "When did I go to the pottery class?"

    def best(**kwargs) -> list[str]:
        items = recall(memory.services, user, question, purpose="question", budget=16, **kwargs)
        return [sid for i in items for sid in i["source_ids"]]

    assert best()[0] == "m:4"
    assert best(disabled=("when",))[0] != "m:4"  # without the lift a closer match of the words comes first
