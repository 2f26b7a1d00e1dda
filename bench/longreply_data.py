"""Long-reply conversations in LoCoMo's JSON format (issue 19): a user and a technical assistant over weeks,
English and Japanese, written by this project so that ``python -m bench.locomo --data FILE`` runs on them unchanged.

LoCoMo is short chat turns between friends; real assistant histories are not. Here every assistant reply is
200–2,000 words (English) or 400–4,000 CJK-counted tokens (Japanese, ``lumina_memory.nodes.text.token_count.count_tokens``) of
markdown: headings, lists, fenced code blocks and technical filler. The facts a question asks about are said once —
sometimes in a short user turn, mostly buried at the start, middle or end of a long reply — and *distractors*
(the same kind of value, a different one: another port, another framework) sit in other replies' filler.

Per conversation (a seeded ``random.Random``, so a seed gives the same file byte for byte):

- *slots*: kinds of fact (the staging database port, the deploy target, the thesis deadline …). A **plain** slot
  is stated once; an **update** slot is stated, then changed in a later session; a **choice** slot is first
  weighed between two candidates by the assistant, then decided (with a reason) in a later session.
- *preferences*: the user's stated reasons and tastes (asked as open-domain questions).
- in one conversation per language of the default set, one **degenerate** assistant reply (a pasted log or a
  giant generated table of 60,000–150,000 characters) and a question whose fact sits in a normal turn of the
  same session — real histories have these and the import must survive them.

Questions use LoCoMo's ``category`` numbers: 4 single-hop (a fact said once), 1 multi-hop (2–3 sessions: the
candidates and the decision, how a value changed, two facts from two sessions), 2 temporal (before/after, which
first, when — the session's date —, how many days between), 3 open-domain (preferences, why a choice was made),
and 6 update (the value now: evidence is the latest statement; the value before: both statements). Update
questions also carry ``update: {from, to, from_evidence, to_evidence}`` (extra keys LoCoMo readers ignore), and
each sample carries ``language`` and, when it has one, ``degenerate_dia_id``.

    python -m bench.longreply_data --out /tmp/longreply.json [--per-language 6] [--seed 19] [--profile hard]

``--profile hard`` (``HARD``, its further text in ``bench.longreply_hard_text``) writes conversations the size and
clutter of a real assistant history, where ranking and not the budget decides: 22–30 sessions over 2–4 months,
3–6 exchanges a session (~200–300 turns), ~25 facts (more ports, dates and tools of the same kind; three values
change twice), 1–3 *look-alike* distractors in most replies (a fact's own sentence with another value, said of
another context: "For the other team's project, the staging database listens on port 6543."), sentences that name
a fact without its value, sessions that come back to the same topic, facts mostly in the middle of long replies,
multi-hop questions over three sessions, and 30–45 questions a conversation. DEFAULT and MINI are unchanged by it.

The small fixed file for the tests is ``tests/data/longreply_mini.json`` (``tests/data/make_longreply.py``,
the ``MINI`` profile); the benchmark's set is generated, never committed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from bench import longreply_hard_text as hard_text
from lumina_memory.nodes.text.token_count import count_tokens

DEFAULT_PER_LANGUAGE = 6
DEFAULT_SEED = 19
ASSISTANT = "Assistant"
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December"]


# ---------------------------------------------------------------------------------------------------- text
# Everything said lives here: fact kinds (slots), phrase templates, filler topics, code blocks. Filler never names
# a product that is a slot value, so a value is said only where a fact or a distractor puts it.

LANGUAGES = ("en", "ja")


@dataclass(frozen=True)
class Slot:
    """A kind of fact. ``noun`` reads in "{noun} is {value}"; ``event`` is the past-tense deed for temporal
    questions ("set up CI on {value}"); ``say`` holds statements only this kind has."""

    key: str
    noun: dict[str, str]
    values: dict[str, tuple[str, ...]] | tuple[str, ...]
    event: dict[str, str]
    say: dict[str, tuple[str, ...]]
    can_update: bool = False
    can_choose: bool = False


def _slot(key, noun_en, noun_ja, values, event_en, event_ja, say_en=(), say_ja=(), update=False, choose=False):
    return key, Slot(key, {"en": noun_en, "ja": noun_ja}, values, {"en": event_en, "ja": event_ja},
                     {"en": tuple(say_en), "ja": tuple(say_ja)}, update, choose)


SLOTS: dict[str, Slot] = dict([
    _slot("db_engine", "the production database", "本番DB",
          ("PostgreSQL 15", "PostgreSQL 16", "MySQL 8.0", "MariaDB 10.11", "CockroachDB 23.1"),
          "decided on {value} for the production database", "本番DBを{value}に決めた",
          ["Production data will live in {value}."], ["本番のデータは{value}に置きます。"], choose=True),
    _slot("db_port", "the staging database port", "ステージングDBのポート番号",
          ("5433", "5434", "6543", "15432", "25432", "7433", "8432"),
          "set the staging database port to {value}", "ステージングDBのポート番号を{value}にした",
          ["The staging database listens on port {value}."], ["ステージングDBはポート{value}で待ち受けています。"],
          update=True),
    _slot("framework", "the web framework", "Webフレームワーク",
          ("FastAPI", "Flask", "Django", "Litestar", "Falcon", "Sanic"),
          "picked {value} as the web framework", "Webフレームワークを{value}に決めた",
          ["The HTTP layer is built on {value}."], ["HTTPの層は{value}で作ります。"], choose=True),
    _slot("deploy", "the deploy target", "デプロイ先",
          ("Hetzner CX22", "Hetzner CX32", "DigitalOcean", "AWS Lightsail", "Raspberry Pi 5", "Fly.io", "Vultr"),
          "moved the deploy target to {value}", "デプロイ先を{value}にした",
          ["We deploy to {value}."], ["デプロイ先は{value}にします。"], update=True),
    _slot("deadline", "the {deadline} deadline", "{deadline}の締め切り", (),
          "fixed the {deadline} deadline at {value}", "{deadline}の締め切りを{value}にした",
          ["The {deadline} has to be done by {value}."], ["{deadline}は{value}までに終わらせる必要があります。"],
          update=True),
    _slot("ci", "the CI system", "CI",
          ("GitHub Actions", "GitLab CI", "Woodpecker CI", "Drone CI", "Jenkins", "Buildkite"),
          "set up CI on {value}", "CIを{value}で導入した",
          ["CI runs on {value}."], ["CIは{value}で回しています。"], choose=True),
    _slot("cache", "the cache", "キャッシュ",
          ("Redis 7", "Valkey 8", "Memcached 1.6", "KeyDB", "Dragonfly"),
          "chose {value} as the cache", "キャッシュを{value}にした",
          ["Caching goes through {value}."], ["キャッシュには{value}を使います。"], choose=True),
    _slot("runtime", "the Python version", "Pythonのバージョン",
          ("Python 3.10", "Python 3.11", "Python 3.12", "Python 3.13"),
          "moved to {value}", "{value}に移行した",
          ["Everything runs on {value}."], ["すべて{value}で動かします。"], update=True),
    _slot("backup_time", "the nightly backup time", "夜間バックアップの時刻",
          ("02:30", "03:15", "01:45", "04:10", "00:50", "05:20"),
          "scheduled the nightly backup at {value}", "夜間バックアップを{value}に設定した",
          ["The nightly backup starts at {value}."], ["夜間バックアップは{value}に開始します。"], update=True),
    _slot("queue", "the task queue", "ジョブキュー",
          ("Celery", "RQ", "Dramatiq", "Arq", "Huey"),
          "picked {value} as the task queue", "ジョブキューを{value}にした",
          ["Background jobs go through {value}."], ["バックグラウンドジョブは{value}で処理します。"], choose=True),
    _slot("monitoring", "the monitoring tool", "監視ツール",
          ("Uptime Kuma", "Grafana", "Netdata", "Prometheus", "Zabbix"),
          "set up monitoring with {value}", "監視を{value}で始めた",
          ["Monitoring is done with {value}."], ["監視は{value}で行います。"], choose=True),
    _slot("memory", "the worker's memory limit", "ワーカーのメモリ上限",
          ("512 MB", "768 MB", "1 GB", "1.5 GB", "2 GB", "3 GB"),
          "set the worker's memory limit to {value}", "ワーカーのメモリ上限を{value}にした",
          ["The worker container is capped at {value}."], ["ワーカーのコンテナは{value}に制限します。"], update=True),
    _slot("domain", "the production domain", "本番ドメイン",
          ("app.lumen-notes.dev", "api.brightcart.io", "tasks.fernhill.net", "data.orbitlab.org",
           "shop.mizuki-kobo.jp", "lab.sakura-hub.net", "home.kestrel.cloud"),
          "registered {value} as the production domain", "本番ドメインを{value}にした",
          ["Production will be served from {value}."], ["本番は{value}で公開します。"]),
    _slot("reviewer", "the code reviewer", "コードレビュー担当",
          {"en": ("Tomás", "Aiko", "Jonas", "Mei", "Rafael", "Ines"),
           "ja": ("佐藤さん", "田中さん", "高橋さん", "中村さん", "小林さん", "渡辺さん")},
          "made {value} the code reviewer", "コードレビュー担当を{value}にした",
          ["{value} reviews every pull request."], ["プルリクエストは全部{value}がレビューします。"]),
])

# HARD's further kinds of fact (more ports, dates, tools of the same kind); DEFAULT and MINI never use them
HARD_SLOTS: dict[str, Slot] = dict(_slot(*args, **flags) for args, flags in hard_text.SLOT_SPECS)
ALL_SLOTS: dict[str, Slot] = {**SLOTS, **HARD_SLOTS}
DATE_SLOTS = ("deadline", *hard_text.DATE_SLOTS)  # values are days after the conversation's start

SCENARIOS = {
    "en": [
        {"project": "recipe-sharing web app", "deadline": "launch", "users": ["Maya", "Noor"]},
        {"project": "sensor data pipeline", "deadline": "first release", "users": ["Liam", "Oskar"]},
        {"project": "family photo server", "deadline": "migration", "users": ["Priya", "Dana"]},
        {"project": "invoicing tool", "deadline": "beta", "users": ["Jonah", "Clara"]},
        {"project": "game backend", "deadline": "playtest", "users": ["Elena", "Marco"]},
        {"project": "volunteer scheduling app", "deadline": "pilot", "users": ["Sam", "Hana"]},
    ],
    "ja": [
        {"project": "卒業論文の実験基盤", "deadline": "論文提出", "users": ["健二", "直樹"]},
        {"project": "社内勤怠Webアプリ", "deadline": "リリース", "users": ["美咲", "香織"]},
        {"project": "自宅サーバー", "deadline": "移行", "users": ["拓也", "大輔"]},
        {"project": "センサーデータ収集パイプライン", "deadline": "初回納品", "users": ["由美", "恵"]},
        {"project": "ECサイト", "deadline": "ベータ公開", "users": ["翔太", "亮"]},
        {"project": "研究室の予約システム", "deadline": "学内公開", "users": ["彩", "真理子"]},
    ],
}

TEXT: dict[str, dict] = {
    "en": {
        "state_assistant": (
            "For the record, {noun} is {value}.",
            "Before the details, one decision to keep in mind: {noun} is {value}.",
            "As we agreed, {noun} is {value}, so the steps below assume that.",
            "Note that {noun} is {value} — the rest of this section follows from it.",
            "I'll write it down so it doesn't get lost: {noun} is {value}.",
        ),
        "state_user": (
            "Quick note before my question: {noun} is {value}.",
            "FYI, we decided that {noun} is {value}.",
            "Just so you know, {noun} is {value}.",
        ),
        "update": (
            "Change of plan: {noun} is now {value} instead of {old}.",
            "We moved away from {old}; {noun} is {value} now.",
            "Update: {noun} changed to {value}.",
            "Heads-up, {noun} is now {value}.",
            "From here on, {noun} is {value}.",
        ),
        "consider": (
            "For {noun}, the two realistic candidates are {a} and {b}.",
            "I'd narrow {noun} down to two options: {a} or {b}.",
            "You're really choosing between {a} and {b} for {noun}; both would work.",
        ),
        "decide": (
            "We went with {value} for {noun}, mainly because {reason}.",
            "Decision made: {noun} is {value}. The main reason: {reason}.",
            "After thinking it over, {value} it is for {noun} — {reason}.",
        ),
        "reasons": (
            "it has the best documentation", "I already know it well",
            "the hosting provider supports it out of the box", "it needs less boilerplate",
            "its community is larger", "it is easier to run on small machines",
        ),
        "distractor": (
            "For comparison, a team I helped last year went with {value} for {noun}.",
            "Many tutorials show {value} as {noun}; that is fine for a demo, but don't copy it blindly.",
            "If you ever add a second environment, {value} would also work as {noun} there.",
            "(A common default you'll see in examples for {noun} is {value} — ignore that here.)",
        ),
        "openings": (
            "Good question — here's how I'd approach it.", "Sure, let's go through it step by step.",
            "Happy to help. Short version first, then the details.", "Here's a practical plan.",
            "Let's break this down.",
        ),
        "closings": (
            "Let me know if you want me to expand on any step.",
            "If anything fails, paste the error and we'll look at it together.",
            "That should be enough to get going.", "Ping me once that's in place and we'll do the next part.",
        ),
        "greetings": ("Hi again!", "Hello!", "Back with another question.", "Hey, quick one today."),
        "asks": (
            "Can you walk me through {topic} for the {project}?", "Next question: how should I handle {topic}?",
            "I'm stuck on {topic}. What would you do?", "What's a sensible setup for {topic} in the {project}?",
        ),
        "degenerate_log": "Here's the complete output of the import dry run, unedited, so you can search it:",
        "degenerate_table": "Here is the full generated mapping table, every row, as you asked:",
        "table_header": "| id | item | state | weight | refs |\n|---|---|---|---|---|",
        "table_states": ("active", "pending", "archived", "failed", "queued"),
    },
    "ja": {
        "state_assistant": (
            "記録として残しておくと、{noun}は{value}です。",
            "細部に入る前に確認です：{noun}は{value}で進めます。",
            "合意した通り、{noun}は{value}なので、以下の手順もそれを前提にしています。",
            "忘れないように書いておきます。{noun}は{value}です。",
            "大事な前提として、{noun}は{value}です。",
        ),
        "state_user": (
            "先に共有しておくと、{noun}は{value}です。",
            "念のため、{noun}は{value}に決めました。",
            "ちなみに{noun}は{value}です。",
        ),
        "update": (
            "予定変更です。{noun}は{old}ではなく{value}になりました。",
            "{noun}を{value}に変更しました。",
            "お知らせです：今後の{noun}は{value}です。",
            "{old}はやめて、{noun}は{value}にしました。",
            "ここからは{noun}を{value}として進めます。",
        ),
        "consider": (
            "{noun}の候補は{a}と{b}の二つに絞れます。",
            "{noun}については、現実的には{a}か{b}のどちらかです。",
            "{noun}は{a}と{b}で迷うところですが、どちらでも動きます。",
        ),
        "decide": (
            "{noun}は{value}に決めました。一番の理由は{reason}からです。",
            "検討の結果、{noun}は{value}にします。{reason}からです。",
            "結論として{noun}は{value}です。{reason}というのが決め手でした。",
        ),
        "reasons": (
            "ドキュメントが一番充実している", "自分がすでに使い慣れている", "ホスティング先が標準で対応している",
            "書くコードが少なくて済む", "コミュニティが大きい", "小さいマシンでも動かしやすい",
        ),
        "distractor": (
            "参考までに、以前手伝った別のチームでは{noun}を{value}にしていました。",
            "チュートリアルでは{noun}を{value}にしている例が多いですが、そのまま真似しないでください。",
            "将来もう一つ環境を増やすなら、そちらの{noun}は{value}でも構いません。",
            "（サンプルでよく見る{noun}は{value}ですが、今回は関係ありません。）",
        ),
        "openings": (
            "いい質問です。私ならこう進めます。", "了解です。順番に見ていきましょう。",
            "まず結論から、そのあと詳細を書きます。", "実践的な手順をまとめました。", "分解して考えてみましょう。",
        ),
        "closings": (
            "どこか詳しく知りたいステップがあれば言ってください。", "エラーが出たら、そのまま貼ってもらえれば一緒に見ます。",
            "これで始めるには十分なはずです。", "ここまでできたら教えてください。次に進みましょう。",
        ),
        "greetings": ("こんにちは、また質問です。", "お疲れさまです！", "続きの相談です。", "今日は短めの質問です。"),
        "asks": (
            "{project}の{topic}について、手順を教えてもらえますか？", "次は{topic}です。どう進めるのがいいでしょう？",
            "{topic}で詰まっています。あなたならどうしますか？", "{project}での{topic}は、どんな構成がいいですか？",
        ),
        "degenerate_log": "ご依頼のとおり、インポートのドライラン出力を省略せずに全部貼ります。検索に使ってください：",
        "degenerate_table": "ご依頼のとおり、生成した対応表を全行そのまま貼ります：",
        "table_header": "| ID | 項目 | 状態 | 重み | 参照数 |\n|---|---|---|---|---|",
        "table_states": ("有効", "保留", "アーカイブ済み", "失敗", "待機中"),
    },
}

DEGENERATE_ASK = {
    "en": ("Can you paste the full output of the import dry run? All of it, please.",
           "Could you generate the complete mapping table? Every row, no summary."),
    "ja": ("インポートのドライランの出力を全部貼ってもらえますか？省略なしでお願いします。",
           "対応表を全行生成してもらえますか？要約なしでお願いします。"),
}

PREFERENCES = {
    "en": [
        {"say": "I'd rather pay a little more each month than babysit servers at night.",
         "q": "How does {user} weigh paying more against doing maintenance?",
         "a": "Would rather pay a bit more than babysit servers at night"},
        {"say": "I maintain this alone, so I prefer boring, well-documented tools over shiny new ones.",
         "q": "What kind of tools does {user} prefer, and why?",
         "a": "Boring, well-documented tools, because {user} maintains it alone"},
        {"say": "I want everything reproducible from the repository — no clicking around in web consoles.",
         "q": "How does {user} want the infrastructure to be managed?",
         "a": "Reproducible from the repository, no manual console clicking"},
        {"say": "Please keep explanations short; I learn best from working examples.",
         "q": "How does {user} like explanations?", "a": "Short, with working examples"},
        {"say": "Honestly, I care more about fast page loads than about fancy features.",
         "q": "What does {user} prioritise over fancy features?", "a": "Fast page loads"},
        {"say": "I'm nervous about vendor lock-in, so I avoid proprietary managed services where I can.",
         "q": "Why does {user} avoid proprietary managed services?", "a": "Fear of vendor lock-in"},
    ],
    "ja": [
        {"say": "夜中にサーバーの面倒を見るくらいなら、毎月少し多く払う方がいいです。",
         "q": "{user}は保守の手間と費用について、どう考えている？", "a": "保守に手間をかけるより少し多く払う方がいい"},
        {"say": "一人で保守しているので、新しいツールより枯れていて資料の多いツールが好きです。",
         "q": "{user}はどんなツールを好む？その理由は？", "a": "枯れていて資料の多いツール。一人で保守しているから"},
        {"say": "全部リポジトリから再現できるようにしたいです。管理画面での手作業は避けたい。",
         "q": "{user}はインフラをどう管理したい？", "a": "リポジトリから再現できるようにし、手作業を避ける"},
        {"say": "説明は短めでお願いします。動く例から学ぶのが一番なので。",
         "q": "{user}はどんな説明を好む？", "a": "短く、動く例つき"},
        {"say": "正直、機能の多さよりページの表示速度の方が大事です。",
         "q": "{user}が機能の多さより優先するものは？", "a": "ページの表示速度"},
        {"say": "ベンダーロックインが怖いので、独自のマネージドサービスはなるべく避けたいです。",
         "q": "{user}が独自のマネージドサービスを避ける理由は？", "a": "ベンダーロックインが怖いから"},
    ],
}

# Code blocks shared by both languages ({svc}, {project} filled in); no slot value appears in them.
CODE: dict[str, tuple[str, str]] = {
    "compose": ("yaml", """services:
  {svc}:
    build: .
    env_file: .env
    restart: unless-stopped
    depends_on:
      - db
    healthcheck:
      test: ["CMD", "curl", "-fsS", "http://localhost:8000/health"]
      interval: 30s
      retries: 3
  db:
    image: postgres
    volumes:
      - dbdata:/var/lib/postgresql/data
volumes:
  dbdata: {}"""),
    "nginx": ("nginx", """server {
    listen 443 ssl http2;
    server_name _;
    client_max_body_size 20m;

    location / {
        proxy_pass http://{svc}:8000;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_read_timeout 60s;
    }
}"""),
    "pytest": ("python", """import pytest


@pytest.fixture
def client(app):
    return app.test_client()


def test_health_is_ok(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok\""""),
    "migration": ("sql", """BEGIN;
ALTER TABLE items ADD COLUMN archived_at timestamptz;
CREATE INDEX CONCURRENTLY IF NOT EXISTS items_owner_idx ON items (owner_id);
UPDATE items SET archived_at = now() WHERE state = 'archived';
COMMIT;"""),
    "logging": ("python", """import logging
import sys

logging.basicConfig(
    stream=sys.stdout,
    level=logging.INFO,
    format="%(asctime)s %(levelname)s %(name)s %(message)s",
)
log = logging.getLogger("{svc}")
log.info("starting", extra={"component": "{svc}"})"""),
    "backup": ("bash", """#!/usr/bin/env bash
set -euo pipefail
stamp=$(date +%Y%m%d-%H%M)
pg_dump --format=custom --file="/backups/{svc}-$stamp.dump" "$DATABASE_URL"
find /backups -name '*.dump' -mtime +14 -delete
restic backup /backups --tag nightly"""),
    "settings": ("python", """from pydantic_settings import BaseSettings


class Settings(BaseSettings):
    database_url: str
    secret_key: str
    debug: bool = False
    request_timeout_s: float = 10.0

    model_config = {"env_file": ".env"}


settings = Settings()"""),
    "systemd": ("ini", """[Unit]
Description={svc} service
After=network-online.target

[Service]
User=deploy
WorkingDirectory=/srv/{svc}
ExecStart=/srv/{svc}/.venv/bin/python -m {svc}
Restart=on-failure

[Install]
WantedBy=multi-user.target"""),
    "makefile": ("makefile", """.PHONY: lint test release

lint:
\truff check .
\truff format --check .

test:
\tpytest -q --maxfail=1

release: lint test
\tgit tag -s v$(VERSION) -m "release $(VERSION)\""""),
    "job": ("python", """def process(job_id: str) -> None:
    job = load_job(job_id)
    if job.done:
        return  # retried delivery: already handled
    for attempt in range(3):
        try:
            run(job)
            break
        except TransientError:
            sleep(2 ** attempt)
    mark_done(job_id)"""),
    "profile": ("bash", """python -m cProfile -o profile.out -m {svc}.cli import sample.csv
python -c "import pstats; pstats.Stats('profile.out').sort_stats('cumtime').print_stats(15)\""""),
    "firewall": ("bash", """sudo ufw default deny incoming
sudo ufw allow OpenSSH
sudo ufw allow 443/tcp
sudo ufw enable
sudo sed -i 's/^#\\?PasswordAuthentication.*/PasswordAuthentication no/' /etc/ssh/sshd_config
sudo systemctl reload ssh"""),
}


def _topic(title, ask, sentences, items, code):
    return {"title": title, "ask": ask, "sentences": sentences, "items": items, "code": code}


TOPICS: dict[str, list[dict]] = {
    "en": [
        _topic("Compose layout", "the Docker Compose layout", [
            "Keep one service per container and let Compose wire them together through its internal network.",
            "The {svc} service should only depend on things it really needs at start-up, otherwise restarts cascade.",
            "Health checks matter more than people think, because depends_on alone only waits for the container to exist.",
            "Put secrets in an env file that is not committed, and commit an example file with dummy values next to it.",
            "Named volumes survive a rebuild, bind mounts are easier to inspect; for the database, prefer a named volume.",
            "Once the file grows past a hundred lines, split development overrides into a second file.",
            "Pin image digests in production so a rebuild next month gives you the same bits.",
            "It is worth running the whole stack once from a clean clone to catch anything that only works on your laptop.",
        ], [
            "one process per container", "health checks on every service", "an example env file in the repository",
            "named volumes for anything stateful", "a separate override file for development",
            "restart policies that match how critical the service is",
        ], ["compose"]),
        _topic("Reverse proxy and TLS", "the reverse proxy and TLS", [
            "Terminate TLS at the proxy and talk plain HTTP to the {svc} container on the internal network.",
            "Automatic certificate renewal is the part that silently breaks, so add a check that alerts two weeks before expiry.",
            "Set the forwarded headers explicitly; otherwise the application logs the proxy's address for every request.",
            "Raise the body size limit only on the upload route instead of globally.",
            "HTTP/2 is free once TLS is in place and noticeably helps pages with many small assets.",
            "Keep the proxy configuration in the repository and reload it, never edit it in place on the server.",
            "A short read timeout protects the workers from slow clients, but long exports may need their own route.",
        ], [
            "redirect plain HTTP to HTTPS", "renew certificates automatically and alert on failures",
            "forward the client address and protocol", "set sensible timeouts per route",
            "enable compression for text responses", "serve static files from the proxy directly",
        ], ["nginx"]),
        _topic("Database migrations", "database migrations", [
            "Every schema change goes through a migration file that is reviewed like any other code.",
            "Make migrations additive first: add the new column, deploy code that writes both, then remove the old one later.",
            "Creating an index concurrently avoids locking the table, at the cost of not being allowed inside some transactions.",
            "Test the downgrade path at least once, even if you never plan to use it in production.",
            "Large backfills belong in a background job that works in batches, not inside the migration itself.",
            "Name migrations after what they do, not after the ticket number, so the history stays readable.",
            "Run the migrations against a copy of production data before the release to see how long they take.",
        ], [
            "one migration per logical change", "additive changes before destructive ones",
            "backfills in batches outside the migration", "a dry run on a copy of real data",
            "a tested downgrade path", "migrations run by the deploy, never by hand",
        ], ["migration"]),
        _topic("Testing strategy", "the testing strategy", [
            "Start with a handful of end-to-end tests for the paths that make money or lose data.",
            "Unit tests pay off for pure logic such as pricing, parsing and permission checks.",
            "Tests that talk to a real database catch far more bugs than tests against mocks of it.",
            "Keep the suite fast enough that you run it before every push; otherwise it will rot.",
            "A flaky test is a bug report about either the test or the code, so never just retry it.",
            "Fixtures that build data through the public API stay valid when the schema changes.",
            "Measure coverage to find blind spots, not as a target to hit.",
        ], [
            "end-to-end tests for the critical paths", "unit tests for pure logic",
            "a real database in integration tests", "a suite that runs in a few minutes",
            "no retries for flaky tests", "fixtures built through the public API",
        ], ["pytest", "makefile"]),
        _topic("Logging and error tracking", "logging and error tracking", [
            "Log to standard output and let the platform collect it; files inside containers get lost.",
            "Structured logs with a request id make it possible to follow one request across services.",
            "Log at INFO what an operator needs, and at DEBUG what a developer needs; nothing more at INFO.",
            "Never log secrets or full request bodies, and scrub email addresses from error reports.",
            "An error tracker groups exceptions so you see ten distinct problems instead of ten thousand lines.",
            "Set up a weekly glance at the top errors; most of them are cheap to fix once you look.",
            "Rotate and expire logs on the host so a noisy bug cannot fill the disk.",
        ], [
            "logs to standard output", "a request id in every line", "no secrets in logs",
            "an error tracker with grouping", "a weekly review of the top errors", "log rotation on the host",
        ], ["logging"]),
        _topic("Backups and restore drills", "backups and restores", [
            "A backup you have never restored is a hope, not a backup.",
            "Keep at least one copy off the machine, ideally with a different provider.",
            "Encrypt backups before they leave the server and store the key somewhere you can reach when the server is gone.",
            "Dump the database in the custom format so you can restore single tables when needed.",
            "Schedule a restore drill every quarter and write down how long it took.",
            "Retention is a trade-off between storage cost and how far back you may need to go; two weeks of dailies is a good start.",
            "Alert when a backup job did not run, not only when it failed.",
        ], [
            "an off-site copy", "encryption before upload", "a documented restore procedure",
            "a quarterly restore drill", "alerts for missing backups", "a retention policy written down",
        ], ["backup"]),
        _topic("Configuration and secrets", "configuration and secrets", [
            "Read every setting from the environment and validate it once at start-up.",
            "A typed settings object fails fast when a variable is missing instead of crashing on the first request.",
            "Secrets should never be committed, not even in a private repository.",
            "Keep the list of variables documented next to the code that reads them.",
            "Rotate credentials when someone leaves, and make rotation a script rather than a memory.",
            "Different environments should differ only in configuration, never in code paths.",
            "Defaults belong in code for harmless settings and nowhere for secrets.",
        ], [
            "settings validated at start-up", "no secrets in the repository", "a documented list of variables",
            "a script to rotate credentials", "the same code path in every environment",
        ], ["settings"]),
        _topic("Background jobs", "background jobs", [
            "Anything slower than a second or depending on a third party belongs in a background job.",
            "Make jobs idempotent, because every queue delivers some messages twice.",
            "Retries need a backoff and a limit, and the last failure should land somewhere you will see it.",
            "Pass ids to jobs, not whole objects, so a job always works on fresh data.",
            "Long jobs should report progress so a stuck one can be told apart from a slow one.",
            "Scheduled jobs need a lock so that two workers do not run the same schedule at once.",
            "Keep the worker's code in the same repository and deploy it together with the web service.",
        ], [
            "idempotent jobs", "retries with backoff and a limit", "ids instead of objects in messages",
            "progress reporting for long jobs", "a lock for scheduled jobs", "a dead-letter place for failures",
        ], ["job", "systemd"]),
        _topic("Performance profiling", "performance profiling", [
            "Measure before optimising; the slow part is rarely where you expect it.",
            "Most slow pages come from the number of queries, not from the speed of each one.",
            "Profile with realistic data volumes, because an empty table hides every missing index.",
            "Cache computed results close to where they are used, and give every cache entry an expiry.",
            "Look at the slowest one percent of requests, not the average.",
            "Write the numbers down before and after each change so you know what actually helped.",
            "Pagination and streaming fix more memory problems than bigger machines do.",
        ], [
            "a baseline measurement first", "query counts per request", "realistic data volumes",
            "the slowest one percent of requests", "before-and-after numbers for every change",
        ], ["profile"]),
        _topic("Server hardening", "server hardening", [
            "Disable password logins over SSH and use keys only.",
            "A default-deny firewall with a short allow list is easier to reason about than a long deny list.",
            "Turn on unattended security updates and reboot during a quiet window each month.",
            "Run services as an unprivileged user with only the directories they need.",
            "Keep an inventory of what runs on the machine; forgotten services are the usual way in.",
            "Fail2ban or a similar tool cuts the noise from brute-force attempts in the logs.",
            "Test that you can still log in from a second session before closing the one that changed SSH settings.",
        ], [
            "key-only SSH", "a default-deny firewall", "automatic security updates",
            "services as unprivileged users", "an inventory of running services", "brute-force protection",
        ], ["firewall", "systemd"]),
        _topic("Git workflow and releases", "the Git workflow and releases", [
            "Short-lived branches merged within a day or two keep conflicts small.",
            "Every merge to the main branch should be deployable, even if the feature behind it is switched off.",
            "Tag releases and generate the changelog from commit messages so nobody has to remember.",
            "Small commits with messages that say why make later debugging much faster.",
            "Protect the main branch so that a failing pipeline blocks the merge.",
            "Keep a one-page release checklist and improve it after every release that went wrong.",
            "Feature flags let you deploy unfinished work safely, but remove them once the feature is done.",
        ], [
            "short-lived branches", "a protected main branch", "signed release tags",
            "a changelog from commit messages", "a release checklist", "feature flags with an end date",
        ], ["makefile"]),
    ],
    "ja": [
        _topic("Composeの構成", "Docker Composeの構成", [
            "コンテナ一つにつきサービス一つにして、Composeの内部ネットワークでつなぐのが基本です。",
            "{svc}サービスは起動時に本当に必要なものだけに依存させないと、再起動が連鎖してしまいます。",
            "depends_onだけではコンテナの存在しか待たないので、ヘルスチェックを必ず設定しておきましょう。",
            "秘密情報はコミットしないenvファイルに置き、ダミー値を入れた見本ファイルを隣にコミットします。",
            "データベースには、再ビルドしても消えない名前付きボリュームを使うのがおすすめです。",
            "ファイルが百行を超えてきたら、開発用の上書き設定を別ファイルに分けると読みやすくなります。",
            "本番ではイメージのダイジェストを固定しておくと、来月ビルドしても同じものが手に入ります。",
            "一度まっさらなクローンからスタック全体を起動して、自分のPCでしか動かない部分がないか確かめてください。",
        ], [
            "コンテナ一つにプロセス一つ", "全サービスにヘルスチェック", "リポジトリにenvの見本ファイル",
            "状態を持つものは名前付きボリューム", "開発用の上書きファイルを分ける", "重要度に合わせた再起動ポリシー",
        ], ["compose"]),
        _topic("リバースプロキシとTLS", "リバースプロキシとTLS", [
            "TLSはプロキシで終端し、内部ネットワークでは{svc}コンテナと平文のHTTPで通信します。",
            "証明書の自動更新は黙って壊れがちなので、期限の二週間前に通知する仕組みを入れておきましょう。",
            "転送ヘッダーを明示的に設定しないと、アプリのログに全部プロキシのアドレスが残ってしまいます。",
            "リクエストボディの上限は全体ではなく、アップロード用のルートだけで引き上げるのが安全です。",
            "TLSを入れればHTTP/2はほぼ無料で使え、小さなファイルが多いページでは効果がはっきり出ます。",
            "プロキシの設定はリポジトリで管理し、サーバー上で直接編集しないようにしてください。",
            "読み込みタイムアウトを短くすると遅いクライアントからワーカーを守れますが、大きなエクスポートには専用のルートが必要です。",
        ], [
            "HTTPはHTTPSへリダイレクト", "証明書の自動更新と失敗時の通知", "クライアントのアドレスとプロトコルを転送",
            "ルートごとに適切なタイムアウト", "テキスト応答の圧縮", "静的ファイルはプロキシから直接配信",
        ], ["nginx"]),
        _topic("DBマイグレーション", "DBマイグレーション", [
            "スキーマの変更はすべてマイグレーションファイルを通し、普通のコードと同じようにレビューします。",
            "まず追加だけの変更にして、新旧両方に書き込むコードを出し、古いカラムは後で消すのが安全な順番です。",
            "インデックスをCONCURRENTLYで作ればテーブルをロックせずに済みますが、トランザクションの中では使えない場合があります。",
            "本番で使う予定がなくても、ダウングレードの手順は一度は試しておきましょう。",
            "大きなバックフィルはマイグレーションの中ではなく、バッチで動くバックグラウンドジョブに任せます。",
            "マイグレーションの名前はチケット番号ではなく中身を表すものにすると、履歴が読みやすくなります。",
            "リリース前に本番データのコピーに対して実行し、どれくらい時間がかかるかを測っておくと安心です。",
        ], [
            "論理的な変更一つにマイグレーション一つ", "破壊的な変更より先に追加の変更", "バックフィルはバッチで別に実行",
            "実データのコピーでリハーサル", "ダウングレード手順の確認", "手作業ではなくデプロイで実行",
        ], ["migration"]),
        _topic("テスト戦略", "テスト戦略", [
            "まずは売上やデータ消失に直結する流れについて、少数のエンドツーエンドテストから始めましょう。",
            "料金計算やパース処理、権限チェックのような純粋なロジックには単体テストが効きます。",
            "モックではなく本物のデータベースにつなぐテストの方が、ずっと多くのバグを見つけてくれます。",
            "プッシュの前に毎回回せるくらい速く保たないと、テストはそのうち放置されます。",
            "不安定なテストはテストかコードのどちらかのバグ報告なので、単にリトライするのはやめましょう。",
            "公開APIを通してデータを作るフィクスチャは、スキーマが変わっても壊れにくいです。",
            "カバレッジは目標値ではなく、見落としを探すための道具として使うのがいいと思います。",
        ], [
            "重要な流れにエンドツーエンドテスト", "純粋なロジックに単体テスト", "結合テストでは本物のDB",
            "数分で終わるテストスイート", "不安定なテストをリトライで隠さない", "公開API経由のフィクスチャ",
        ], ["pytest", "makefile"]),
        _topic("ログとエラー追跡", "ログとエラー追跡", [
            "ログは標準出力に出してプラットフォームに集めてもらいましょう。コンテナ内のファイルは失われがちです。",
            "リクエストIDつきの構造化ログにすると、一つのリクエストを複数のサービスにまたがって追えます。",
            "INFOには運用者が必要な情報、DEBUGには開発者が必要な情報だけを出すようにします。",
            "秘密情報やリクエスト本文をそのままログに出さず、エラー報告からはメールアドレスを消してください。",
            "エラー追跡ツールを使うと、一万行のログではなく十種類の問題として見えるようになります。",
            "週に一度、上位のエラーを眺める時間を取ると、たいていはすぐ直せるものが見つかります。",
            "ホスト側でログのローテーションと期限切れ削除を設定し、うるさいバグでディスクが埋まらないようにします。",
        ], [
            "ログは標準出力へ", "すべての行にリクエストID", "ログに秘密情報を出さない",
            "グルーピングできるエラー追跡", "上位エラーの週次確認", "ホストでのログローテーション",
        ], ["logging"]),
        _topic("バックアップと復元訓練", "バックアップと復元", [
            "一度も復元したことのないバックアップは、バックアップではなくただの願望です。",
            "少なくとも一つのコピーはマシンの外、できれば別の事業者に置いておきましょう。",
            "バックアップはサーバーから出す前に暗号化し、鍵はサーバーが無くなっても取り出せる場所に保管します。",
            "データベースはカスタム形式でダンプしておくと、必要なときにテーブル単位で復元できます。",
            "四半期ごとに復元訓練を行い、かかった時間を記録しておくと本番で慌てません。",
            "保持期間は保存コストとどこまで遡りたいかのトレードオフで、まずは日次を二週間分から始めるのが無難です。",
            "バックアップが失敗したときだけでなく、実行されなかったときにも通知が来るようにしましょう。",
        ], [
            "マシン外へのコピー", "アップロード前の暗号化", "文書化された復元手順",
            "四半期ごとの復元訓練", "実行漏れの通知", "明文化した保持ポリシー",
        ], ["backup"]),
        _topic("設定とシークレット管理", "設定とシークレット管理", [
            "設定はすべて環境変数から読み、起動時に一度だけ検証します。",
            "型つきの設定オブジェクトにしておけば、変数が足りないときに最初のリクエストではなく起動時に失敗してくれます。",
            "秘密情報は、たとえプライベートリポジトリでもコミットしてはいけません。",
            "環境変数の一覧は、それを読むコードのすぐそばに文書として残しておきましょう。",
            "メンバーが抜けたら認証情報を入れ替えます。その手順は記憶ではなくスクリプトにしておくべきです。",
            "環境ごとの違いは設定だけにして、コードの分岐で環境を見分けないようにします。",
            "無害な設定の既定値はコードに書いて構いませんが、秘密情報には既定値を置きません。",
        ], [
            "起動時の設定検証", "リポジトリに秘密情報を置かない", "環境変数の一覧を文書化",
            "認証情報の入れ替えスクリプト", "どの環境でも同じコードパス",
        ], ["settings"]),
        _topic("バックグラウンドジョブ", "バックグラウンドジョブ", [
            "一秒以上かかる処理や外部サービスに依存する処理は、バックグラウンドジョブに回します。",
            "キューはどうしても同じメッセージを二回届けることがあるので、ジョブは冪等にしておきます。",
            "リトライにはバックオフと上限を設け、最後の失敗は必ず目に入る場所に残しましょう。",
            "ジョブにはオブジェクトそのものではなくIDを渡すと、いつも新しいデータで処理できます。",
            "長いジョブは進捗を報告させると、止まっているのか遅いだけなのかを見分けられます。",
            "定期ジョブにはロックを掛けて、二つのワーカーが同じスケジュールを同時に走らせないようにします。",
            "ワーカーのコードは同じリポジトリに置き、Webサービスと一緒にデプロイするのが楽です。",
        ], [
            "冪等なジョブ", "バックオフと上限つきのリトライ", "メッセージにはIDを渡す",
            "長いジョブの進捗報告", "定期ジョブのロック", "失敗したジョブの置き場所",
        ], ["job", "systemd"]),
        _topic("パフォーマンス計測", "パフォーマンス計測", [
            "最適化の前にまず測りましょう。遅い場所はたいてい予想とは違うところにあります。",
            "遅いページの多くは、クエリ一つの速さではなくクエリの回数が原因です。",
            "空のテーブルでは足りないインデックスが全部隠れてしまうので、現実的なデータ量で計測します。",
            "計算結果は使う場所の近くでキャッシュし、すべてのエントリに有効期限を付けてください。",
            "平均ではなく、遅い方から一パーセントのリクエストを見るのが大事です。",
            "変更の前後で数字を記録しておくと、何が本当に効いたのかが分かります。",
            "メモリの問題は、大きなマシンよりもページングやストリーミングで解決することの方が多いです。",
        ], [
            "最初に基準値を測る", "リクエストごとのクエリ数", "現実的なデータ量",
            "遅い方から一パーセントのリクエスト", "変更ごとの前後比較",
        ], ["profile"]),
        _topic("サーバーの堅牢化", "サーバーの堅牢化", [
            "SSHのパスワードログインは無効にして、鍵認証だけにします。",
            "長い拒否リストより、既定で全部拒否して短い許可リストを持つファイアウォールの方が理解しやすいです。",
            "セキュリティ更新は自動適用にして、毎月静かな時間帯に再起動しましょう。",
            "サービスは権限のないユーザーで動かし、必要なディレクトリだけに触れられるようにします。",
            "マシンで何が動いているかの一覧を持っておきましょう。忘れられたサービスはよく侵入口になります。",
            "fail2banのような仕組みを入れると、総当たり攻撃のノイズがログから減ります。",
            "SSHの設定を変えたら、そのセッションを閉じる前に別のセッションからログインできるか確かめてください。",
        ], [
            "鍵だけのSSH", "既定拒否のファイアウォール", "セキュリティ更新の自動適用",
            "権限のないユーザーでサービスを実行", "稼働中サービスの一覧", "総当たり攻撃への対策",
        ], ["firewall", "systemd"]),
        _topic("Gitの運用とリリース", "Gitの運用とリリース", [
            "ブランチは一日か二日でマージできる短いものにすると、コンフリクトが小さく済みます。",
            "メインブランチへのマージは、機能がオフになっていてもいつでもデプロイできる状態にしておきます。",
            "リリースにはタグを付け、変更履歴はコミットメッセージから生成すれば誰も覚えておく必要がありません。",
            "理由を書いた小さなコミットは、後からのデバッグを大きく速くしてくれます。",
            "パイプラインが失敗したらマージできないように、メインブランチを保護しましょう。",
            "一枚のリリースチェックリストを用意し、うまくいかなかったリリースのたびに改善していきます。",
            "フィーチャーフラグを使えば未完成の機能も安全にデプロイできますが、完成したら必ず外してください。",
        ], [
            "短命なブランチ", "保護されたメインブランチ", "署名つきのリリースタグ",
            "コミットメッセージからの変更履歴", "リリースチェックリスト", "期限つきのフィーチャーフラグ",
        ], ["makefile"]),
    ],
}


@dataclass(frozen=True)
class Hardness:
    """What turns a conversation into a real assistant history, where ranking and not the budget decides: the
    ``HARD`` profile's knobs (DEFAULT and MINI have none, and their files stay byte for byte what they were)."""

    min_turns: int  # sessions get more exchanges until the conversation has this many turns
    double_updates: int  # update slots changed twice: a history over three sessions
    distractors: tuple[int, int]  # fact-like sentences with another value in one reply …
    distractor_share: float  # … in this share of the replies
    user_distractor_share: float  # a user turn that mentions another project's value
    mentions: tuple[int, int]  # sentences naming a fact's noun without its value, per reply
    follow_up_share: float  # asks of a session after its first that return to the session's theme
    fact_positions: tuple[str, ...]  # where in its reply a fact is said (drawn uniformly from this)
    fact_reply_min: float  # a reply holding a fact is at least this many times the shortest reply
    pair_questions: int  # two facts from two sessions
    triple_questions: int  # three facts from three sessions
    order_questions: int  # before/after, which first, days between
    when_questions: int
    min_per_category: dict[int, int]


@dataclass(frozen=True)
class Profile:
    """How big one conversation is; ``DEFAULT`` for the benchmark, ``MINI`` for the test file, ``HARD`` for a
    benchmark set the size and clutter of a real assistant history."""

    sessions: tuple[int, int]
    span_days: tuple[int, int]
    pairs_per_session: tuple[int, int]
    max_turns: int
    choice_slots: int
    update_slots: tuple[int, int]
    plain_slots: tuple[int, int]
    preferences: int
    questions: tuple[int, int]
    reply_tokens: dict[str, tuple[int, int]]
    degenerate_chars: tuple[int, int] | None
    hard: Hardness | None = None


DEFAULT = Profile(
    sessions=(8, 12), span_days=(28, 70), pairs_per_session=(2, 3), max_turns=60, choice_slots=2,
    update_slots=(3, 4), plain_slots=(5, 6), preferences=2, questions=(20, 30),
    reply_tokens={"en": (200, 2000), "ja": (400, 4000)}, degenerate_chars=(60_000, 150_000),
)
MINI = Profile(
    sessions=(4, 5), span_days=(14, 35), pairs_per_session=(2, 3), max_turns=30, choice_slots=1,
    update_slots=(2, 2), plain_slots=(3, 3), preferences=1, questions=(10, 14),
    reply_tokens={"en": (200, 900), "ja": (400, 2200)}, degenerate_chars=None,
)
HARD = Profile(
    sessions=(22, 30), span_days=(60, 120), pairs_per_session=(3, 6), max_turns=300, choice_slots=4,
    update_slots=(7, 8), plain_slots=(11, 13), preferences=4, questions=(30, 45),
    reply_tokens={"en": (200, 2000), "ja": (400, 4000)}, degenerate_chars=(60_000, 150_000),
    hard=Hardness(
        min_turns=200, double_updates=3, distractors=(1, 3), distractor_share=0.85, user_distractor_share=0.25,
        mentions=(0, 2), follow_up_share=0.7, fact_positions=("start", "middle", "middle", "middle", "end"),
        fact_reply_min=2.0, pair_questions=6, triple_questions=3, order_questions=7, when_questions=4,
        min_per_category={4: 8, 6: 6, 1: 7, 2: 6, 3: 3},
    ),
)
PROFILES = {"default": DEFAULT, "hard": HARD}


@dataclass
class Event:
    """Something said in one turn: a fact, a change, two candidates, a preference."""

    kind: str  # state | update | update2 (a second change) | consider | decide | prefer
    slot: str
    value: str
    session: int
    by_user: bool
    old: str = ""
    other: str = ""  # the second candidate of a consider event
    reason: str = ""
    dia_id: str = ""
    date: datetime | None = None


@dataclass
class _Plan:
    language: str
    user: str
    project: str
    deadline_what: str
    dates: list[datetime]
    events: list[Event] = field(default_factory=list)
    degenerate_session: int | None = None
    degenerate_fact: Event | None = None


def locomo_when(at: datetime) -> str:
    """'1:56 pm on 8 May, 2023': LoCoMo's own date format, for both languages (``parse_when`` reads it)."""
    hour = at.hour % 12 or 12
    return f"{hour}:{at.minute:02d} {'am' if at.hour < 12 else 'pm'} on {at.day} {MONTHS_EN[at.month - 1]}, {at.year}"


def _date_answer(at: datetime, language: str) -> str:
    return f"{at.year}年{at.month}月{at.day}日" if language == "ja" else f"{at.day} {MONTHS_EN[at.month - 1]}, {at.year}"


def _fill(template: str, **values: str) -> str:
    # str.replace, not str.format: code templates are full of braces
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def _noun(slot: Slot, plan: _Plan) -> str:
    return _fill(slot.noun[plan.language], deadline=plan.deadline_what)


# ---------------------------------------------------------------------------------------------------- planning


def _values(rng: random.Random, slot: Slot, language: str, start: datetime) -> list[str]:
    if slot.key in DATE_SLOTS:
        days = rng.sample(range(20, 140), 6)
        dates = [start + timedelta(days=d) for d in days]
        return [f"{d.month}月{d.day}日" if language == "ja" else f"{MONTHS_EN[d.month - 1]} {d.day}" for d in dates]
    pool = list(slot.values[language] if isinstance(slot.values, dict) else slot.values)
    rng.shuffle(pool)
    return pool


def _plan(rng: random.Random, language: str, index: int, profile: Profile, degenerate: bool) -> _Plan:
    scenario = SCENARIOS[language][index % len(SCENARIOS[language])]
    user = scenario["users"][(index // len(SCENARIOS[language])) % len(scenario["users"])]
    n = rng.randint(*profile.sessions)
    span = max(rng.randint(*profile.span_days), n)
    start = datetime(2024, 1, 8) + timedelta(days=rng.randint(0, 300))
    offsets = sorted([0, span] + rng.sample(range(1, span), n - 2))
    dates = [start + timedelta(days=o, hours=rng.randint(8, 22), minutes=rng.randint(0, 59)) for o in offsets]
    plan = _Plan(language, user, scenario["project"], scenario["deadline"], dates)

    keys = list(SLOTS) + (list(HARD_SLOTS) if profile.hard else [])
    rng.shuffle(keys)
    choice = [k for k in keys if ALL_SLOTS[k].can_choose][: profile.choice_slots]
    update = [k for k in keys if ALL_SLOTS[k].can_update and k not in choice][: rng.randint(*profile.update_slots)]
    plain = [k for k in keys if k not in choice and k not in update][: rng.randint(*profile.plain_slots)]
    for key in choice:
        a, b = _values(rng, ALL_SLOTS[key], language, start)[:2]
        consider = rng.randint(0, n - 2)
        decide = rng.randint(consider + 1, n - 1)
        reason = rng.choice(TEXT[language]["reasons"])
        plan.events.append(Event("consider", key, a, consider, False, other=b))
        plan.events.append(Event("decide", key, a, decide, rng.random() < 0.6, reason=reason))
    for i, key in enumerate(update):
        if profile.hard:
            plan.events.extend(_changes(rng, key, language, start, n, 3 if i < profile.hard.double_updates else 2))
            continue
        old, new = _values(rng, ALL_SLOTS[key], language, start)[:2]
        first = rng.randint(0, n - 2)
        later = rng.randint(first + 1, n - 1)
        plan.events.append(Event("state", key, old, first, rng.random() < 0.3))
        plan.events.append(Event("update", key, new, later, rng.random() < 0.5, old=old))
    for key in plain:
        value = _values(rng, ALL_SLOTS[key], language, start)[0]
        plan.events.append(Event("state", key, value, rng.randint(0, n - 1), rng.random() < 0.3))
    for pref in rng.sample(range(len(PREFERENCES[language])), profile.preferences):
        plan.events.append(Event("prefer", f"pref{pref}", str(pref), rng.randint(0, n - 1), True))
    if degenerate and plain:
        # the fact next to the giant reply: said by the assistant in a normal reply of the same session
        plan.degenerate_session = rng.randint(1, n - 1)
        fact = next(e for e in plan.events if e.slot == plain[0])
        fact.session, fact.by_user = plan.degenerate_session, False
        plan.degenerate_fact = fact
    return plan


def _changes(rng: random.Random, key: str, language: str, start: datetime, n: int, said: int) -> list[Event]:
    """A value stated, then changed once or twice, each in a later session (HARD: sessions anywhere, not packed
    at the start)."""
    values = _values(rng, ALL_SLOTS[key], language, start)[:said]
    sessions = sorted(rng.sample(range(n), said))
    events = [Event("state", key, values[0], sessions[0], rng.random() < 0.3)]
    for k in range(1, said):
        events.append(Event("update" if k == 1 else "update2", key, values[k], sessions[k], rng.random() < 0.5,
                            old=values[k - 1]))
    return events


def _used_values(plan: _Plan) -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for e in plan.events:
        used.setdefault(e.slot, set()).update(v for v in (e.value, e.old, e.other) if v)
    return used


# ---------------------------------------------------------------------------------------------------- turns


def _event_sentence(rng: random.Random, e: Event, plan: _Plan) -> str:
    if e.kind == "prefer":
        return PREFERENCES[plan.language][int(e.value)]["say"]
    slot, t = ALL_SLOTS[e.slot], TEXT[plan.language]
    noun = _noun(slot, plan)
    if e.kind == "consider":
        a, b = rng.sample([e.value, e.other], 2)  # the one picked later is not always named first
        return _fill(rng.choice(t["consider"]), noun=noun, a=a, b=b)
    if e.kind == "decide":
        return _fill(rng.choice(t["decide"]), noun=noun, value=e.value, reason=e.reason)
    if e.kind in ("update", "update2"):
        return _fill(rng.choice(t["update"]), noun=noun, value=e.value, old=e.old)
    templates = slot.say[plan.language] + t["state_user" if e.by_user else "state_assistant"]
    return _fill(rng.choice(templates), noun=noun, value=e.value, deadline=plan.deadline_what)


def _distractor(rng: random.Random, plan: _Plan, used: dict[str, set[str]], start: datetime) -> str | None:
    """A sentence with the same kind of value as a fact of this conversation, but a different one."""
    key = rng.choice(sorted(used))
    if key.startswith("pref"):
        return None
    slot = ALL_SLOTS[key]
    free = [v for v in _values(rng, slot, plan.language, start) if v not in used[key]]
    if not free:
        return None
    return _fill(rng.choice(TEXT[plan.language]["distractor"]), noun=_noun(slot, plan), value=free[0])


def _fact_keys(used: dict[str, set[str]]) -> list[str]:
    return sorted(k for k in used if not k.startswith("pref"))


def _lookalike(rng: random.Random, plan: _Plan, used: dict[str, set[str]], start: datetime) -> str | None:
    """HARD's distractor: one of a fact's own sentences with a value this conversation never gives that fact,
    said of another context ("For the other team's project, the staging database listens on port 6543."), so
    that the words of the fact's question match it as well as they match the fact."""
    key = rng.choice(_fact_keys(used))
    slot, h = ALL_SLOTS[key], hard_text.TEXT[plan.language]
    free = [v for v in _values(rng, slot, plan.language, start) if v not in used[key]]
    if not free:
        return None
    template = rng.choice(slot.say[plan.language] + h["plain"])
    context, tail = rng.choice(h["contexts"]), rng.choice(h["tails"])
    # "The staging …" → "the staging …"; "CI runs …" and a value first ("Rafael reviews …") stay as they are
    if plan.language == "en" and template[:1].isupper() and template[1:2].islower():
        template = template[0].lower() + template[1:]
    statement = _fill(template, noun=_noun(slot, plan), value=free[0], deadline=plan.deadline_what)
    return f"{context}、{statement}{tail}" if plan.language == "ja" else f"{context}, {statement}{tail}"


def _mention(rng: random.Random, plan: _Plan, used: dict[str, set[str]]) -> str:
    """A sentence naming a fact's noun without any value (HARD): the question's words, no answer."""
    slot = ALL_SLOTS[rng.choice(_fact_keys(used))]
    return _fill(rng.choice(hard_text.TEXT[plan.language]["mentions"]), noun=_noun(slot, plan))


def _themes(rng: random.Random, language: str, n: int) -> list[dict]:
    """HARD: one filler topic per session, every topic coming back in two or three sessions (near-duplicate
    sessions about the same thing, as real histories have)."""
    topics = TOPICS[language]
    themes = [topics[i % len(topics)] for i in range(n)]
    rng.shuffle(themes)
    return themes


def _paragraph(sentences: list[str], language: str, context: dict[str, str]) -> str:
    return (" " if language == "en" else "").join(_fill(s, **context) for s in sentences)


def _section(rng: random.Random, topic: dict, language: str, context: dict[str, str]) -> list[str]:
    """A heading, a paragraph, a list and/or a code block, and sometimes a second paragraph (no sentence twice)."""
    heading = rng.choice(["## {}", "### {}", "**{}**"])
    sentences = rng.sample(topic["sentences"], len(topic["sentences"]))
    cut = rng.randint(3, 4)
    blocks = [heading.format(topic["title"]), _paragraph(sentences[:cut], language, context)]
    shape = rng.choice(["list", "code", "both", "both"])
    if shape in ("list", "both"):
        items = rng.sample(topic["items"], rng.randint(3, len(topic["items"])))
        numbered = rng.random() < 0.4
        blocks.append("\n".join(f"{i}. {x}" if numbered else f"- {x}" for i, x in enumerate(items, 1)))
    if shape in ("code", "both"):
        lang, body = CODE[rng.choice(topic["code"])]
        blocks.append(f"```{lang}\n{_fill(body, **context)}\n```")
    if rng.random() < 0.5:
        blocks.append(_paragraph(sentences[cut:], language, context))
    return blocks


def _reply(rng: random.Random, plan: _Plan, profile: Profile, fact: str | None, asides: list[str],
           theme: dict | None = None) -> str:
    """A long markdown reply; the fact (if any) at the start, the middle or the end, alone or inside a paragraph;
    each aside (a distractor, a mention) inside a random paragraph; ``theme`` (HARD) is its first section."""
    language, t = plan.language, TEXT[plan.language]
    lo, hi = profile.reply_tokens[language]
    # mostly a few hundred words, now and then a very long one (real replies are skewed that way)
    target = int(lo * (hi * 0.8 / lo) ** (rng.random() ** 1.7))
    if profile.hard and fact:
        target = max(target, int(lo * profile.hard.fact_reply_min))
    context = {"svc": rng.choice(["api", "web", "worker", "app"]), "project": plan.project}
    topics = rng.sample(TOPICS[language], len(TOPICS[language]))
    if theme is not None:
        topics = [theme] + [x for x in topics if x is not theme]
    blocks = [rng.choice(t["openings"])]
    size = count_tokens(blocks[0])
    for topic in topics:
        section = _section(rng, topic, language, context)
        blocks.extend(section)
        size += sum(count_tokens(b) for b in section)
        if size >= target:
            break
    while size > hi * 0.9 and len(blocks) > 3:  # never above the range, even after the fact is added
        size -= count_tokens(blocks.pop())
    while blocks[-1].startswith(("#", "**")):  # no heading left without its section
        blocks.pop()
    blocks.append(rng.choice(t["closings"]))
    for aside in asides:
        paragraphs = [i for i, b in enumerate(blocks) if _is_prose(b)]
        at = rng.choice(paragraphs)
        blocks[at] = _join(blocks[at], aside, language, rng.random() < 0.5)
    if fact:
        where = rng.choice(profile.hard.fact_positions if profile.hard else ["start", "middle", "end"])
        prose = [i for i, b in enumerate(blocks) if _is_prose(b)] or [0]
        at = {"start": prose[0], "middle": prose[len(prose) // 2], "end": prose[-1]}[where]
        if rng.random() < 0.5:
            blocks[at] = _join(blocks[at], fact, language, where != "start")
        else:
            blocks.insert(at + (where != "start"), fact)
    return "\n\n".join(blocks)


def _is_prose(block: str) -> bool:
    return not block.startswith(("#", "-", "```", "**")) and not block[:1].isdigit()


def _join(paragraph: str, sentence: str, language: str, after: bool) -> str:
    sep = " " if language == "en" else ""
    return paragraph + sep + sentence if after else sentence + sep + paragraph


def _user_turn(rng: random.Random, plan: _Plan, topic: dict, fact: str | None, first: bool,
               follow_up: bool = False, aside: str | None = None) -> str:
    t = TEXT[plan.language]
    asks = hard_text.TEXT[plan.language]["follow_ups"] if follow_up else t["asks"]
    ask = _fill(rng.choice(asks), topic=topic["ask"], project=plan.project)
    parts = [rng.choice(t["greetings"])] if first and rng.random() < 0.6 else []
    parts += [fact, ask] if fact else [ask]
    if aside:
        parts.insert(len(parts) - 1, aside)
    return (" " if plan.language == "en" else "").join(parts)


def _degenerate(rng: random.Random, plan: _Plan, chars: int) -> str:
    """A pasted log or a giant generated table, ``chars`` characters long (within a line)."""
    t = TEXT[plan.language]
    if rng.random() < 0.5:
        head, open_, close = t["degenerate_log"], "```text", "```"
        levels = ["INFO", "INFO", "INFO", "DEBUG", "WARN"]
        line = lambda i: (f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i * 7 % 60:02d}:{i * 13 % 60:02d}Z "
                          f"{rng.choice(levels)} import[{i % 8}] row={i} batch={i // 250} status=ok "
                          f"checksum={rng.getrandbits(40):010x} elapsed_ms={rng.randint(3, 900)}")
    else:
        head, open_, close = t["degenerate_table"], t["table_header"], ""
        line = lambda i: (f"| {i} | item-{rng.getrandbits(24):06x} | {rng.choice(t['table_states'])} | "
                          f"{rng.randint(1, 9999) / 100:.2f} | {rng.randint(0, 500)} |")
    lines, size, i = [head, "", open_], len(head) + len(open_) + 2, 0
    while True:
        row = line(i)
        if size + len(row) + 1 + len(close) + 1 > chars:
            break
        lines.append(row)
        size += len(row) + 1
        i += 1
    if close:
        lines.append(close)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- questions

QTEXT: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "single": ("What is {noun}?", "Remind me, what is {noun}?", "Which value did we settle on for {noun}?"),
        "now": ("What is {noun} now?", "What is {noun} at the moment, after the latest change?",
                "Remind me of the current value of {noun}."),
        "before": ("What was {noun} before it was changed?", "Before the latest change, what was {noun}?"),
        "choice": ("Which two options did we weigh for {noun}, and which one did we pick?",
                   "What were the candidates for {noun}, and what did we settle on?"),
        "choice_answer": ("{a} and {b}; picked {a}",),
        "history": ("How did {noun} change over the project?", "What was {noun} at first, and what is it now?"),
        "history_answer": ("first {old}, later {new}",),
        "pair": ("What are {noun1} and {noun2}?", "Remind me of two things: {noun1} and {noun2}."),
        "pair_answer": ("{v1}; {v2}",),
        "why": ("Why did we choose {value} for {noun}?", "What was the main reason for picking {value}?"),
        "order": ("We {e1}: was that before or after we {e2}?", "Was it before or after we {e2} that we {e1}?"),
        "order_answer": ("before", "after"),
        "first": ("Which came first: we {e1}, or we {e2}?",),
        "when": ("What was the date when we {e}?", "On what date was it that we {e}?"),
        "gap": ("How many days passed between when we {e1} and when we {e2}?",),
        "gap_answer": ("{d} days",),
    },
    "ja": {
        "single": ("{noun}は何？", "{noun}は何にしたんだっけ？", "確認ですが、{noun}は？"),
        "now": ("今の{noun}は？", "現在の{noun}は何？", "最新の変更のあと、{noun}はどうなっている？"),
        "before": ("変更前の{noun}は何だった？", "{noun}は以前は何だった？"),
        "choice": ("{noun}の候補は何と何で、最終的にどれにした？", "{noun}はどの二つで迷って、どちらに決めた？"),
        "choice_answer": ("{a}と{b}。{a}に決めた",),
        "history": ("{noun}はどう変わった？", "{noun}は最初は何で、今は何？"),
        "history_answer": ("最初は{old}、その後{new}",),
        "pair": ("{noun1}と{noun2}はそれぞれ何？",),
        "pair_answer": ("{v1}、{v2}",),
        "why": ("{noun}に{value}を選んだ理由は？", "{value}に決めた一番の理由は？"),
        "order": ("{e1}のは、{e2}のより前？後？",),
        "order_answer": ("前", "後"),
        "first": ("{e1}のと、{e2}のでは、どちらが先？",),
        "when": ("{e}のはいつ？", "いつ{e}んだっけ？"),
        "gap": ("{e1}日から、{e2}日まで何日あった？",),
        "gap_answer": ("{d}日",),
    },
}
for _language, _kinds in hard_text.QTEXT.items():  # HARD's three-session questions
    QTEXT[_language].update(_kinds)
# the least of each category a conversation asks (the rest is drawn at random up to the profile's count)
MIN_PER_CATEGORY = {4: 3, 6: 2, 1: 2, 2: 2, 3: 1}


@dataclass
class _Candidate:
    category: int
    question: str
    answer: str
    evidence: list[str]
    extra: dict = field(default_factory=dict)
    required: bool = False


def _deed(e: Event, plan: _Plan, unnamed: set[str] | frozenset[str] = frozenset()) -> str:
    """The deed a temporal question names: "set the staging database port to 6543"; for a slot in ``unnamed``
    (HARD: a value never changed) without its value — "settled the staging database port" —, as people ask, so
    that the value's words do not lead straight to the turn."""
    if e.slot in unnamed:
        return _fill(hard_text.TEXT[plan.language]["settled"][0], noun=_noun(ALL_SLOTS[e.slot], plan))
    return _fill(ALL_SLOTS[e.slot].event[plan.language], value=e.value, deadline=plan.deadline_what)


def _changed_twice(c: dict[str, Event], plan: _Plan, pick) -> list[_Candidate]:
    """A value stated, changed, changed again (HARD): now, just before, originally, and the whole history."""
    noun = _noun(ALL_SLOTS[c["state"].slot], plan)
    first, mid, last = c["state"], c["update"], c["update2"]

    def update(a: Event, b: Event) -> dict:
        return {"update": {"from": a.value, "to": b.value, "from_evidence": [a.dia_id], "to_evidence": [b.dia_id]}}

    return [
        _Candidate(6, pick("now", noun=noun), last.value, [last.dia_id], update(mid, last)),
        _Candidate(6, pick("before_latest", noun=noun), mid.value, [mid.dia_id, last.dia_id], update(mid, last)),
        _Candidate(6, pick("original", noun=noun), first.value, [first.dia_id, mid.dia_id, last.dia_id],
                   update(first, last)),
        _Candidate(1, pick("history", noun=noun),
                   pick("history3_answer", old=first.value, mid=mid.value, new=last.value),
                   [first.dia_id, mid.dia_id, last.dia_id]),
    ]


def _candidates(rng: random.Random, plan: _Plan, profile: Profile) -> list[_Candidate]:
    lang, q = plan.language, QTEXT[plan.language]
    pick = lambda kind, **kw: _fill(rng.choice(q[kind]), deadline=plan.deadline_what, user=plan.user, **kw)
    by_slot: dict[str, dict[str, Event]] = {}
    for e in plan.events:
        by_slot.setdefault(e.slot, {})[e.kind] = e
    out: list[_Candidate] = []
    facts: list[Event] = []  # values that never change: single-hop and pair material
    for key, events in by_slot.items():
        if key.startswith("pref"):
            e = events["prefer"]
            pref = PREFERENCES[lang][int(e.value)]
            out.append(_Candidate(3, _fill(pref["q"], user=plan.user), _fill(pref["a"], user=plan.user), [e.dia_id]))
            continue
        noun = _noun(ALL_SLOTS[key], plan)
        if "decide" in events:
            c, d = events["consider"], events["decide"]
            facts.append(d)
            out.append(_Candidate(1, pick("choice", noun=noun), pick("choice_answer", a=c.value, b=c.other),
                                  [c.dia_id, d.dia_id]))
            out.append(_Candidate(3, pick("why", noun=noun, value=d.value), d.reason, [d.dia_id]))
        elif "update2" in events:
            out.extend(_changed_twice(events, plan, pick))
        elif "update" in events:
            old, new = events["state"], events["update"]
            update = {"from": old.value, "to": new.value, "from_evidence": [old.dia_id], "to_evidence": [new.dia_id]}
            out.append(_Candidate(6, pick("now", noun=noun), new.value, [new.dia_id], {"update": update}))
            out.append(_Candidate(6, pick("before", noun=noun), old.value, [old.dia_id, new.dia_id],
                                  {"update": update}))
            out.append(_Candidate(1, pick("history", noun=noun), pick("history_answer", old=old.value, new=new.value),
                                  [old.dia_id, new.dia_id]))
        else:
            facts.append(events["state"])
    for e in facts:
        out.append(_Candidate(4, pick("single", noun=_noun(ALL_SLOTS[e.slot], plan)), e.value, [e.dia_id],
                              required=e is plan.degenerate_fact))
    pairs = [(a, b) for i, a in enumerate(facts) for b in facts[i + 1:] if a.session != b.session]
    hard = profile.hard
    unnamed = {k for k, events in by_slot.items() if not k.startswith("pref") and "update" not in events} if hard \
        else set()
    deed = lambda e: _deed(e, plan, unnamed)  # noqa: E731
    for a, b in rng.sample(pairs, min(hard.pair_questions if hard else 3, len(pairs))):
        nouns = {"noun1": _noun(ALL_SLOTS[a.slot], plan), "noun2": _noun(ALL_SLOTS[b.slot], plan)}
        out.append(_Candidate(1, pick("pair", **nouns), pick("pair_answer", v1=a.value, v2=b.value),
                              [a.dia_id, b.dia_id]))
    if hard:
        out.extend(_triples(rng, plan, facts, hard.triple_questions, pick))
    deeds = [e for e in plan.events if e.kind in ("state", "update", "update2", "decide")]
    timed = [(a, b) for a in deeds for b in deeds if a.session != b.session and a.slot != b.slot]
    for a, b in rng.sample(timed, min(hard.order_questions if hard else 4, len(timed))):
        first, second = sorted((a, b), key=lambda e: e.session)
        kind = rng.choice(["order", "first", "gap"])
        if kind == "order":
            answer = q["order_answer"][0 if a is first else 1]
            out.append(_Candidate(2, pick("order", e1=deed(a), e2=deed(b)), answer, [a.dia_id, b.dia_id]))
        elif kind == "first":
            out.append(_Candidate(2, pick("first", e1=deed(a), e2=deed(b)), deed(first),
                                  [a.dia_id, b.dia_id]))
        else:
            days = (second.date.date() - first.date.date()).days  # type: ignore[union-attr]
            out.append(_Candidate(2, pick("gap", e1=deed(first), e2=deed(second)),
                                  pick("gap_answer", d=str(days)), [first.dia_id, second.dia_id]))
    for e in rng.sample(deeds, min(hard.when_questions if hard else 3, len(deeds))):
        out.append(_Candidate(2, pick("when", e=deed(e)), _date_answer(e.date, lang), [e.dia_id]))  # type: ignore[arg-type]
    return out


def _triples(rng: random.Random, plan: _Plan, facts: list[Event], count: int, pick) -> list[_Candidate]:
    """Three facts said in three different sessions, asked together."""
    out = []
    for _ in range(count):
        by_session: dict[int, Event] = {}
        for e in rng.sample(facts, len(facts)):
            by_session.setdefault(e.session, e)
        if len(by_session) < 3:
            break
        a, b, c = sorted(rng.sample(list(by_session.values()), 3), key=lambda e: e.session)
        nouns = {f"noun{i}": _noun(ALL_SLOTS[e.slot], plan) for i, e in enumerate((a, b, c), 1)}
        out.append(_Candidate(1, pick("triple", **nouns), pick("triple_answer", v1=a.value, v2=b.value, v3=c.value),
                              [a.dia_id, b.dia_id, c.dia_id]))
    return out


def questions(rng: random.Random, plan: _Plan, profile: Profile) -> list[dict]:
    """The conversation's questions: the required ones, the minimum of each category, then random ones."""
    candidates, seen = [], set()
    for c in _candidates(rng, plan, profile):
        if c.question not in seen:
            seen.add(c.question)
            candidates.append(c)
    chosen = {i for i, c in enumerate(candidates) if c.required}
    for category, least in (profile.hard.min_per_category if profile.hard else MIN_PER_CATEGORY).items():
        mine = [i for i, c in enumerate(candidates) if c.category == category and i not in chosen]
        chosen.update(rng.sample(mine, min(least, len(mine))))
    rest = [i for i in range(len(candidates)) if i not in chosen]
    rng.shuffle(rest)
    chosen.update(rest[: max(0, rng.randint(*profile.questions) - len(chosen))])
    out = []
    for i in sorted(chosen):
        c = candidates[i]
        out.append({"question": c.question, "answer": c.answer, "evidence": c.evidence, "category": c.category,
                    **c.extra})
    return out


# ---------------------------------------------------------------------------------------------------- assembly


def _hard_exchange(rng: random.Random, plan: _Plan, profile: Profile, used: dict[str, set[str]], theme: dict,
                   q: int, ue: Event | None, be: Event | None) -> list[dict]:
    """One user turn and its reply in a HARD session: mostly about the session's theme (the first ask opens it,
    later ones follow up on it), replies full of look-alike values and of the facts' nouns without values."""
    hard, language, start = profile.hard, plan.language, plan.dates[0]
    assert hard is not None
    on_theme = q == 0 or rng.random() < hard.follow_up_share
    topic = theme if on_theme else rng.choice(TOPICS[language])
    aside = _lookalike(rng, plan, used, start) if rng.random() < hard.user_distractor_share else None
    user = _user_turn(rng, plan, topic, _event_sentence(rng, ue, plan) if ue else None, q == 0,
                      follow_up=on_theme and q > 0, aside=aside)
    fact = _event_sentence(rng, be, plan) if be else None
    count = rng.randint(*hard.distractors) if rng.random() < hard.distractor_share else 0
    asides = [d for d in (_lookalike(rng, plan, used, start) for _ in range(count)) if d]
    asides += [_mention(rng, plan, used) for _ in range(rng.randint(*hard.mentions))]
    rng.shuffle(asides)
    return [{"speaker": plan.user, "event": ue, "text": user},
            {"speaker": ASSISTANT, "event": be, "text": _reply(rng, plan, profile, fact, asides, topic)}]


def _sessions(rng: random.Random, plan: _Plan, profile: Profile) -> dict:
    language = plan.language
    used = _used_values(plan)
    start = plan.dates[0]
    conv: dict = {"speaker_a": plan.user, "speaker_b": ASSISTANT}
    n = len(plan.dates)
    user_events = [[e for e in plan.events if e.session == s and e.by_user] for s in range(n)]
    bot_events = [[e for e in plan.events if e.session == s and not e.by_user] for s in range(n)]
    pairs = [max(rng.randint(*profile.pairs_per_session), len(user_events[s]), len(bot_events[s])) for s in range(n)]
    extra = [1 if s == plan.degenerate_session else 0 for s in range(n)]
    while 2 * (sum(pairs) + sum(extra)) > profile.max_turns:
        shrinkable = [s for s in range(n) if pairs[s] > max(len(user_events[s]), len(bot_events[s]), 2)]
        if not shrinkable:
            break
        pairs[rng.choice(shrinkable)] -= 1
    while profile.hard and 2 * (sum(pairs) + sum(extra)) < profile.hard.min_turns:
        growable = [s for s in range(n) if pairs[s] < profile.pairs_per_session[1]]
        if not growable:
            break
        pairs[rng.choice(growable)] += 1
    themes = _themes(rng, language, n) if profile.hard else []
    for s in range(n):
        for events in (user_events[s], bot_events[s]):
            events.extend([None] * (pairs[s] - len(events)))
            rng.shuffle(events)
        rows: list[dict] = []
        degenerate_at = rng.randint(0, pairs[s]) if extra[s] else -1
        for p in range(pairs[s] + extra[s]):
            if p == degenerate_at:
                rows.append({"speaker": plan.user, "text": rng.choice(DEGENERATE_ASK[language])})
                chars = rng.randint(*profile.degenerate_chars)  # type: ignore[misc]
                rows.append({"speaker": ASSISTANT, "text": _degenerate(rng, plan, chars)})
                continue
            q = p - (1 if 0 <= degenerate_at < p else 0)
            ue, be = user_events[s][q], bot_events[s][q]
            if profile.hard:
                rows.extend(_hard_exchange(rng, plan, profile, used, themes[s], q, ue, be))
                continue
            topic = rng.choice(TOPICS[language])
            rows.append({"speaker": plan.user, "event": ue,
                         "text": _user_turn(rng, plan, topic, _event_sentence(rng, ue, plan) if ue else None, p == 0)})
            fact = _event_sentence(rng, be, plan) if be else None
            distractor = _distractor(rng, plan, used, start) if rng.random() < 0.6 else None
            rows.append({"speaker": ASSISTANT, "event": be,
                         "text": _reply(rng, plan, profile, fact, [distractor] if distractor else [])})
        turns = []
        for i, row in enumerate(rows, 1):
            dia = f"D{s + 1}:{i}"
            if row.get("event"):
                row["event"].dia_id, row["event"].date = dia, plan.dates[s]
            if row["text"].startswith(TEXT[language]["degenerate_log"]) or row["text"].startswith(
                    TEXT[language]["degenerate_table"]):
                conv.setdefault("_degenerate", dia)
            turns.append({"speaker": row["speaker"], "dia_id": dia, "text": row["text"]})
        conv[f"session_{s + 1}_date_time"] = locomo_when(plan.dates[s])
        conv[f"session_{s + 1}"] = turns
    return conv


def build_conversation(language: str, index: int, seed: int, profile: Profile = DEFAULT,
                       degenerate: bool = False) -> dict:
    """One LoCoMo sample: ``sample_id``, ``language``, ``conversation``, ``qa`` (and ``degenerate_dia_id``)."""
    rng = random.Random(f"longreply/{seed}/{language}/{index}")
    plan = _plan(rng, language, index, profile, degenerate and profile.degenerate_chars is not None)
    conv = _sessions(rng, plan, profile)
    degenerate_dia = conv.pop("_degenerate", None)
    sample: dict = {"sample_id": f"longreply-{language}-{index:02d}", "language": language}
    if degenerate_dia:
        sample["degenerate_dia_id"] = degenerate_dia
    sample["conversation"] = conv
    sample["qa"] = questions(rng, plan, profile)
    return sample


def generate(conversations_per_language: int = DEFAULT_PER_LANGUAGE, seed: int = DEFAULT_SEED,
             profile: Profile = DEFAULT) -> list[dict]:
    """The set: English conversations first, then Japanese; the first of each language has the degenerate reply."""
    return [build_conversation(language, i, seed, profile, degenerate=(i == 0))
            for language in LANGUAGES for i in range(conversations_per_language)]


def dumps(samples: list[dict]) -> str:
    return json.dumps(samples, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.longreply_data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "longreply.json"),
                        help="where to write the LoCoMo-format file (default: $TMPDIR/longreply.json)")
    parser.add_argument("--per-language", type=int, default=DEFAULT_PER_LANGUAGE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default",
                        help="default: 8–12 sessions a conversation; hard: 22–30 sessions, ~200–300 turns, "
                             "look-alike distractors in most replies (ranking, not the budget, decides)")
    args = parser.parse_args(argv)
    samples = generate(args.per_language, args.seed, PROFILES[args.profile])
    Path(args.out).write_text(dumps(samples), encoding="utf-8")
    turns = sum(len(v) for s in samples for k, v in s["conversation"].items() if k.startswith("session_")
                and isinstance(v, list))
    print(f"wrote {args.out}: {len(samples)} conversations, {turns} turns, "
          f"{sum(len(s['qa']) for s in samples)} questions; degenerate replies: "
          + ", ".join(f"{s['sample_id']} {s['degenerate_dia_id']}" for s in samples if "degenerate_dia_id" in s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
