"""Writes mini_locomo.json: two small invented conversations in LoCoMo's format (one English, one Japanese),
written for this project's tests (LoCoMo itself is CC BY-NC and is not shipped). Run to regenerate:

    python tests/data/make_mini_locomo.py
"""

from __future__ import annotations

import json
from pathlib import Path

# Each session: (date_time, [(speaker, text, optional blip caption), ...]); speaker "a" or "b".
EN_A, EN_B = "Alice", "Ben"
EN = [
    ("10:05 am on 6 January, 2024", [
        ("a", "Hey Ben! Happy new year! How were the holidays?"),
        ("b", "Happy new year Alice! Quiet, mostly. I slept a lot and read two novels."),
        ("a", "Big news from me: I adopted a dog last weekend!"),
        ("b", "No way! What kind of dog?"),
        ("a", "A three year old beagle from the shelter on Maple Street. Her name is Pepper.", "a photo of a beagle sitting on a red blanket"),
        ("b", "Pepper is a great name. Does she get along with your cat?"),
        ("a", "Mostly. Miso the cat hides on the bookshelf and hisses at her."),
        ("b", "Give them a few weeks, they usually sort it out."),
        ("a", "What about you, any resolutions this year?"),
        ("b", "I signed up for a pottery class at the community center. Tuesday evenings."),
        ("a", "Pottery! That sounds relaxing. Have you made anything yet?"),
        ("b", "Just a lopsided bowl. The teacher, Mrs. Okafor, says everyone's first bowl is lopsided."),
        ("a", "Keep it, it will be a nice memory when you are a master potter."),
        ("b", "Ha, maybe. I want to make a teapot by summer."),
        ("a", "I also want to run more this year. Maybe a half marathon."),
        ("b", "You should! The spring half marathon in Riverside is in April."),
        ("a", "I'll look it up. Anyway, I need to walk Pepper now. Talk soon!"),
        ("b", "Bye Alice, say hi to Pepper for me."),
    ]),
    ("7:40 pm on 3 February, 2024", [
        ("b", "Alice! How is Pepper doing?"),
        ("a", "She is wonderful, but she chewed my favourite running shoes yesterday."),
        ("b", "Oh no. Time for new shoes then."),
        ("a", "Yes, I bought blue trail shoes. Also my sister Clara got engaged!"),
        ("b", "Congratulations to her! Who is the lucky person?"),
        ("a", "His name is Diego, they met at a salsa class in Lisbon."),
        ("b", "A salsa class, how romantic. When is the wedding?"),
        ("a", "In June, in Lisbon. I am the maid of honour, so I have a speech to write."),
        ("b", "You will do great. Just tell the story of how they met."),
        ("a", "Good idea. How is pottery going?"),
        ("b", "Much better. I made a set of four mugs with a green glaze.", "a photo of four green ceramic mugs on a shelf"),
        ("a", "Those look professional! Will you sell them?"),
        ("b", "No, I gave two to my parents. They use them every morning."),
        ("a", "That's sweet. Are you still planning the trip to Japan?"),
        ("b", "Yes! I booked flights to Kyoto for the end of March to see the cherry blossoms."),
        ("a", "Jealous. Visit some pottery studios there, Kyoto is famous for ceramics."),
        ("b", "That's the plan. I want to see Kiyomizu ware."),
        ("a", "Send me photos. I have to go, Pepper wants dinner."),
    ]),
    ("6:15 pm on 14 April, 2024", [
        ("a", "Ben, welcome back! How was Kyoto?"),
        ("b", "Amazing. The cherry blossoms along the Philosopher's Path were at their peak.", "a photo of a stone path under pink cherry trees"),
        ("a", "Beautiful! Did you find pottery studios?"),
        ("b", "I took a one day workshop in Gojozaka and threw a small tea bowl on the wheel."),
        ("a", "Did you bring it home?"),
        ("b", "They fire it and ship it in May, so I'm waiting."),
        ("a", "Exciting. I have news too: I ran the Riverside half marathon last Sunday!"),
        ("b", "You did it! What was your time?"),
        ("a", "Two hours and eleven minutes. My legs still hurt."),
        ("b", "That's a great first race. Did Pepper come to watch?"),
        ("a", "Yes, Clara brought her to the finish line. Pepper barked at every runner."),
        ("b", "Ha! Is Clara still in town?"),
        ("a", "She flew back to Lisbon on Tuesday. The wedding planning is getting intense."),
        ("b", "Have you written the speech yet?"),
        ("a", "Half of it. I start with the salsa class story like you said."),
        ("b", "Perfect. Any other plans for spring?"),
        ("a", "I'm thinking about changing jobs. The hospital in Westfield is hiring nurses."),
        ("b", "You'd be great there. Let me know how it goes."),
        ("a", "Will do. Good night Ben!"),
    ]),
    ("11:30 am on 22 June, 2024", [
        ("b", "Hi Alice, how was the wedding in Lisbon?"),
        ("a", "Perfect! Clara and Diego danced salsa for their first dance.", "a photo of a couple dancing under string lights"),
        ("b", "Of course they did. How did the speech go?"),
        ("a", "People laughed and Clara cried. I was so relieved."),
        ("b", "I knew it would work. Did you see much of Lisbon?"),
        ("a", "We ate pasteis de nata every day and took the old tram 28 up to the castle."),
        ("b", "Sounds lovely. Who watched Pepper while you were away?"),
        ("a", "My neighbour Tom. He sent me photos of her every evening."),
        ("b", "Good neighbour! Did you get the nursing job?"),
        ("a", "Yes! I start at Westfield Hospital in the children's ward on July 1st."),
        ("b", "Congratulations, that's what you wanted."),
        ("a", "Thanks! And did your tea bowl from Kyoto arrive?"),
        ("b", "It arrived in May, wrapped in newspaper. It survived the trip!", "a photo of a small brown tea bowl"),
        ("a", "Amazing. Is the teapot next?"),
        ("b", "I finished the teapot last week. The spout drips a bit, but it pours."),
        ("a", "You reached your goal for the summer!"),
        ("b", "I did. Mrs. Okafor wants to put it in the class exhibition in August."),
        ("a", "I'll come to the exhibition with Pepper if dogs are allowed."),
        ("b", "I'll ask. See you soon!"),
    ]),
]
EN_QA = [
    ("What is the name of the dog Alice adopted?", ["D1:5"], 4),
    ("What breed is Pepper?", ["D1:5"], 4),
    ("What is the name of Alice's cat?", ["D1:7"], 4),
    ("Who teaches Ben's pottery class?", ["D1:12"], 4),
    ("When did Alice adopt her dog?", ["D1:3"], 2),
    ("What did Pepper chew?", ["D2:2"], 4),
    ("Where did Clara and Diego meet?", ["D2:6"], 4),
    ("What did Ben make with a green glaze and who did he give them to?", ["D2:11", "D2:13"], 1),
    ("When did Ben fly to Kyoto?", ["D2:15"], 2),
    ("What did Ben make at the workshop in Gojozaka?", ["D3:4"], 4),
    ("What was Alice's time in the half marathon?", ["D3:9"], 4),
    ("When did Alice run the Riverside half marathon?", ["D3:7"], 2),
    ("Who brought Pepper to the finish line of the race?", ["D3:11"], 4),
    ("How did Alice start her wedding speech, and whose idea was it?", ["D2:9", "D3:15"], 1),
    ("What did Clara and Diego do for their first dance?", ["D4:2"], 4),
    ("Who looked after Pepper during the trip to Lisbon?", ["D4:8"], 4),
    ("Where will Alice work as a nurse, and when does she start?", ["D4:10"], 4),
    ("When did Ben's tea bowl from Kyoto arrive?", ["D4:13"], 2),
    ("Did Ben reach his pottery goal for the summer?", ["D1:14", "D4:15"], 1),
    ("What kind of job might suit someone who likes caring for children, like Alice?", ["D3:17", "D4:10"], 3),
    ("Which city did Alice visit for her sister's wedding and what did she eat there?", ["D2:8", "D4:6"], 1),
]

JA_A, JA_B = "美咲", "健太"
JA = [
    ("2024年1月8日 19:30", [
        ("a", "健太くん、あけましておめでとう！お正月はどうだった？"),
        ("b", "おめでとう！実家の札幌に帰って、ずっと雪かきしてたよ。"),
        ("a", "大変だったね。私は年末に猫を飼い始めたの！"),
        ("b", "えっ、本当に？どんな猫？"),
        ("a", "保護猫の茶トラで、名前はモカ。まだ生後半年なんだ。", "a photo of an orange kitten on a sofa"),
        ("b", "モカってかわいい名前だね。いたずらする？"),
        ("a", "カーテンに登るのが大好きで、もうボロボロだよ。"),
        ("b", "子猫あるあるだね。今年の目標は何かある？"),
        ("a", "料理教室に通おうと思ってる。和菓子を作れるようになりたいの。"),
        ("b", "いいね！僕は英会話を始めることにした。会社で海外出張が増えそうで。"),
        ("a", "どこに出張するの？"),
        ("b", "たぶんシンガポール。三月に一週間行く予定。"),
        ("a", "すごい！お土産よろしくね。"),
        ("b", "了解。モカの写真もまた送ってね。"),
        ("a", "うん、また連絡するね。おやすみ！"),
        ("b", "おやすみ！"),
    ]),
    ("2024年2月18日 14:10", [
        ("b", "美咲さん、料理教室はもう始まった？"),
        ("a", "うん、毎週土曜日に通ってる。先生は田中先生っていう優しいおばあちゃん。"),
        ("b", "何を作ったの？"),
        ("a", "最初はいちご大福を作ったよ。あんこを包むのが難しかった。", "a photo of strawberry daifuku on a plate"),
        ("b", "おいしそう！家族にあげた？"),
        ("a", "妹のさくらにあげたら、三つも食べてた。"),
        ("b", "さくらちゃん、甘いもの好きなんだね。"),
        ("a", "そういえば、さくらが四月から大阪の大学に進学するの。"),
        ("b", "おめでとう！何を勉強するの？"),
        ("a", "建築学科。昔から建物を見るのが好きだったから。"),
        ("b", "いいね。英会話は、先週からオンラインで始めたよ。"),
        ("a", "先生はどこの人？"),
        ("b", "アイルランド出身のショーン先生。発音が独特で面白い。"),
        ("a", "楽しそう！モカは最近、冷蔵庫の上で寝るのがブームだよ。"),
        ("b", "高いところが好きなんだね。"),
        ("a", "うん、じゃあまたね。"),
    ]),
    ("2024年3月24日 20:45", [
        ("a", "健太くん、シンガポール出張はどうだった？"),
        ("b", "暑かった！でもマーライオンも見たし、チキンライスが最高だった。", "a photo of the Merlion statue at night"),
        ("a", "いいなあ。英語は通じた？"),
        ("b", "会議ではなんとか。ショーン先生のおかげかも。"),
        ("a", "すごい成長だね。お土産は何？"),
        ("b", "カヤジャムを買ってきたよ。今度渡すね。"),
        ("a", "ありがとう！私は料理教室で桜餅を作ったよ。"),
        ("b", "季節らしいね。田中先生に褒められた？"),
        ("a", "葉っぱの巻き方がきれいだって褒められた！"),
        ("b", "すごい。さくらちゃんの引っ越しはもう終わった？"),
        ("a", "来週、大阪に引っ越すの。私も手伝いに行く予定。"),
        ("b", "寂しくなるね。"),
        ("a", "うん、でもモカがいるから大丈夫。最近はおもちゃのネズミに夢中なの。"),
        ("b", "かわいいな。今度会わせてね。"),
        ("a", "ぜひ！また連絡するね。"),
        ("b", "またね。"),
    ]),
    ("2024年5月12日 11:00", [
        ("b", "美咲さん、久しぶり！ゴールデンウィークは何してた？"),
        ("a", "大阪のさくらのところに遊びに行って、一緒に大阪城を見たよ。", "a photo of Osaka Castle with blue sky"),
        ("b", "いいね。さくらちゃんは大学に慣れた？"),
        ("a", "建築の授業が楽しいって。友達もたくさんできたみたい。"),
        ("b", "よかった。モカは誰が見てたの？"),
        ("a", "隣の佐藤さんが面倒を見てくれたの。写真を毎日送ってくれた。"),
        ("b", "優しいお隣さんだね。僕は英検二級に合格したよ！"),
        ("a", "おめでとう！すごいね。"),
        ("b", "ありがとう。次は秋にロンドン出張があるかも。"),
        ("a", "料理教室では柏餅を作ったよ。来月は発表会があるの。"),
        ("b", "発表会では何を作るの？"),
        ("a", "練り切りで紫陽花を作る予定。田中先生に特訓してもらってる。"),
        ("b", "見に行きたいな。"),
        ("a", "ぜひ来て！六月十五日の土曜日だよ。"),
        ("b", "カレンダーに入れておく！"),
        ("a", "ありがとう、またね。"),
    ]),
]
JA_QA = [
    ("美咲が飼い始めた猫の名前は？", ["D1:5"], 4),
    ("モカはどんな猫？", ["D1:5"], 4),
    ("健太はお正月にどこへ帰った？", ["D1:2"], 4),
    ("健太はいつシンガポールに出張する予定だった？", ["D1:12"], 2),
    ("料理教室の先生は誰？", ["D2:2"], 4),
    ("美咲が料理教室で最初に作ったものは何で、誰にあげた？", ["D2:4", "D2:6"], 1),
    ("さくらは大学で何を勉強する？", ["D2:10"], 4),
    ("健太の英会話の先生はどこの出身？", ["D2:13"], 4),
    ("シンガポールで健太が気に入った食べ物は？", ["D3:2"], 4),
    ("健太が買ってきたお土産は何？", ["D3:6"], 4),
    ("美咲が作った桜餅について先生は何を褒めた？", ["D3:7", "D3:9"], 1),
    ("さくらはいつ大阪に引っ越した？", ["D3:11"], 2),
    ("ゴールデンウィークに美咲はどこへ行った？", ["D4:2"], 4),
    ("美咲が旅行中、モカの世話をしたのは誰？", ["D4:6"], 4),
    ("健太は何の試験に合格した？", ["D4:7"], 4),
    ("発表会はいつで、美咲は何を作る予定？", ["D4:12", "D4:14"], 1),
    ("美咲は料理教室で和菓子を作れるようになった？", ["D1:9", "D3:7", "D4:10"], 3),
    ("健太の英語の勉強は仕事に役立った？", ["D1:10", "D3:4"], 3),
    ("先月、健太が出張で行った場所は？", ["D3:2"], 2),
]


def conversation(sample_id, a, b, sessions, qa):
    conv = {"speaker_a": a, "speaker_b": b}
    for n, (when, turns) in enumerate(sessions, 1):
        conv[f"session_{n}_date_time"] = when
        rows = []
        for i, turn in enumerate(turns, 1):
            row = {"speaker": a if turn[0] == "a" else b, "dia_id": f"D{n}:{i}", "text": turn[1]}
            if len(turn) > 2:
                row["blip_caption"] = turn[2]
            rows.append(row)
        conv[f"session_{n}"] = rows
    # The quirks the harness must survive: an extra date key without a session, a malformed evidence id,
    # a question without evidence, and an adversarial (category 5) question.
    conv[f"session_{len(sessions) + 1}_date_time"] = "9:00 am on 1 January, 2030"
    questions = [{"question": q, "answer": "", "evidence": ev, "category": cat} for q, ev, cat in qa]
    questions.append({"question": "Which movie did they watch together?", "adversarial_answer": "none", "evidence": [], "category": 5})
    questions.append({"question": "What did they talk about?", "answer": "", "evidence": [], "category": 3})
    first = questions[0]
    first["evidence"] = [f"{first['evidence'][0]}; {first['evidence'][0]}"]  # "D1:5; D1:5" style
    # "language" is ours (LoCoMo readers ignore it): bench.locomo reports a set of several languages per language.
    return {"sample_id": sample_id, "language": sample_id.split("-")[-1], "conversation": conv, "qa": questions}


def main() -> None:
    data = [conversation("mini-en", EN_A, EN_B, EN, EN_QA), conversation("mini-ja", JA_A, JA_B, JA, JA_QA)]
    out = Path(__file__).with_name("mini_locomo.json")
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
