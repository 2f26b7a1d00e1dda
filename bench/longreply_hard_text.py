"""What only the HARD profile of ``bench.longreply_data`` says: more kinds of fact (more ports, dates, tools of the
same kind), distractors written like the facts (the same sentence, another value, another context), sentences that
name a fact without its value, follow-up asks for a session that returns to an earlier topic, and the questions of
three-session histories.

Plain data, no logic: ``bench.longreply_data`` builds its ``Slot`` objects from ``SLOT_SPECS`` (positional
arguments of its ``_slot``, then keyword flags). A value of a new slot is never a value of another slot and never
appears in the shared filler, so an answer is found only where a fact puts it.
"""

from __future__ import annotations

# The dates of DATE_SLOTS are drawn like the deadline's (days after the conversation's start).
DATE_SLOTS = ("demo_day", "code_freeze")

SLOT_SPECS: list[tuple[tuple, dict]] = [
    (("api_port", "the API server port", "APIサーバーのポート番号",
      ("8088", "8080", "8081", "8800", "9000", "3000", "5000"),
      "set the API server port to {value}", "APIサーバーのポート番号を{value}にした",
      ["The API server listens on port {value}."], ["APIサーバーはポート{value}で待ち受けています。"]),
     {"update": True}),
    (("metrics_port", "the metrics endpoint port", "メトリクス用のポート番号",
      ("9090", "9100", "9187", "9464", "9273", "9540"),
      "exposed metrics on port {value}", "メトリクスをポート{value}で公開した",
      ["Metrics are exposed on port {value}."], ["メトリクスはポート{value}で公開しています。"]), {}),
    (("ssh_port", "the SSH port", "SSHのポート番号",
      ("2222", "2200", "22022", "4422", "2223", "60022"),
      "moved SSH to port {value}", "SSHのポート番号を{value}にした",
      ["SSH listens on port {value}."], ["SSHはポート{value}で待ち受けています。"]), {}),
    (("region", "the server region", "サーバーのリージョン",
      {"en": ("Frankfurt", "Helsinki", "Amsterdam", "Singapore", "Tokyo", "Virginia", "Oregon"),
       "ja": ("フランクフルト", "ヘルシンキ", "アムステルダム", "シンガポール", "大阪", "バージニア", "オレゴン")},
      "moved the servers to the {value} region", "サーバーを{value}リージョンに移した",
      ["The servers run in the {value} region."], ["サーバーは{value}リージョンで動かします。"]),
     {"update": True}),
    (("orm", "the ORM", "ORM",
      ("SQLAlchemy 2.0", "Tortoise ORM", "Peewee", "SQLModel", "Pony ORM", "Piccolo"),
      "picked {value} as the ORM", "ORMを{value}に決めた",
      ["Database access goes through {value}."], ["DBアクセスは{value}を通します。"]), {"choose": True}),
    (("frontend", "the frontend framework", "フロントエンドのフレームワーク",
      ("React", "Vue 3", "Svelte", "HTMX", "SolidJS", "Angular"),
      "chose {value} for the frontend", "フロントエンドを{value}にした",
      ["The frontend is written in {value}."], ["フロントエンドは{value}で書きます。"]), {"choose": True}),
    (("auth", "the login provider", "ログイン基盤",
      ("Auth0", "Keycloak", "Authentik", "Clerk", "Ory Kratos", "Zitadel"),
      "set up login with {value}", "ログイン基盤を{value}にした",
      ["Users sign in through {value}."], ["ユーザーは{value}経由でログインします。"]), {"choose": True}),
    (("demo_day", "the demo day", "デモの日", (),
      "set the demo day to {value}", "デモの日を{value}にした",
      ["The demo is on {value}."], ["デモは{value}に行います。"]), {}),
    (("code_freeze", "the code freeze", "コードフリーズ", (),
      "fixed the code freeze at {value}", "コードフリーズを{value}にした",
      ["Code freeze starts on {value}."], ["コードフリーズは{value}からです。"]), {"update": True}),
    (("log_retention", "the log retention period", "ログの保持期間",
      {"en": ("7 days", "14 days", "30 days", "60 days", "90 days", "180 days"),
       "ja": ("7日間", "14日間", "30日間", "60日間", "90日間", "180日間")},
      "set the log retention period to {value}", "ログの保持期間を{value}にした",
      ["Logs are kept for {value}."], ["ログは{value}保持します。"]), {"update": True}),
    (("budget", "the monthly hosting budget", "月々のサーバー予算",
      {"en": ("€20", "€35", "€50", "€80", "$40", "$60"),
       "ja": ("3,000円", "6,000円", "8,000円", "12,000円", "15,000円", "20,000円")},
      "set the monthly hosting budget to {value}", "月々のサーバー予算を{value}にした",
      ["Hosting may cost at most {value} a month."], ["サーバー代は月{value}までに抑えます。"]), {"update": True}),
    (("timeout", "the request timeout", "リクエストのタイムアウト",
      {"en": ("10 seconds", "15 seconds", "20 seconds", "30 seconds", "45 seconds", "90 seconds"),
       "ja": ("10秒", "15秒", "20秒", "30秒", "45秒", "90秒")},
      "set the request timeout to {value}", "リクエストのタイムアウトを{value}にした",
      ["Requests time out after {value}."], ["リクエストは{value}でタイムアウトします。"]), {}),
    (("staging_domain", "the staging domain", "ステージングのドメイン",
      ("staging.lumen-notes.dev", "stg.brightcart.io", "preview.fernhill.net", "test.orbitlab.org",
       "stg.mizuki-kobo.jp", "beta.kestrel.cloud"),
      "registered {value} as the staging domain", "ステージングのドメインを{value}にした",
      ["Staging is served from {value}."], ["ステージングは{value}で公開します。"]), {}),
    (("license", "the project's license", "プロジェクトのライセンス",
      ("MIT License", "Apache-2.0", "AGPL-3.0", "BSD-3-Clause", "MPL-2.0", "EUPL-1.2"),
      "licensed the project under {value}", "プロジェクトのライセンスを{value}にした",
      ["The code is released under {value}."], ["コードは{value}で公開します。"]), {}),
    (("node", "the Node.js version", "Node.jsのバージョン",
      ("Node.js 18", "Node.js 20", "Node.js 22", "Node.js 23"),
      "moved the frontend build to {value}", "フロントエンドのビルドを{value}に移した",
      ["The frontend builds with {value}."], ["フロントエンドは{value}でビルドします。"]), {"update": True}),
]

TEXT: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        # "{context}, {statement}": the statement is one of the fact's own sentences with another value
        "contexts": (
            "For the other team's project", "On my previous client's setup", "In the upstream example repository",
            "In the throwaway demo environment", "In your colleague's prototype", "In the load-test environment",
            "On the old staging box we retired", "In the tutorial you linked",
        ),
        "tails": ("", "", " That one is separate from ours.", " Don't mix it up with ours.",
                  " It worked well there, but it doesn't carry over."),
        "plain": ("{noun} is {value}.",),
        # a temporal question's deed for a value never changed, named without the value
        "settled": ("settled {noun}",),
        # a fact's noun without its value: words a question shares with every reply that says them
        "mentions": (
            "Keep {noun} in mind when you touch this part.", "We'll revisit {noun} once the load tests are in.",
            "Whatever {noun} ends up being, write it into the README.",
            "This doesn't depend on {noun}, so you can do it in parallel.",
            "Check {noun} in the runbook before you change anything here.",
        ),
        "follow_ups": (
            "Follow-up on {topic}: what would you change for production?",
            "Back to {topic} — I tried your suggestion. What's the next step?",
            "One more thing about {topic}: how do I test it?",
            "Is there anything about {topic} I'm missing in the {project}?",
        ),
    },
    "ja": {
        "contexts": (
            "別チームのプロジェクトでは", "以前手伝った案件では", "公式のサンプルリポジトリでは", "デモ用の使い捨て環境では",
            "同僚の試作版では", "負荷試験用の環境では", "廃止した古いステージング機では", "リンクしてもらったチュートリアルでは",
        ),
        "tails": ("", "", "こちらとは別物です。", "うちの設定と混同しないでください。", "向こうではうまくいきましたが、こちらには当てはまりません。"),
        "plain": ("{noun}は{value}です。",),
        "settled": ("{noun}を決めた",),
        "mentions": (
            "この部分を触るときは{noun}のことも頭に入れておいてください。", "負荷試験の結果が出たら、{noun}をもう一度見直しましょう。",
            "{noun}が最終的に何になっても、READMEに書いておきましょう。", "これは{noun}には依存しないので、並行して進められます。",
            "ここを変える前に、運用手順書で{noun}を確認してください。",
        ),
        "follow_ups": (
            "{topic}の続きです。本番向けには何を変えますか？", "{topic}の件、提案どおり試しました。次は何をすればいいですか？",
            "{topic}についてもう一つ。どうテストすればいいですか？", "{project}の{topic}で、見落としていることはありますか？",
        ),
    },
}

QTEXT: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "before_latest": ("What was {noun} just before the latest change?",
                          "Before its most recent change, what was {noun}?"),
        "original": ("What was {noun} originally, before any change?", "What was {noun} at the very start?"),
        "history3_answer": ("first {old}, then {mid}, now {new}",),
        "triple": ("What are {noun1}, {noun2} and {noun3}?",
                   "Remind me of three things: {noun1}, {noun2} and {noun3}."),
        "triple_answer": ("{v1}; {v2}; {v3}",),
    },
    "ja": {
        "before_latest": ("直近の変更の直前、{noun}は何だった？", "最後に変える前の{noun}は？"),
        "original": ("{noun}は一番最初は何だった？", "変更が入る前、最初の{noun}は？"),
        "history3_answer": ("最初は{old}、次に{mid}、今は{new}",),
        "triple": ("{noun1}と{noun2}と{noun3}はそれぞれ何？",),
        "triple_answer": ("{v1}、{v2}、{v3}",),
    },
}
