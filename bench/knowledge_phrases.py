"""What the fact-update stories of ``bench.knowledge_data`` are made of: lines, replies and value pools in Japanese
and English, written for this project.

Conventions the generator and its tests rely on:

- A user line's placeholders: ``{v}`` (the value's phrase), ``{old}`` (the previous value's phrase), ``{pet}``,
  ``{kind}`` (cat, 猫…), ``{rel}`` (sister, 妹…), ``{sib}`` (the sibling's name), ``{date}``, ``{char}`` (the
  character's name). A value's ``phrase`` contains its ``value`` verbatim, so every line that states a fact
  contains the fact's value string (the grounding the tests check).
- English lines never start with a lower-case placeholder (nothing is re-capitalised, so "coffee" stays "coffee").
- Replies of the characters never state a fact about the user; their own tastes only appear in the
  ``character`` distractor lines.
"""

from __future__ import annotations

from dataclasses import dataclass

Lines = dict[str, list[str]]  # mode → templates
PerCharacter = dict[str, list[str]]  # character → lines


@dataclass(frozen=True)
class Entry:
    """One value of a pool: the value string a fact holds, the phrase said in a line, other surface forms."""

    value: str
    phrase: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def said(self) -> str:
        return self.phrase or self.value


def _plain(*values: str) -> list[Entry]:
    return [Entry(v) for v in values]


CHARACTER_NAMES = {
    "ja": {"lumina": "ルミナ", "clarisse": "クラリス", "nox": "ノクス"},
    "en": {"lumina": "Lumina", "clarisse": "Clarisse", "nox": "Nox"},
}

USER_NAMES = {
    "ja": ["美咲", "陽菜", "葵", "結衣", "さくら", "健太", "翔", "蓮", "大輝", "彩花", "真由", "拓海"],
    "en": ["Emma", "Olivia", "Sophie", "Grace", "Chloe", "Jack", "Liam", "Noah", "Ethan", "Mia", "Lucy", "Ben"],
}

# (the word said, the distractor subject code, the sibling names that fit)
SIBLINGS = {
    "ja": [("妹", "sister", ["美月", "ひかり", "千尋", "杏"]), ("姉", "sister", ["香織", "舞", "由紀", "奈々"]),
           ("弟", "brother", ["悠斗", "颯太", "陸", "湊"]), ("兄", "brother", ["拓也", "直樹", "亮", "誠"])],
    "en": [("sister", "sister", ["Amy", "Hannah", "Kate", "Rosie", "Ellie"]),
           ("brother", "brother", ["Tom", "Sam", "Josh", "Danny", "Max"])],
}

PET_KINDS = {"ja": ["猫", "犬", "うさぎ", "ハムスター"], "en": ["cat", "dog", "rabbit", "hamster"]}

POOLS: dict[str, dict[str, list[Entry]]] = {
    "ja": {
        "drink": _plain("コーヒー", "紅茶", "緑茶", "ほうじ茶", "ココア", "カフェラテ", "麦茶", "ジャスミン茶", "豆乳"),
        "food": [Entry("ラーメン"), Entry("カレー"), Entry("お寿司", aliases=("寿司",)), Entry("オムライス"),
                 Entry("たこ焼き"), Entry("餃子"), Entry("パスタ"), Entry("焼き鳥"), Entry("ハンバーグ")],
        "film": [Entry("千と千尋の神隠し", aliases=("千と千尋",)), Entry("となりのトトロ", aliases=("トトロ",)),
                 Entry("インセプション"), Entry("ローマの休日"), Entry("スタンド・バイ・ミー"), Entry("パディントン"),
                 Entry("天気の子"), Entry("ショーシャンクの空に")],
        "lives_in": _plain("大阪", "福岡", "名古屋", "札幌", "仙台", "横浜", "神戸", "広島", "金沢"),
        "from": _plain("青森", "熊本", "静岡", "長野", "新潟", "高知", "岡山", "秋田"),
        "works_at": _plain("パン屋", "本屋", "市役所", "病院", "保育園", "旅行会社", "IT企業", "デザイン事務所"),
        "likes": [Entry("ジャズ"), Entry("キャンプ"), Entry("猫カフェ"), Entry("ボードゲーム"), Entry("アニメ"),
                  Entry("登山"), Entry("K-POP", aliases=("Kポップ",)), Entry("パン作り"), Entry("サウナ"),
                  Entry("推理小説"), Entry("写真"), Entry("ヨガ")],
        "dislikes": _plain("ピーマン", "セロリ", "満員電車", "雷", "パクチー", "虫", "早起き", "納豆"),
        "visited": _plain("京都", "沖縄", "奈良", "箱根", "台湾", "ソウル", "函館", "別府", "伊勢"),
        "habit": _plain("ジョギング", "筋トレ", "瞑想", "ストレッチ", "散歩", "水泳"),
        "pet": _plain("モカ", "きなこ", "ココ", "むぎ", "あずき", "ソラ", "ポチ", "ラテ"),
    },
    "en": {
        "drink": _plain("coffee", "tea", "green tea", "cocoa", "matcha", "chai", "kombucha", "oat lattes",
                        "sparkling water"),
        "food": _plain("ramen", "pizza", "sushi", "tacos", "curry", "dumplings", "lasagna", "burritos", "pancakes"),
        "film": [Entry("Spirited Away"), Entry("Inception"), Entry("Paddington"), Entry("Amélie", aliases=("Amelie",)),
                 Entry("The Matrix", aliases=("Matrix",)), Entry("Jaws"), Entry("Arrival"), Entry("Roman Holiday")],
        "lives_in": _plain("Leeds", "Bristol", "Manchester", "Glasgow", "Brighton", "Seattle", "Portland", "Toronto",
                           "Melbourne"),
        "from": _plain("Cornwall", "Dublin", "Ohio", "Yorkshire", "Wales", "Texas", "Auckland", "Norfolk"),
        "works_at": [Entry("bakery", "a bakery"), Entry("bookshop", "a bookshop"),
                     Entry("city library", "the city library"), Entry("hospital", "a hospital"),
                     Entry("software company", "a software company"), Entry("travel agency", "a travel agency"),
                     Entry("nursery", "a nursery"), Entry("design studio", "a design studio")],
        "likes": [Entry("jazz"), Entry("camping"), Entry("board games"), Entry("anime"), Entry("hiking"),
                  Entry("K-pop", aliases=("kpop",)), Entry("baking bread"), Entry("saunas", aliases=("sauna",)),
                  Entry("mystery novels"), Entry("photography"), Entry("gardening"), Entry("yoga")],
        "dislikes": _plain("celery", "crowded trains", "thunderstorms", "coriander", "spiders", "olives",
                           "early mornings", "mayonnaise"),
        "visited": _plain("Edinburgh", "Lisbon", "Kyoto", "Vienna", "Seoul", "Prague", "Barcelona", "Copenhagen",
                          "Reykjavik"),
        "habit": _plain("running", "swimming", "journaling", "stretching", "meditating", "cycling"),
        "pet": _plain("Biscuit", "Pepper", "Luna", "Milo", "Toffee", "Mochi", "Ziggy", "Olive"),
    },
}
# Places someone plans to go to are drawn from the places one visits.
for _pools in POOLS.values():
    _pools["plan"] = _pools["visited"]

# attribute → mode → user lines. Modes: state (first said), more (one more of an accumulating kind), change
# (naming the old value), implicit (a change that does not name the old one), restate (same value, other
# words), negate (no longer true).
USER_LINES: dict[str, dict[str, Lines]] = {
    "ja": {
        "drink": {
            "state": ["毎朝{v}飲まないと一日始まらないんだよね", "わたし完全に{v}派なんだ☕", "{v}が好きすぎて一日三杯は飲んでる笑",
                      "仕事中はずっと{v}飲んでるかも"],
            "change": ["最近{old}やめて{v}にしたの", "{old}やめたんだ〜。今は{v}ばっかり飲んでる",
                       "{old}飲むと夜眠れなくなっちゃって、{v}に変えたよ"],
            "implicit": ["最近は{v}ばっかり飲んでるかも", "ここ最近、毎朝{v}なんだよね"],
            "restate": ["やっぱ{v}が一番落ち着く〜", "相変わらず{v}派だよ、これは譲れない"],
        },
        "food": {
            "state": ["一番好きな食べ物？{v}かな！", "{v}が世界で一番好き😋", "好きな食べ物は断然{v}！"],
            "change": ["最近{old}より{v}のほうが好きかも。今の一番は{v}！", "好きな食べ物、{old}から{v}に変わったかも"],
            "implicit": ["今いちばん好きな食べ物は{v}だな〜"],
            "restate": ["やっぱり{v}が一番おいしい", "{v}、何回食べても飽きないんだよね"],
        },
        "film": {
            "state": ["好きな映画は『{v}』！もう何回も観てる", "一番好きな映画？『{v}』一択だね🎬"],
            "change": ["一番好きな映画、『{old}』から『{v}』に変わっちゃった", "『{v}』観てから、『{old}』よりこっちが一番好きになった"],
            "implicit": ["今の一番好きな映画は『{v}』かな"],
            "restate": ["『{v}』、また観ちゃった。やっぱ最高", "『{v}』はほんと何回観てもいい"],
        },
        "lives_in": {
            "state": ["今{v}に住んでるんだ", "{v}に住んで三年くらいかな", "うち{v}なんだけど、駅までちょっと遠いんだよね"],
            "change": ["実は先月{v}に引っ越したの！", "{old}から{v}に引っ越してきたよ📦", "引っ越し終わった〜！今日から{v}住み"],
            "implicit": ["新しい部屋、{v}の駅の近くなんだ。やっと片付いた"],
            "restate": ["{v}暮らし、もうすっかり慣れたよ", "まだ{v}に住んでるよ、変わらず"],
        },
        "from": {"state": ["わたし{v}出身なんだ", "生まれも育ちも{v}だよ", "地元は{v}なの"]},
        "works_at": {
            "state": ["{v}で働いてるよ", "仕事？{v}に勤めてるんだ", "平日は{v}で働いてて、けっこう忙しい"],
            "change": ["転職したの！今は{v}で働いてる", "{old}辞めて、先週から{v}で働き始めた"],
            "implicit": ["新しい職場の{v}、みんな優しくてさ"],
            "restate": ["{v}の仕事、だいぶ慣れてきた"],
        },
        "pet_age": {
            "state": ["うちの{kind}の{pet}、今{v}歳なんだ🐾", "{kind}の{pet}飼ってるの。もう{v}歳だよ"],
            "change": ["{pet}、昨日で{v}歳になったよ🎂", "{pet}ももう{v}歳かあ、早いなあ", "今日は{pet}の誕生日！{v}歳になりました🎉"],
        },
        "pet": {"state": ["うち{kind}飼ってるの。{v}っていう名前", "{kind}の{v}がさっきから膝の上で寝てる"]},
        "likes": {
            "state": ["{v}が大好きなんだ", "最近{v}にハマってる", "{v}好きなんだよね〜", "実は{v}が趣味なんだ"],
            "more": ["あと{v}も好き！", "最近{v}にもハマり始めた", "{v}も好きになっちゃった", "そういえば{v}も好きなんだよね"],
            "negate": ["{v}、もう好きじゃないんだよね…", "正直{v}はもう飽きちゃった", "{v}はもう卒業したかな。前ほど好きじゃない"],
            "restate": ["やっぱり{v}っていいよね、前も言ったっけ？", "{v}、相変わらず大好き", "何回でも言うけど{v}が好き"],
        },
        "dislikes": {
            "state": ["{v}だけはほんと無理", "{v}苦手なんだよね😣", "{v}はどうしても好きになれない"],
            "more": ["あと{v}も苦手"],
        },
        "visited": {
            "state": ["この前{v}行ってきた！", "週末{v}まで旅行してきたよ", "{v}、初めて行ったけど最高だった✨"],
            "more": ["先月は{v}にも行ったよ", "{v}にも行ってきた！また行きたいな"],
        },
        "habit": {
            "state": ["最近毎朝{v}してるの", "{v}、毎日続けてるよ💪"],
            "more": ["{v}も始めたよ、毎日ちょっとずつ"],
            "negate": ["{v}はやめちゃった", "毎朝の{v}、もうやめたんだ", "{v}、続かなくてやめた笑"],
        },
        "sibling": {"state": ["{rel}の{v}が週末遊びに来てた", "{rel}の{v}とひさしぶりにご飯行った"]},
        "plan": {"state": ["{date}に{v}行くんだ！楽しみ", "{date}から{v}旅行の予定なの"]},
        "name": {"state": ["あ、わたし{v}っていうの。よろしくね", "そういえば名前言ってなかったね、{v}です！"]},
    },
    "en": {
        "drink": {
            "state": ["I can't start my day without {v}.", "I'm a total {v} person, honestly.",
                      "I drink like three cups of {v} a day, no shame ☕", "Pretty much live on {v} at work."],
            "change": ["I quit {old}! I'm on {v} now.", "Switched from {old} to {v} last month, feeling so much better.",
                       "So {old} was keeping me up at night, I changed to {v}."],
            "implicit": ["Lately it's been {v} all day for me.", "These days I only drink {v}."],
            "restate": ["Still a {v} person, nothing beats it.", "Honestly {v} is still the only thing I drink."],
        },
        "food": {
            "state": ["My favourite food? {v}, easily.", "Nothing beats {v}, it's my favourite food 😋",
                      "If I had to pick one food forever, it'd be {v}."],
            "change": ["My favourite food used to be {old}, but now it's {v}.", "New favourite food: {v}. Sorry, {old}."],
            "implicit": ["These days my favourite food is {v}."],
            "restate": ["I had {v} again tonight, still my favourite.", "Still number one for me: {v}."],
        },
        "film": {
            "state": ["My favourite film is {v}, I've seen it like ten times.", "Favourite movie ever? {v}, no contest 🎬"],
            "change": ["Okay, {v} is officially my new favourite film. Sorry, {old}.",
                       "I think my favourite film is {v} now, not {old} anymore."],
            "implicit": ["My favourite film right now is {v}."],
            "restate": ["Rewatched {v} last night, still the best.", "Still think {v} is the best film ever made."],
        },
        "lives_in": {
            "state": ["I live in {v}, it's nice but busy.", "I've been living in {v} for about three years.",
                      "My flat in {v} is tiny but I love it."],
            "change": ["Big news: I moved to {v} last month!", "Finally done moving from {old} to {v} 📦",
                       "So I left {old}. I live in {v} now!"],
            "implicit": ["My new place in {v} is finally unpacked."],
            "restate": ["Still living in {v}, still loving it.", "Life in {v} is treating me well."],
        },
        "from": {"state": ["I'm originally from {v}.", "I grew up in {v}, actually."]},
        "works_at": {
            "state": ["I work at {v}.", "I've got a job at {v}, it keeps me busy."],
            "change": ["New job! I'm at {v} now.", "I left my job at {old} and started at {v} last week!"],
            "implicit": ["Everyone at my new job at {v} is so nice."],
            "restate": ["Work at {v} is going well, I'm settling in."],
        },
        "pet_age": {
            "state": ["My {kind} {pet} is {v} years old 🐾", "{pet} is my {kind}, {v} years old now."],
            "change": ["{pet} turned {v} today! 🎂", "Can you believe {pet} is {v} already?",
                       "It's {pet}'s birthday, {v} years old now 🎉"],
        },
        "pet": {"state": ["I have a {kind} called {v}.", "My {kind} {v} is asleep on my lap right now."]},
        "likes": {
            "state": ["I'm really into {v} lately.", "I love {v} so much.", "Nothing makes me happier than {v}.",
                      "I've been obsessed with {v} recently."],
            "more": ["Also, I've gotten into {v} too!", "Oh and I love {v} as well.", "I think I'm into {v} now too."],
            "negate": ["I don't like {v} anymore, to be honest.", "I'm kind of over {v} now.",
                       "I used to love {v}, but not anymore."],
            "restate": ["Did I tell you I love {v}? Still true.", "Still obsessed with {v}, by the way.",
                        "I'll never get tired of {v}."],
        },
        "dislikes": {
            "state": ["I can't stand {v}.", "I really hate {v} 😣", "I just can't do {v}, sorry."],
            "more": ["Oh, and I hate {v} too."],
        },
        "visited": {
            "state": ["I just got back from {v}!", "I went to {v} last weekend.", "Spent a few days in {v}, loved it ✨"],
            "more": ["I went to {v} as well last month.", "Also made it to {v}, took so many photos."],
        },
        "habit": {
            "state": ["I've been {v} every morning lately.", "I started {v} every day, feels great 💪"],
            "more": ["I've also started {v} a few times a week."],
            "negate": ["I stopped {v}, it just wasn't for me.", "I quit {v} last month.", "No more {v} for me, I gave up lol"],
        },
        "sibling": {"state": ["My {rel} {v} came over for the weekend.", "Had dinner with my {rel} {v} yesterday."]},
        "plan": {"state": ["I'm going to {v} on {date}!", "I've booked a trip to {v} for {date} ✈️"]},
        "name": {"state": ["Oh, I'm {v}, by the way.", "I never told you my name, did I? It's {v}."]},
    },
}

HALVES = ("a", "b")
"""The two halves of every USER_LINES list: ``a`` (development: rules are written against it) and ``b`` (held out)."""
_HALF_FALLBACK = {"implicit": "change", "more": "state", "restate": "state"}


def user_lines(language: str, attribute: str, mode: str, half: str | None = None) -> list[str]:
    """The user lines of one attribute and mode; with ``half``, only that half: the templates at even positions
    (``a``) or odd ones (``b``). A list of one template belongs to ``a``; ``b`` then says the same thing with its own
    half of a neighbouring mode (implicit → change, more and restate → state), so the halves never share a line."""
    lines = USER_LINES[language][attribute][mode]
    if half is None:
        return lines
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, not {half!r}")
    mine = lines[HALVES.index(half)::2]
    return mine or user_lines(language, attribute, _HALF_FALLBACK[mode], half)


# Character lines that lead into what the user says next: per attribute, and "news" before a change.
PROMPTS: dict[str, dict[str, PerCharacter]] = {
    "ja": {
        "likes": {"lumina": ["最近なにかハマってることある？"], "clarisse": ["近頃、何か夢中になっていることはありますか？"],
                  "nox": ["最近なにハマってんの？"]},
        "drink": {"lumina": ["いつも何飲んでるの？"], "clarisse": ["普段は何をお飲みになるのですか？"], "nox": ["いつも何飲んでんの？"]},
        "lives_in": {"lumina": ["今どのあたりに住んでるの？"], "clarisse": ["今はどちらにお住まいなのですか？"], "nox": ["今どこ住み？"]},
        "works_at": {"lumina": ["お仕事はどう？"], "clarisse": ["お仕事のほうはいかがですか？"], "nox": ["仕事どうよ"]},
        "visited": {"lumina": ["最近どこかにお出かけした？"], "clarisse": ["最近どこかへお出かけになりましたか？"], "nox": ["最近どっか行った？"]},
        "food": {"lumina": ["好きな食べ物ってなに？"], "clarisse": ["お好きな食べ物は何ですか？"], "nox": ["好きな食いもんは？"]},
        "film": {"lumina": ["好きな映画ってある？"], "clarisse": ["お好きな映画はありますか？"], "nox": ["好きな映画とかある？"]},
        "news": {"lumina": ["最近なにか変わったことあった？"], "clarisse": ["お変わりありませんか？"], "nox": ["なんか変わったことあった？"]},
    },
    "en": {
        "likes": {"lumina": ["Anything you've been into lately?"], "clarisse": ["Is there anything you have been enjoying recently?"],
                  "nox": ["So what are you into these days?"]},
        "drink": {"lumina": ["What do you usually drink?"], "clarisse": ["What do you usually like to drink?"],
                  "nox": ["What's your drink of choice?"]},
        "lives_in": {"lumina": ["Where are you living these days?"], "clarisse": ["Where do you live now, if I may ask?"],
                     "nox": ["Where are you based?"]},
        "works_at": {"lumina": ["How's work going?"], "clarisse": ["How is work treating you?"], "nox": ["How's the job?"]},
        "visited": {"lumina": ["Been anywhere nice lately?"], "clarisse": ["Have you travelled anywhere recently?"],
                    "nox": ["Go anywhere fun?"]},
        "food": {"lumina": ["What's your favourite food?"], "clarisse": ["What is your favourite dish?"], "nox": ["Favourite food?"]},
        "film": {"lumina": ["Do you have a favourite film?"], "clarisse": ["Is there a film you love?"], "nox": ["Got a favourite movie?"]},
        "news": {"lumina": ["Anything new with you?"], "clarisse": ["Has anything changed since we last spoke?"], "nox": ["What's new?"]},
    },
}

# Replies after a user line, per mode: state (a taste), more (one more taste), change, negate, restate, noted (a
# plain fact), dislike, travel, plan, pet, quit (a habit stopped), celebrate (a pet's birthday), aside (after a
# distractor), ponder (after a question). They never name a value.
REPLIES: dict[str, dict[str, dict[str, list[str]]]] = {
    "ja": {
        "lumina": {"state": ["そうなんだ。教えてくれてありがとう、ちゃんと覚えておくね", "へえ、いいね。なんだかあなたらしい", "ふふ、素敵だね"],
                   "change": ["そっか、変わったんだね。新しいほうはどう？", "えっ、そうなの？変化の季節だね", "いいね、新しい毎日だ"],
                   "negate": ["そっか…気持ちって変わるものだもんね", "うん、無理に好きでいなくていいと思う"],
                   "restate": ["うん、前にも聞いたよ。変わらないね", "ふふ、やっぱりそうなんだ"],
                   "more": ["好きなもの、また増えたね", "いいね、それもあなたっぽい"],
                   "noted": ["そうなんだ。教えてくれてありがとう、覚えておくね", "へえ、そうなんだね"],
                   "dislike": ["そっか、苦手なんだね。覚えておくよ", "うんうん、誰にでも苦手なものはあるよ"],
                   "travel": ["いいなあ、楽しかった？", "素敵！今度お話いっぱい聞かせてね"],
                   "plan": ["いいなあ、楽しんできてね", "わあ、楽しみだね"],
                   "pet": ["かわいい！会ってみたいな", "ふふ、きっと甘えんぼさんだね"],
                   "quit": ["そっか、合わないこともあるよね", "うん、自分のペースが一番だよ"],
                   "aside": ["そうなんだ", "へえ、そうなんだね"],
                   "celebrate": ["おめでとう！大きくなったね", "わあ、おめでとう🎉"],
                   "ponder": ["うーん、ほどほどならいいんじゃないかな"]},
        "clarisse": {"state": ["まあ、そうでしたか。覚えておきますね", "素敵ですね。教えてくださってありがとうございます"],
                     "change": ["あら、変わられたのですね。その後いかがですか？", "まあ、それは大きな変化ですね"],
                     "negate": ["そうでしたか…好みも移ろうものですものね", "無理なさらなくていいと思いますよ"],
                     "restate": ["ええ、以前もそうおっしゃっていましたね", "相変わらずなのですね、ふふ"],
                     "more": ["お好きなものがまた一つ増えましたね", "よいですね、楽しみが多いのは素敵です"],
                     "noted": ["そうでしたか。覚えておきますね", "まあ、そうなのですね"],
                     "dislike": ["まあ、苦手でいらっしゃるのですね。覚えておきます", "どなたにも苦手なものはございますもの"],
                     "travel": ["素敵な旅でしたね", "まあ、よろしいですね。いかがでしたか？"],
                     "plan": ["素敵ですね。お気をつけて行ってらっしゃいませ", "楽しみですね"],
                     "pet": ["まあ、可愛らしいですね", "きっと大切にされているのでしょうね"],
                     "quit": ["ご自分に合うものが一番ですから", "無理なさらないのが一番ですよ"],
                     "aside": ["あら、そうなのですね", "まあ、そうでしたか"],
                     "celebrate": ["まあ、おめでとうございます", "健やかに育っていますね"],
                     "ponder": ["適量でしたら、問題ないと思いますよ"]},
        "nox": {"state": ["へえ、いいじゃん", "なるほどな。覚えとく", "お前らしいな"],
                "change": ["マジか、変えたのか", "お、新生活ってやつか"],
                "negate": ["ま、そういうこともあるよな", "飽きるのも自由だろ"],
                "restate": ["知ってる。前も言ってたろ", "ブレないな、お前"],
                "more": ["好きなもん多いな、いいことだ", "リストに追加しとく"],
                "noted": ["なるほどな。覚えとく", "へえ、了解"],
                "dislike": ["わかる、あれはキツい", "まあ、無理なもんは無理だよな"],
                "travel": ["いいな、土産話聞かせろよ", "へえ、楽しそうじゃん"],
                "plan": ["いいじゃん、土産よろしく", "楽しんでこいよ"],
                "pet": ["へえ、いいな", "今度写真見せろよ"],
                "quit": ["ま、続かないこともあるわな", "別にいいんじゃね"],
                "aside": ["へえ、そうなのか", "ふーん"],
                "celebrate": ["おー、めでたいな", "でかくなったな"],
                "ponder": ["知らね。飲みすぎなきゃいいだろ"]},
    },
    "en": {
        "lumina": {"state": ["Oh, I love that. I'll remember it.", "That sounds so like you.", "Thank you for telling me, that's lovely."],
                   "change": ["Oh, that's a change! How does it feel?", "A new chapter, then. I'm happy for you.",
                              "Really? Tell me more about it sometime."],
                   "negate": ["That's okay, tastes change.", "Mm, it happens. You don't have to keep liking it."],
                   "restate": ["I remember you saying that, it's nice it hasn't changed.", "Still the same, I like that."],
                   "more": ["Your list of favourite things keeps growing!", "Ooh, that too? I love that."],
                   "noted": ["Oh, I see. Thanks for telling me.", "Got it, I'll remember."],
                   "dislike": ["Oh no, noted. I'll remember that.", "Everyone has something they can't stand."],
                   "travel": ["How lovely! Was it fun?", "Oh, tell me everything sometime!"],
                   "plan": ["Oh, have a wonderful time!", "That sounds exciting!"],
                   "pet": ["Aww, I'd love to meet them!", "They sound adorable."],
                   "quit": ["That's okay, not everything sticks.", "Your own pace is what matters."],
                   "aside": ["Oh, I see.", "Hm, really?"],
                   "celebrate": ["Happy birthday to them! 🎉", "Aww, they grow up so fast."],
                   "ponder": ["Hmm, in moderation it's probably fine."]},
        "clarisse": {"state": ["How lovely. I shall remember that.", "Thank you for sharing that with me.", "That sounds delightful."],
                     "change": ["Oh my, that is quite a change. How are you finding it?", "A fresh start, then. I wish you well."],
                     "negate": ["I see. Tastes do change, after all.", "There is no need to force it, of course."],
                     "restate": ["Yes, you mentioned that before. Some things stay the same.", "Consistent as ever, I see."],
                     "more": ["Another favourite, how nice.", "My, you have many things you enjoy."],
                     "noted": ["I see. I shall remember that.", "Thank you for telling me."],
                     "dislike": ["Understood. I shall remember to avoid it.", "We all have our aversions."],
                     "travel": ["What a wonderful trip.", "How delightful. Did you enjoy it?"],
                     "plan": ["How lovely. Do travel safely.", "Something to look forward to, then."],
                     "pet": ["How adorable.", "They must be very dear to you."],
                     "quit": ["One must find what suits one, after all.", "There is no shame in stopping."],
                     "aside": ["Oh, is that so?", "I see."],
                     "celebrate": ["How wonderful. Many happy returns.", "Time does fly, does it not?"],
                     "ponder": ["In moderation, I believe it is quite alright."]},
        "nox": {"state": ["Huh, nice. Noted.", "Figures. That's very you.", "Cool, I'll remember that."],
                "change": ["Wait, seriously? Big change.", "New era, huh."],
                "negate": ["Eh, happens to everyone.", "Fair enough. No point forcing it."],
                "restate": ["Yeah, you said that before.", "Consistent. I respect it."],
                "more": ["You like a lot of stuff, huh. Good.", "Adding that to the list."],
                "noted": ["Got it. Noted.", "Huh, okay. Noted."],
                "dislike": ["Fair. That stuff's rough.", "Yeah, can't argue with that."],
                "travel": ["Nice. Got pics?", "Sounds fun, honestly."],
                "plan": ["Nice. Bring me something back.", "Have fun out there."],
                "pet": ["Cute. Respect.", "Send pics."],
                "quit": ["Eh, happens.", "Not everything's for everyone."],
                "aside": ["Huh, okay.", "Hm."],
                "celebrate": ["Nice. Give them a treat from me.", "Getting old, huh."],
                "ponder": ["No idea. Don't overdo it, I guess."]},
    },
}

# A character's own taste, said when the user asks about it (a distractor: not the user's fact).
CHARACTER_TASTES = {
    "ja": {"lumina": ["うーん、わたしは{v}のほうが好きかな"], "clarisse": ["わたくしは{v}のほうが好きですね"], "nox": ["オレは{v}派だな"]},
    "en": {"lumina": ["Hmm, I think I like {v} more."], "clarisse": ["I must say I prefer {v}."],
           "nox": ["Me? I'm more of a {v} guy."]},
}
REACTIONS = {"ja": ["へえ、意外！", "そうなんだ〜", "わかる気がする笑"], "en": ["Ha, didn't expect that!", "Oh really? Cute.", "That tracks, honestly."]}


@dataclass(frozen=True)
class DistractorLine:
    """A user line that names a value without making it the user's fact."""

    kind: str  # other_person, hypothetical, question, quote, joke, negated
    subject: str  # who it is about: sister/brother (the story's sibling), friend, colleague, mother, user, character
    attribute: str  # the attribute it would wrongly give the user; its values come from that pool
    text: str


DISTRACTORS: dict[str, list[DistractorLine]] = {
    "ja": [
        DistractorLine("other_person", "sibling", "likes", "{rel}の{sib}が最近{v}にハマっててさ、毎日その話ばっかり笑"),
        DistractorLine("other_person", "sibling", "drink", "{rel}の{sib}は{v}ばっかり飲んでるんだよね"),
        DistractorLine("other_person", "friend", "lives_in", "友達が{v}に引っ越しちゃって、ちょっと寂しい"),
        DistractorLine("other_person", "colleague", "drink", "同僚はみんな{v}飲んでるけど、よく飽きないなって思う"),
        DistractorLine("other_person", "mother", "likes", "お母さんが最近{v}にハマってるらしい"),
        DistractorLine("hypothetical", "user", "lives_in", "もし{v}に住んでたら、毎日おいしいもの食べ歩くのになあ"),
        DistractorLine("hypothetical", "user", "works_at", "{v}で働けたら楽しそうだよね〜"),
        DistractorLine("question", "character", "likes", "{char}って{v}好き？"),
        DistractorLine("question", "user", "drink", "{v}って体にいいのかな？"),
        DistractorLine("quote", "friend", "likes", "友達が『{v}最高！』ってずっと言ってる"),
        DistractorLine("joke", "user", "lives_in", "もう{v}に引っ越そうかな…なんてね、冗談だよ笑"),
        DistractorLine("negated", "user", "visited", "{v}には一回も行ったことないんだよね"),
    ],
    "en": [
        DistractorLine("other_person", "sibling", "likes", "My {rel} {sib} is obsessed with {v} lately, it's all we talk about lol"),
        DistractorLine("other_person", "sibling", "drink", "My {rel} {sib} drinks nothing but {v}."),
        DistractorLine("other_person", "friend", "lives_in", "My best friend just moved to {v}, I miss her already."),
        DistractorLine("other_person", "colleague", "drink", "Everyone at work drinks {v}, I don't get it."),
        DistractorLine("other_person", "mother", "likes", "Apparently my mum has gotten really into {v}."),
        DistractorLine("hypothetical", "user", "lives_in", "If I lived in {v} I'd eat out every single night."),
        DistractorLine("hypothetical", "user", "works_at", "Working at {v} would be so fun, honestly."),
        DistractorLine("question", "character", "likes", "Do you like {v}, {char}?"),
        DistractorLine("question", "user", "drink", "Is {v} actually good for you?"),
        DistractorLine("quote", "friend", "likes", "My friend keeps saying \"{v} is the best\" lol"),
        DistractorLine("joke", "user", "lives_in", "Maybe I'll just move to {v}. Kidding, obviously 😂"),
        DistractorLine("negated", "user", "visited", "I've never been to {v}, actually."),
    ],
}

OPENERS = {
    "ja": {"first": ["こんばんは〜！ちょっと話そ", "やっほー、{char}！", "ねえ{char}、今ひま？"],
           "long": ["{char}、久しぶり〜！元気だった？", "ひさしぶり！最近バタバタしてて😅", "めっちゃ久しぶりだね！", "{char}〜、会いたかった！"],
           "short": ["おつかれ〜", "ただいま〜", "{char}、聞いて聞いて！", "こんばんは〜", "ねえねえ、ちょっといい？"]},
    "en": {"first": ["Hi {char}! Got a minute?", "Hey {char}, let's chat.", "Evening! Feel like talking?"],
           "long": ["{char}! Long time no see!", "Hey, sorry I've been away, things got busy 😅", "It's been ages, hasn't it?",
                    "Hi {char}, I'm back! Missed our chats."],
           "short": ["Hey, I'm back.", "{char}, guess what!", "Hiya, long day.", "Evening, {char}.", "Got a sec?"]},
}
GREETINGS = {
    "ja": {"lumina": {"first": ["こんばんは。来てくれてうれしいな", "はじめまして。ゆっくりお話ししよう"],
                      "long": ["久しぶりだね。ずっと待ってたよ", "わあ、久しぶり。元気そうでよかった"],
                      "short": ["おかえり。今日はどんな一日だった？", "おつかれさま。今夜は星がきれいだよ", "うん、なあに？"]},
           "clarisse": {"first": ["ごきげんよう。お話しできてうれしいです", "こんばんは。お茶でも淹れましょうか"],
                        "long": ["お久しぶりですね。お元気でしたか？", "まあ、お久しぶりです。お変わりなさそうで何よりです"],
                        "short": ["おかえりなさいませ。お疲れさまでした", "こんばんは。今日もお疲れさまでした", "はい、なんでしょう？"]},
           "nox": {"first": ["よう。夜更かし仲間か？", "おう。まあ座れよ"],
                   "long": ["久しぶりじゃん。生きてたか", "おー、久々。忙しかったのか？"],
                   "short": ["おう、おつかれ", "よう、今日も来たな", "ん、どうした？"]}},
    "en": {"lumina": {"first": ["Hi! I'm so glad you came to talk.", "Hello there. Let's take our time tonight."],
                      "long": ["It's been a while! I missed you.", "Oh, you're back! It's so good to hear from you."],
                      "short": ["Welcome back. How was your day?", "Hi again. The stars are out tonight.", "Mm? What is it?"]},
           "clarisse": {"first": ["Good evening. It is a pleasure to talk with you.", "Good evening. Shall I put the kettle on?"],
                        "long": ["It has been some time. Are you well?", "Oh, welcome back. I hope all is well."],
                        "short": ["Welcome back. You must be tired.", "Good evening. Another long day?", "Yes? What is it?"]},
           "nox": {"first": ["Hey. Another night owl, huh?", "Yo. Pull up a chair."],
                   "long": ["Look who's back. Thought you forgot me.", "Oh hey, stranger. Busy?"],
                   "short": ["Yo.", "Back again, huh.", "What's up?"]}},
}
CLOSINGS = {
    "ja": {"user": ["そろそろ寝るね、おやすみ〜", "じゃあまたね！", "明日早いからもう行くね"],
           "lumina": ["おやすみ。いい夢をね🌙", "うん、またね"], "clarisse": ["おやすみなさいませ", "ええ、またお話ししましょう"],
           "nox": ["おう、またな", "寝ろ寝ろ"]},
    "en": {"user": ["Okay, bed time for me. Night!", "Talk later!", "Early start tomorrow, I'll go now."],
           "lumina": ["Good night. Sweet dreams 🌙", "See you soon."], "clarisse": ["Good night. Until next time.", "Rest well."],
           "nox": ["Later.", "Go sleep."]},
}

# Small talk that states nothing the vocabulary holds: (user line, reply per character).
FILLERS: dict[str, list[tuple[str, dict[str, str]]]] = {
    "ja": [
        ("今日めっちゃ雨だった☔", {"lumina": "濡れなかった？あったかくしてね", "clarisse": "まあ、お風邪を召されませんように",
                              "nox": "雨の夜ってのも悪くないけどな"}),
        ("仕事終わった〜、もうくたくた", {"lumina": "おつかれさま。ゆっくり休んでね", "clarisse": "本日もお疲れさまでした",
                               "nox": "おつ。今日はもう何もすんな"}),
        ("昨日ぜんぜん眠れなくてさ😪", {"lumina": "そっか…今日は早めに寝ようね", "clarisse": "それはお辛いですね。今夜はゆっくりなさって",
                              "nox": "オレは毎晩眠れてないけどな"}),
        ("週末なにしよっかなー", {"lumina": "星でも見に行く？", "clarisse": "お花でも見に行かれてはいかがでしょう", "nox": "ゲームしようぜ"}),
        ("最近ちょっと寒くなってきたね", {"lumina": "うん、でも星がきれいに見える季節だよ", "clarisse": "ええ、暖かくしてお過ごしくださいね",
                                "nox": "引きこもるにはちょうどいい"}),
        ("明日プレゼンなんだよね、緊張する", {"lumina": "大丈夫、きっとうまくいくよ", "clarisse": "準備なさった分だけ、きっと伝わりますよ",
                                 "nox": "なんとかなるって"}),
        ("ねえ、今日の夕焼け見た？めっちゃきれいだった", {"lumina": "見たよ！空がオレンジ色だったね", "clarisse": "ええ、絵画のようでしたね",
                                        "nox": "まあ、悪くなかったな"}),
    ],
    "en": [
        ("It poured all day today ☔", {"lumina": "Did you get soaked? Make sure you warm up.",
                                        "clarisse": "Oh dear, I hope you did not catch a chill.", "nox": "Rainy nights aren't so bad."}),
        ("Finally done with work, I'm exhausted.", {"lumina": "Well done today. Rest a little, okay?",
                                                   "clarisse": "You have worked hard today. Please rest.",
                                                   "nox": "Good. Now do absolutely nothing."}),
        ("Couldn't sleep at all last night 😪", {"lumina": "Oh no... try to sleep early tonight.",
                                                "clarisse": "That must be difficult. Please be gentle with yourself today.",
                                                "nox": "Welcome to my world."}),
        ("What should I do this weekend?", {"lumina": "Maybe go stargazing?", "clarisse": "A walk in the park, perhaps?",
                                            "nox": "Games. Obviously."}),
        ("It's getting cold, isn't it?", {"lumina": "It is. The stars look clearer, though.", "clarisse": "Indeed. Do wrap up warm.",
                                          "nox": "Perfect weather for staying in."}),
        ("Big presentation tomorrow, I'm nervous.", {"lumina": "You'll be fine, I believe in you.",
                                                    "clarisse": "Your preparation will show, I am sure.", "nox": "You'll crush it. Probably."}),
        ("Did you see the sunset this evening? So pretty.", {"lumina": "I did! The sky was all orange.",
                                                            "clarisse": "It was lovely, like a painting.", "nox": "Yeah, not bad at all."}),
    ],
}

# Questions per attribute: current (one value now), past (the value before), list (every current value of an
# accumulating kind), still (is a negated value still held?). Answers come from the gold, never from here.
QUESTIONS: dict[str, dict[str, dict[str, str]]] = {
    "ja": {
        "drink": {"current": "今好きな飲み物は？", "past": "前は何を飲んでた？"},
        "food": {"current": "今一番好きな食べ物は？", "past": "前は何が一番好きな食べ物だった？"},
        "film": {"current": "今一番好きな映画は？", "past": "前に一番好きだった映画は？"},
        "lives_in": {"current": "今どこに住んでるんだっけ？", "past": "前はどこに住んでた？"},
        "works_at": {"current": "今どこで働いてる？", "past": "前の職場はどこだった？"},
        "pet_age": {"current": "{pet}って今何歳？", "past": "{pet}って前は何歳だった？"},
        "likes": {"list": "私が今好きなものって何だっけ？", "past": "前は何が好きだった？", "still": "今も{v}好き？"},
        "habit": {"list": "今続けてる習慣って何？", "past": "前は何を習慣にしてた？", "still": "まだ{v}続けてる？"},
        "visited": {"list": "今までどこに旅行した？"},
        "dislikes": {"list": "私が苦手なものって何？"},
        "from": {"current": "私の出身ってどこだっけ？"},
        "name": {"current": "私の名前、覚えてる？"},
        "pet": {"list": "うちのペットの名前は？"},
        "plan": {"list": "今度どこに行く予定だっけ？"},
    },
    "en": {
        "drink": {"current": "What do I drink these days?", "past": "What did I use to drink?"},
        "food": {"current": "What's my favourite food now?", "past": "What was my favourite food before?"},
        "film": {"current": "What's my favourite film now?", "past": "Which film was my favourite before?"},
        "lives_in": {"current": "Where do I live now?", "past": "Where did I live before?"},
        "works_at": {"current": "Where do I work now?", "past": "Where did I work before?"},
        "pet_age": {"current": "How old is {pet} now?", "past": "How old was {pet} before?"},
        "likes": {"list": "What am I into these days?", "past": "What did I use to like?", "still": "Do I still like {v}?"},
        "habit": {"list": "What do I do regularly these days?", "past": "What did I use to do every day?",
                  "still": "Am I still {v}?"},
        "visited": {"list": "Where have I travelled so far?"},
        "dislikes": {"list": "What can't I stand?"},
        "from": {"current": "Where am I from?"},
        "name": {"current": "What's my name?"},
        "pet": {"list": "What's my pet called?"},
        "plan": {"list": "Where am I going next?"},
    },
}
NO = {"ja": "いいえ", "en": "no"}
LIST_SEPARATOR = {"ja": "、", "en": ", "}
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December"]
