"""What the user says and asks in bench.realtext_data, in English and Japanese: project facts that change,
contradictions, preferences, standing instructions, requests for an explanation, and the questions asked later.

The kinds of fact and their values are bench.longreply_data's ``SLOTS`` (nouns and values in both languages);
everything else said is here. The assistant never speaks from here: its replies are real text
(bench.realtext_sources).
"""

from __future__ import annotations


def fill(template: str, **values: object) -> str:
    """A template with its ``{name}`` fields replaced (str.replace, not str.format: texts hold braces)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template

ASK = {
    "en": ("Can you walk me through {title}?", "Next thing I need to understand: {title}. Explain it properly, please.",
           "I keep tripping over {title}. What exactly does it say?", "Could you explain {title} in detail?",
           "Please give me the full rundown of {title}."),
    "ja": ("{title}について詳しく説明してもらえますか？", "次は{title}を理解したいです。きちんと説明してください。",
           "{title}でいつもつまずきます。正確には何と書いてありますか？", "{title}の内容を全部教えてください。"),
}
GREETING = {
    "en": ("", "", "Morning!", "Back again.", "Hi!", "Quick update first."),
    "ja": ("", "", "おはようございます。", "また来ました。", "こんにちは。", "まず近況です。"),
}
STATE = {
    "en": ("For the project: {noun} is {value}.", "We settled it: {noun} is {value}.",
           "FYI, {noun} is {value}.", "Note for later: {noun} is {value}."),
    "ja": ("プロジェクトの件ですが、{noun}は{value}です。", "決まりました。{noun}は{value}です。",
           "共有です：{noun}は{value}です。", "後のためのメモ：{noun}は{value}です。"),
}
UPDATE = {
    "en": ("Change of plan: {noun} is now {value}, not {old}.", "We dropped {old}; {noun} is {value} from now on.",
           "Heads-up, {noun} changed again, to {value}.", "Update: {noun} moved from {old} to {value}."),
    "ja": ("予定変更です。{noun}は{old}ではなく{value}になりました。", "{old}はやめました。今後の{noun}は{value}です。",
           "お知らせ：{noun}がまた変わって{value}になりました。", "更新：{noun}を{old}から{value}に移しました。"),
}
CONTRADICT = {
    "en": ("Wait, {noun} was never {old}. It is {value}, and it has been all along.",
           "I told you {old} for {noun} before — that was wrong. It's {value}."),
    "ja": ("待ってください、{noun}が{old}だったことはありません。最初からずっと{value}です。",
           "前に{noun}は{old}と言いましたが、間違いでした。{value}です。"),
}
PREFERENCES = {
    "en": (("I prefer pytest over unittest; class-based tests feel heavy to me.", "testing", "pytest"),
           ("I like answers that start with the code and explain afterwards.", "how answers are laid out",
            "start with the code"),
           ("Tabs are banned in this repo; four spaces, always.", "indentation", "four spaces"),
           ("I'd rather use SQLite locally than run a database server on my laptop.", "local databases", "SQLite"),
           ("Dark mode everywhere, please — the dashboards too.", "the dashboards' theme", "Dark mode"),
           ("I prefer small pull requests, under 300 lines each.", "pull requests", "under 300 lines")),
    "ja": (("unittestよりpytestが好きです。クラス形式のテストは重く感じます。", "テスト", "pytest"),
           ("回答はコードを先に、説明は後にしてもらえると助かります。", "回答の構成", "コードを先に"),
           ("このリポジトリではタブ禁止です。常にスペース4つ。", "インデント", "スペース4つ"),
           ("ノートPCでDBサーバーを動かすより、ローカルではSQLiteを使いたいです。", "ローカルのDB", "SQLite"),
           ("ダッシュボードも含めて全部ダークモードがいいです。", "ダッシュボードの見た目", "ダークモード"),
           ("プルリクエストは小さく、1本300行未満が好みです。", "プルリクエスト", "300行未満")),
}
INSTRUCTIONS = {
    "en": (("From now on, always add type hints to code examples.", "code examples", "type hints"),
           ("Whenever you suggest a command, give the Makefile target too.", "commands", "Makefile target"),
           ("Never suggest Docker Compose for this project; we run plain systemd units.", "deployment suggestions",
            "systemd units"),
           ("Please always mention the license of any library you recommend.", "library recommendations",
            "the license"),
           ("Reply in British spelling from now on.", "spelling", "British spelling"),
           ("When you show SQL, use uppercase keywords.", "SQL", "uppercase keywords")),
    "ja": (("今後、コード例には必ず型ヒントを付けてください。", "コード例", "型ヒント"),
           ("コマンドを提案するときは、Makefileのターゲットも書いてください。", "コマンドの提案", "Makefileのターゲット"),
           ("このプロジェクトではDocker Composeを勧めないでください。systemdのユニットで動かしています。", "デプロイの提案",
            "systemdのユニット"),
           ("ライブラリを勧めるときは、必ずライセンスも書いてください。", "ライブラリの推薦", "ライセンス"),
           ("SQLを見せるときは、キーワードを大文字にしてください。", "SQL", "キーワードを大文字"),
           ("説明には必ず参考になる公式ドキュメントの節名を添えてください。", "説明", "公式ドキュメントの節名")),
}
QUESTIONS = {
    "en": {
        "extraction": "In your reply on {title}, one word is missing here: “…{left}___{right}…”. Which word is it?",
        "update": "What is {noun} now?",
        "contradiction": "I said two different things about {noun}. What did I say first, and what is it really?",
        "multi_session": "Which {noun1} and which {noun2} did I tell you about?",
        "summary_history": "Summarise how {noun} changed over the whole project, in order.",
        "summary_current": "Summarise where things stand now: {noun1}, {noun2} and {noun3}?",
        "order_first": "Which did I tell you first: that {noun1} was {v1}, or that {noun2} was {v2}?",
        "order_three": "Put these in the order I told you: {noun1} {v1}; {noun2} {v2}; {noun3} {v3}.",
        "when": "On what date did I tell you that {noun} was {value}?",
        "gap": "How many days passed between my saying {noun1} was {v1} and my saying {noun2} was {v2}?",
        "gap_answer": "{d} days",
        "preference": "What did I say I prefer about {about}?",
        "instruction": "What standing instruction did I give you about {about}?",
    },
    "ja": {
        "extraction": "{title}についての返信で、「…{left}___{right}…」の空欄に入る語は何でしたか？",
        "update": "今の{noun}は何ですか？",
        "contradiction": "{noun}について食い違うことを言いました。最初に何と言って、本当は何ですか？",
        "multi_session": "私が伝えた{noun1}と{noun2}はそれぞれ何でしたか？",
        "summary_history": "プロジェクト全体で{noun}がどう変わってきたか、順にまとめてください。",
        "summary_current": "今の状況をまとめてください：{noun1}、{noun2}、{noun3}は？",
        "order_first": "{noun1}が{v1}だと伝えたのと、{noun2}が{v2}だと伝えたのは、どちらが先でしたか？",
        "order_three": "私が伝えた順に並べてください：{noun1}の{v1}、{noun2}の{v2}、{noun3}の{v3}。",
        "when": "{noun}が{value}だと私が伝えたのは何年何月何日でしたか？",
        "gap": "{noun1}が{v1}だと言ってから、{noun2}が{v2}だと言うまで何日空きましたか？",
        "gap_answer": "{d}日",
        "preference": "{about}について、私は何が好みだと言いましたか？",
        "instruction": "{about}について、私はどんな指示を出しましたか？",
    },
}
# The categories, and the LoCoMo category number each is scored under (bench.locomo_data.CATEGORY_NAMES)
KIND_CATEGORY = {
    "extraction": 4, "knowledge_update": 6, "contradiction": 6, "multi_session": 1, "summarisation": 1,
    "event_ordering": 2, "temporal": 2, "preference": 3, "instruction": 3,
}
# What makes a user turn long and its fact hard to find: a pasted excerpt of real text (bench.realtext_sources),
# a fact's noun said without its value, another value of the same kind said of someone else's project.
PASTE = {
    "en": ("I was reading this and got lost:\n\n{text}\n\n", "Pasting what I found so far:\n\n{text}\n\n",
           "From the docs, for context:\n\n{text}\n\n"),
    "ja": ("これを読んでいて分からなくなりました：\n\n{text}\n\n", "見つけたものを貼ります：\n\n{text}\n\n",
           "参考までにドキュメントから：\n\n{text}\n\n"),
}
MENTION = {
    "en": ("We may have to revisit {noun} at some point.", "Still not fully happy with {noun}.",
           "{noun_cap} came up in our standup again.", "Someone asked me about {noun} today."),
    "ja": ("{noun}はいずれ見直すかもしれません。", "{noun}にはまだ少し不満があります。",
           "朝会でまた{noun}の話が出ました。", "今日{noun}について聞かれました。"),
}
LOOKALIKE = {
    "en": ("A friend's team uses {value} for {noun}, for what it's worth.",
           "In the tutorial I followed, {noun} was {value} — not ours, just an example.",
           "My old job had {value} as {noun}."),
    "ja": ("参考までに、友人のチームでは{noun}に{value}を使っています。",
           "見たチュートリアルでは{noun}が{value}でしたが、うちのではありません。",
           "前の職場では{noun}が{value}でした。"),
}
