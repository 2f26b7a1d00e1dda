"""Default word lists of the offline knowledge extractor; ``KnowledgeParams`` holds them, so a deployment can extend
them (``LUMINA_KNOWLEDGE__RELATIONS`` and the like).

Kept short and common on purpose: the extractor prefers missing a fact to inventing one.
"""

from __future__ import annotations

# Relation nouns (Japanese and English) → the attribute of the person or pet they introduce.
RELATIONS: dict[str, str] = {
    **dict.fromkeys("妹 姉 兄 弟 お姉ちゃん お兄ちゃん 姉貴 兄貴 お姉さん お兄さん".split(), "sibling"),
    **dict.fromkeys("sister brother sis bro".split(), "sibling"),
    **dict.fromkeys("母 父 お母さん お父さん 母親 父親 ママ パパ おかん おとん 祖母 祖父 おばあちゃん おじいちゃん".split(), "parent"),
    **dict.fromkeys("mom mum mother dad father grandma grandpa grandmother grandfather".split(), "parent"),
    **dict.fromkeys("息子 娘".split(), "child"),
    **dict.fromkeys("son daughter kid".split(), "child"),
    **dict.fromkeys("夫 妻 旦那 嫁 奥さん 彼氏 彼女 婚約者 パートナー".split(), "partner"),
    **dict.fromkeys("husband wife boyfriend girlfriend fiance fiancee partner".split(), "partner"),
    **dict.fromkeys("友達 友人 親友 幼馴染 同僚 先輩 後輩 上司".split(), "friend"),
    **dict.fromkeys("friend bestie roommate colleague coworker boss".split(), "friend"),
    **dict.fromkeys("猫 犬 ネコ イヌ ねこ いぬ 子猫 子犬 うさぎ ウサギ ハムスター インコ 金魚 亀 カメ 鳥 フェレット".split(), "pet"),
    **dict.fromkeys("cat dog kitten puppy rabbit bunny hamster parrot budgie goldfish turtle ferret".split(), "pet"),
}

# Value words → their kind. A switch to a drink or food sets the user's current one (drink / food).
CATEGORIES: dict[str, str] = {
    **dict.fromkeys(
        "コーヒー 珈琲 紅茶 緑茶 お茶 茶 抹茶 ほうじ茶 麦茶 烏龍茶 ウーロン茶 ハーブティー ミルクティー カフェラテ ラテ "
        "ココア ジュース 牛乳 ミルク 豆乳 水 炭酸水 コーラ ビール ワイン 日本酒 焼酎 ハイボール ウイスキー お酒 酒 "
        "エナジードリンク スムージー ジャスミン茶 ルイボスティー 甘酒 レモネード".split(), "drink"),
    **dict.fromkeys(
        "coffee tea espresso latte cappuccino cocoa juice milk water soda cola beer wine sake whisky whiskey "
        "smoothie matcha chai kombucha lemonade".split(), "drink"),
    **dict.fromkeys(("green tea", "oat latte", "oat milk", "sparkling water", "hot chocolate", "iced coffee",
                     "black tea", "herbal tea", "bubble tea"), "drink"),
    **dict.fromkeys(
        "ラーメン 寿司 お寿司 カレー うどん そば 蕎麦 パスタ ピザ ハンバーガー 焼肉 天ぷら 刺身 納豆 豆腐 チョコ "
        "チョコレート ケーキ チーズケーキ アイス パン ご飯 米 肉 魚 野菜 サラダ 餃子 たこ焼き お好み焼き オムライス "
        "焼き鳥 ハンバーグ 唐揚げ とんかつ 牛丼 親子丼 天丼 グラタン ドリア".split(), "food"),
    **dict.fromkeys(
        "ramen sushi curry udon soba pasta pizza burger burgers hamburger steak chocolate cake cheesecake "
        "icecream bread rice meat fish salad dumplings dumpling tacos taco lasagna burrito burritos pancake "
        "pancakes waffles noodles".split(), "food"),
}

# 「好きな飲み物は…」 / "my favourite drink is …": the noun names the single-valued attribute (else: likes).
FAVOURITE_NOUNS: dict[str, str] = {
    "飲み物": "drink", "ドリンク": "drink", "食べ物": "food", "料理": "food", "映画": "film",
    "drink": "drink", "beverage": "drink", "food": "food", "dish": "food", "meal": "food", "film": "film",
    "movie": "film",
}

# A leading 「…は」 / "on weekends" that limits where a fact holds: two such facts can both be true.
CONTEXT_WORDS: tuple[str, ...] = tuple(
    "平日 週末 土日 休日 休み 朝 夜 昼 夏 冬 春 秋 仕事 職場 会社 家 実家 学校 旅行 "
    "weekdays weekends weekend mornings evenings nights summer winter spring autumn fall work home school".split()
)

# 「毎朝…」 / "every morning": a habit's frequency.
HABIT_MARKERS_JA: tuple[str, ...] = tuple(
    "毎朝 毎晩 毎日 毎週 毎月 毎年 毎夜 毎週末 毎回 いつも 朝はいつも 夜はいつも 週末はいつも".split()
)

# Possessions read from 「…を持ってる/買った」 and "I have/own/bought a …" only for these (and "new …"):
# "I have a cold", "I have a meeting" are not possessions.
POSSESSIONS: tuple[str, ...] = tuple(
    "車 バイク 自転車 家 マンション 一軒家 ピアノ ギター カメラ パソコン PC ノートパソコン タブレット スマホ "
    "iPhone iPad Switch PS5 テレビ 別荘 "
    "car bike bicycle motorcycle scooter house apartment flat piano guitar violin camera laptop computer tablet "
    "phone iphone ipad switch ps5 tv boat".split()
)

# Katakana and English words that follow 「猫の…」 / "my dog …" without being a name.
NOT_NAMES: tuple[str, ...] = tuple(
    "ベッド トイレ ケーキ ゲーム ケージ リード フード エサ ご飯 おもちゃ オモチャ ボール シャンプー ブラシ "
    "カット トリミング ワクチン ペット グッズ プレゼント パーティー ケア ダイエット "
    "The A An And But Is Was Has Had Who Which That Likes Loves Hates".split()
)

# Words that make a routine or plan rest on where the user lives or works (F6, nodes.knowledge.dependents):
# moving or changing jobs may end it. English words match whole words (a plural or -ing too), Japanese ones
# as substrings.
_WORK = ("work", "office", "colleague", "shift", "meeting", "boss", "commute",
         "出勤", "職場", "会社", "同僚", "夜勤", "シフト", "会議", "上司", "通勤")
DEPENDENCY_MARKERS: dict[str, tuple[str, ...]] = {
    "lives_in": ("station", "near", "next door", "nearby", "neighbourhood", "neighborhood", "local", "commute",
                 "train", "bus", "ferry", "駅", "電車", "バス", "通勤", "近所", "地元", "隣", "最寄り", "沿い"),
    "works_at": _WORK,
    "job": _WORK,
}
