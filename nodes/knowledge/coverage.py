"""What the offline extractor recognises: one row per pattern family, with a Japanese and an English example.

The examples are run by the tests (``examples_that_fail``), so the README table never claims a pattern the
extractor does not have.
"""

from __future__ import annotations

from dataclasses import dataclass

from .extract import extract_items
from .params import KnowledgeParams


@dataclass(frozen=True)
class Family:
    name: str
    attribute: str
    """The attribute the examples yield (as checked)."""
    polarity: str
    ja_pattern: str
    ja_example: str
    en_pattern: str
    en_example: str
    notes: str = ""


FAMILIES: tuple[Family, ...] = (
    Family("likes", "likes", "positive", "ja.like", "コーヒーが大好き", "en.like", "I really love coffee",
           "好き/大好き/趣味, like/love/adore/enjoy/am a fan of/nothing makes me happier than; 「猫好き」; 「走るのが好き」"),
    Family("into", "likes", "positive", "ja.hooked", "最近キャンプにハマってる", "en.like", "I'm into rock climbing",
           "ハマってる, into / obsessed with / hooked on"),
    Family("dislikes", "dislikes", "positive", "ja.dislike", "ホラー映画は苦手なんだ", "en.dislike",
           "I can't stand horror movies", "嫌い/苦手/好きじゃない, hate/dislike/can't stand/don't like"),
    Family("no longer likes", "likes", "negative", "ja.like", "もう納豆は好きじゃない", "en.like",
           "I don't like natto anymore", "もう/今は…じゃない, 昔は好きだった, もう飽きた, もう卒業; anymore, no longer, used to"),
    Family("favourite", "drink", "positive", "ja.favourite", "好きな飲み物は紅茶です", "en.favourite",
           "My favourite drink is green tea", "飲み物/drink → drink, 食べ物/food → food, 映画/film → film, else likes"),
    Family("favourite film", "film", "positive", "ja.favourite", "好きな映画は『千と千尋の神隠し』！", "en.favourite",
           "Paddington is officially my new favourite film", "quoted titles; 「AからBに変わった」, used to be A, but now B"),
    Family("current drink", "drink", "positive", "ja.favourite", "今は緑茶ばっかり飲んでる", "en.favourite",
           "These days I only drink matcha", "ばっかり飲んでる, X派, 一番好き + a drink; only drink, a X person, I'm on X"),
    Family("quit", "habit", "negative", "ja.quit", "タバコやめました", "en.quit", "I quit smoking",
           "ends likes and habit; 辞めた / quit my job at X ends works_at"),
    Family("switch", "drink", "positive", "ja.switch", "最近コーヒーやめて紅茶にしたの", "en.switch",
           "I switched from coffee to tea", "the new value's kind (drink, food, else likes); the old one negated"),
    Family("name", "name", "positive", "ja.name", "私の名前はさくらです", "en.name", "My name is Sakura",
           "名前は/と申します, my name is / call me"),
    Family("lives in", "lives_in", "positive", "ja.lives", "東京に住んでるよ", "en.lives", "I live in Osaka",
           "住んでる/在住; 住んでた (past) is not read; もう…住んでない negates"),
    Family("moved", "lives_in", "positive", "ja.moved", "先月大阪に引っ越した", "en.moved",
           "I moved to Tokyo last month", "引っ越した, moved/relocated to (a future move is a plan)"),
    Family("from", "from", "positive", "ja.from", "北海道出身です", "en.from", "I'm originally from Hokkaido",
           "出身/生まれ, from / born in / grew up in"),
    Family("works at", "works_at", "positive", "ja.works", "トヨタに勤めてる", "en.works", "I work at Google",
           "勤めてる/で働いてる/就職した, work at/for, got a job at"),
    Family("job", "job", "positive", "ja.job", "看護師として働いてる", "en.job", "I work as a nurse",
           "として働いてる/仕事は, work as"),
    Family("named people and pets", "sibling", "positive", "ja.named", "妹の美咲がね、チーズケーキが好きなの",
           "en.named", "My sister Emma loves cheesecake",
           "relation + name (妹の美咲, 猫のモカ, my sister Emma, our dog Rex); the name becomes a subject"),
    Family("pet kept", "pet", "positive", "ja.pet_kept", "犬を飼ってる", "en.pet_kept", "I have two cats",
           "飼ってる, have/own + a pet word"),
    Family("age", "age", "positive", "ja.age", "猫のモカは3歳になった", "en.age", "Our dog Rex is 3",
           "of the user (私は25歳, I'm 25) or of a named person or pet"),
    Family("possessions", "has", "positive", "ja.has", "新しいiPhoneを買った", "en.has", "I bought a new laptop",
           "持ってる/買った/売った with a listed thing or 新しい/new"),
    Family("plans", "plan", "positive", "ja.plan", "12月5日に京都に行くんだ", "en.plan",
           "On Dec 5 I'm going to Kyoto", "a date (12月5日, 来週の土曜, next Friday) resolved against the turn's time"),
    Family("dated events", "event", "positive", "ja.event", "昨日京都に行った", "en.event",
           "I went to Kyoto yesterday", "a past verb (went, met, visited …) with a date"),
    Family("places been to", "visited", "positive", "ja.visited", "週末台湾まで旅行してきたよ", "en.visited",
           "Spent a few days in Lisbon, loved it", "a named place (固有名詞, capitalised); 行ったことない / never been: nothing"),
    Family("habits", "habit", "positive", "ja.habit", "毎朝ジョギングしてる", "en.habit",
           "Every morning I go for a run", "毎朝/毎日/いつも, every morning / on weekends"),
    Family("habits taken up", "habit", "positive", "ja.habit", "筋トレも始めたよ、毎日ちょっとずつ", "en.habit",
           "I started running every day", "始めた/続けてる, started / have been …ing"),
)


def examples_that_fail(params: KnowledgeParams | None = None) -> list[str]:
    """Examples whose family does not yield the attribute the table says (empty when the table is true)."""
    failures = []
    for family in FAMILIES:
        for pattern, example in ((family.ja_pattern, family.ja_example), (family.en_pattern, family.en_example)):
            items = extract_items([{"turn_id": "t", "speaker": "user", "text": example, "ts": 1_725_000_000}], params)
            if not any(i.pattern == pattern and i.attribute == family.attribute and i.polarity == family.polarity
                       for i in items):
                failures.append(f"{family.name}: {example!r} gives {[(i.pattern, i.attribute, i.polarity) for i in items]}")
    return failures


def coverage_table_markdown() -> str:
    """The README table of what the offline extractor recognises."""
    rows = ["| family | Japanese example | English example | gives | notes |", "|---|---|---|---|---|"]
    for f in FAMILIES:
        gives = f"`{f.attribute}`" + (" (negative)" if f.polarity == "negative" else "")
        rows.append(f"| {f.name} | 「{f.ja_example}」 | \"{f.en_example}\" | {gives} | {f.notes} |")
    return "\n".join(rows)
