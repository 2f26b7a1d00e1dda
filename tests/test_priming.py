"""Priming (A1, L6, P1, S1, S2) on real engines: message types, budgets, sections and pointers, presets,
thresholds, the P1 split, the node's state, isolation between users."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.nodes.priming import PRESETS, channel_budgets, detect_message_type, prime, working_memory_split
from lumina_memory.nodes.priming import channels
from lumina_memory.nodes.priming.assemble import identity, label_reserve
from lumina_memory.nodes.priming.budgets import NOTES_CHANNEL_BUDGETS, flow_unused
from lumina_memory.nodes.priming.message_type import resolve_message_type
from lumina_memory.nodes.priming.presets import PrimingPreset
from lumina_memory.nodes.retrieval.budget import count_tokens
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.tools.pointers import parse_pointer

# --- message types --------------------------------------------------------------------------------------------
CASES = {
    "greeting": ["hi", "Hello!", "Hey Lumina", "Good morning!", "good evening, Nox", "How are you?", "Hi, how's it going?",
                 "Long time no see!", "I'm back!", "Happy new year!", "おはよう", "おはようございます！", "こんにちは",
                 "こんばんは、ルミナ", "ただいま〜", "久しぶり！元気？", "おやすみなさい", "はじめまして、よろしくお願いします",
                 "やっほー", "また明日！"],
    "question": ["What did I eat yesterday?", "When is Bob's birthday", "Where did we go last summer?", "Who is Mika?",
                 "Do you remember my dog's name?", "Could you tell me when we met?", "Remind me what I said about Bob",
                 "Hi! What's the name of my cat?", "Why was I sad last week?", "How many books did I read?",
                 "昨日何食べたっけ？", "ボブの誕生日はいつ", "モカは何歳？", "先週どこに行ったか覚えてる？",
                 "明日の天気を教えてください", "おはよう、今日の予定は？", "私の好きな食べ物は何ですか", "なんで怒ってたんだっけ",
                 "誰と行ったかな", "あの本のタイトル知ってる？"],
    "request": ["Can you help me plan a trip?", "Please write a poem", "Write a haiku about rain", "Hi! Can you book a table?",
                "Remind me to call mom tomorrow", "Let's make a shopping list", "I need you to summarise my week",
                "Could you draft an email to my boss?", "Translate this into French", "Give me a recipe for cheesecake",
                "レシピをまとめてください", "旅行の計画を手伝って", "メールを書いて", "買い物リストを作ってくれる？",
                "明日の予定をリマインドしてほしい", "お願い、一緒に考えて", "レポートを確認していただけますか",
                "週末の計画を立てよう", "チーズケーキの作り方をまとめて", "おすすめの本を提案して"],
    "heartbeat": ["", "   ", "[heartbeat]", "ping", "(tick)", "[system] scheduled check", "heartbeat", "定期巡回",
                  "【定期チェック】", "[定期] 状態確認"],
    "default": ["I went to the park today.", "今日は公園に行った。", "My cat turned three.", "雨が降ってきた",
                "That movie was great", "仕事が忙しくて疲れた"],
}


@pytest.mark.parametrize("expected,text", [(k, t) for k, texts in CASES.items() for t in texts])
def test_message_type_is_detected_in_japanese_and_english(expected, text):
    assert detect_message_type(text) == expected


def test_a_given_message_type_wins_and_an_unknown_one_is_refused():
    assert resolve_message_type("hi", "request") == "request"
    assert resolve_message_type("hi", None) == "greeting"
    with pytest.raises(ValueError):
        resolve_message_type("hi", "chitchat")


# --- budgets, presets, P1 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("total", [200, 500, 1500, 2700, 3000, 1024, 7])
def test_channel_budgets_keep_the_notes_shares_and_sum_to_the_total(total):
    parts = channel_budgets(total)
    assert sum(parts.values()) == total
    notes = sum(NOTES_CHANNEL_BUDGETS.values())
    for name, base in NOTES_CHANNEL_BUDGETS.items():
        assert abs(parts[name] - total * base / notes) < 1.0
    assert channel_budgets(2700) == NOTES_CHANNEL_BUDGETS


def test_unused_budget_flows_to_the_episodes_channel():
    budgets = channel_budgets(1500)
    final = flow_unused(budgets, {"profile": 40, "recent": 0, "procedures": 30})
    assert final["profile"] == 40 and final["recent"] == 0 and final["procedures"] == 30
    assert final["episodes"] == 1500 - 40 - 30
    assert sum(final.values()) == 1500


def test_p1_split_sums_to_the_prompt_budget_and_adjusts():
    split = working_memory_split()
    assert split.total == 4096 and sum(split.parts.values()) == 4096
    assert split.parts["working_memory"] in (1228, 1229) and split.parts["memories"] in (819, 820)
    assert split.parts["system"] == split.parts["alerts"]
    urgent = working_memory_split(situation="emergency")
    assert sum(urgent.parts.values()) == 4096 and urgent.parts["alerts"] > split.parts["alerts"]
    social = working_memory_split(2000, situation="social")
    assert sum(social.parts.values()) == 2000 and abs(sum(social.shares.values()) - 1) < 1e-5
    assert social.shares["social"] > 0.15
    custom = working_memory_split(1000, adjust={"memories": 2.0})
    assert custom.parts["memories"] > 200 and sum(custom.parts.values()) == 1000
    with pytest.raises(ValueError):
        working_memory_split(situation="panic")
    with pytest.raises(ValueError):
        working_memory_split(adjust={"mood": 2.0})


def test_presets_hold_s2_thresholds_and_s1_shape():
    assert (PRESETS["default"].threshold, PRESETS["precise"].threshold, PRESETS["exploratory"].threshold) == (0.7, 0.8, 0.6)
    s1 = PRESETS["hierarchical"]
    assert (s1.recent, s1.semantic, s1.summaries, s1.max_items) == (5, 3, 2, 10)


# --- on real engines ------------------------------------------------------------------------------------------
USER = "demo-user"


def _given_back(primed, refunds) -> int:
    """The room recall got back from the profile's redundant facts, and the profile's label when none is left."""
    emptied = bool(refunds.earned) and not primed.section("profile").items
    return refunds.tokens + (count_tokens("[profile]") if emptied else 0)


def _check_budgets(primed):
    assert count_tokens(primed.text) <= primed.budget
    assert primed.tokens == count_tokens(primed.text)
    for section in primed.sections:
        assert section.tokens <= section.budget, section.name
        assert section.tokens == sum(i.tokens for i in section.items)
    room = primed.budget - label_reserve([s.name for s in primed.sections if s.items])
    assert sum(s.budget for s in primed.sections if s.name not in ("episodes", "kb")) + \
        primed.section("episodes").budget + primed.section("kb").budget <= room + sum(
            s.budget - s.tokens for s in primed.sections if s.name in ("profile", "recent", "procedures"))


@pytest.mark.parametrize("message,kind", [("ただいま！", "greeting"), ("モカは何歳になった？", "question"),
                                          ("モカの誕生日パーティーの計画を手伝って", "request"), ("[heartbeat]", "heartbeat")])
def test_budgets_hold_per_section_and_overall(demo_memory, message, kind):
    services = demo_memory.services
    primed = prime(services, USER, message)
    assert primed.message_type == kind
    assert primed.budget == services.settings.recall_budgets[kind]
    _check_budgets(primed)
    assert primed.items(), "the demo user's memory primes something for every type"
    seen = set()
    for section in primed.sections:
        if section.items:
            assert section.label in primed.text
        for entry in section.items:
            # Short (tests/test_short_pointers.py: it opens the same), or a segment's time header over its lines.
            assert f"({entry.shown})" in primed.text or f"\n[{entry.shown}]\n" in primed.text
            assert (parse_pointer(entry.shown).kind == "time") == (entry.segment_id is not None)
            assert parse_pointer(entry.shown).id and parse_pointer(entry.source).id  # read_memory can open it
            assert identity(entry.model_dump()) not in seen
            seen.add(identity(entry.model_dump()))


def test_a_question_gets_its_episodes_and_the_unused_budget(demo_memory):
    services = demo_memory.services
    primed = prime(services, USER, "モカは何歳？")
    episodes = primed.section("episodes")
    assert any("モカ" in i.text for i in episodes.items)
    assert all(i.origin in ("semantic", "knowledge", "summary") for i in episodes.items)
    base = channel_budgets(primed.budget - label_reserve([s.name for s in primed.sections if s.items]))
    unused = sum(base[n] - primed.section(n).tokens for n in ("profile", "recent", "procedures"))
    assert unused > 0
    assert episodes.budget + primed.section("kb").budget == base["episodes"] + unused
    assert primed.section("episodes").tokens > base["episodes"]  # it used what the others left


def test_a_given_budget_and_type_are_obeyed(demo_memory):
    primed = prime(demo_memory.services, USER, "モカは何歳？", message_type="heartbeat")
    assert primed.message_type == "heartbeat" and primed.budget == 200
    _check_budgets(primed)
    small = prime(demo_memory.services, USER, "モカは何歳？", budget=60)
    assert small.budget == 60 and count_tokens(small.text) <= 60


def test_hierarchical_preset_has_s1_shape(demo_memory):
    primed = prime(demo_memory.services, USER, "ただいま！モカの話をしよう", preset="hierarchical", message_type="greeting",
                   budget=3000)
    items = primed.items()
    assert 0 < len(items) <= 10
    origins = [i.origin for i in items]
    assert origins.count("semantic") <= 3 and origins.count("summary") <= 2 and origins.count("recent") <= 5
    assert "recent" in origins and "semantic" in origins
    assert len({identity(i.model_dump()) for i in items}) == len(items)


def test_similarity_thresholds_filter_recent_segments_for_a_question(demo_memory):
    services = demo_memory.services
    segments = services.stores.archive.segments(USER, limit=5)
    assert segments
    # A question made of the newest segment's own summary is as similar to it as anything can be.
    question = segments[0].summary[:200] + "？"
    vector = services.embedder.embed([question])[0]
    from concurrent.futures import Future

    qvec = Future()
    qvec.set_result(vector)

    def recent(threshold):
        preset = PrimingPreset(name="t", threshold=threshold)
        return channels.recent_channel(services, USER, question, "question", preset, qvec)

    everything, strict = recent(0.0), recent(0.999)
    assert len(everything) == len(segments) or len(everything) == PRESETS["default"].recent
    assert all(i["similarity"] is not None for i in everything)
    assert len(strict) < len(everything)
    for name in ("exploratory", "default", "precise"):
        kept = channels.recent_channel(services, USER, question, "question", PRESETS[name], qvec)
        assert all(i["similarity"] >= PRESETS[name].threshold for i in kept)
        assert [i["_source"] for i in kept] == [i["_source"] for i in everything if i["similarity"] >= PRESETS[name].threshold]
    best = max(everything, key=lambda i: i["similarity"])
    assert best["_source"] == f"seg:{segments[0].segment_id}"
    assert best["_source"] in [i["_source"] for i in recent(best["similarity"])]
    assert best["_source"] not in [i["_source"] for i in recent(best["similarity"] + 0.001)]
    # A greeting is not about anything: recent activity comes by time, unfiltered.
    greeting = channels.recent_channel(services, USER, "ただいま", "greeting", PRESETS["precise"], qvec)
    assert len(greeting) >= len(segments[:5])


def test_the_node_puts_primed_into_state(memory_factory, demo_rows):
    from lumina_memory.graphs.replay import replay

    mem = memory_factory()
    replay(mem.graph, "pia", [{k: v for k, v in r.items() if k != "user_id"} for r in demo_rows[:40]])
    config = {"configurable": {"thread_id": "chat:pia"}}
    out = mem.graph.invoke({"messages": [HumanMessage("モカは何歳だっけ？")]}, config, context={"user_id": "pia"})
    state = mem.graph.get_state(config).values
    primed = state["primed"]
    assert primed["message_type"] == "question" and primed["budget"] == 1500
    assert {s["name"] for s in primed["sections"]} == {"profile", "recent", "episodes", "procedures", "kb"}
    assert count_tokens(primed["text"]) <= 1500 and "モカ" in primed["text"]
    assert all("_source" in i for s in primed["sections"] for i in s["items"])
    assert out["recalled"]  # recall's items stay where they were
    mem.graph.invoke({"messages": [HumanMessage("モカは何歳だっけ？")]}, config,
                     context={"user_id": "pia", "message_type": "greeting"})
    again = mem.graph.get_state(config).values["primed"]
    assert again["message_type"] == "greeting" and again["budget"] == 500


def test_another_users_profile_never_appears(memory_factory):
    from lumina_memory.graphs.replay import replay

    mem = memory_factory()
    ts = 1_790_000_000

    def say(user, lines):
        rows = []
        for n, text in enumerate(lines):
            rows.append({"speaker": "user", "text": text, "ts": ts + 60 * n, "source_id": f"{user}-{n}"})
            rows.append({"speaker": "lumina", "text": "そうなんだ！", "ts": ts + 60 * n + 30, "source_id": f"{user}-{n}r"})
        replay(mem.graph, user, rows)

    say("alice", ["I love durian and I eat durian every week.", "My favourite food is durian.", "I live in Osaka."])
    say("bob", ["I love sushi.", "My favourite food is ramen.", "I live in Sapporo."])
    services = mem.services
    for message in ("hi", "What is my favourite food?", "Please plan a dinner for me", "[heartbeat]"):
        for preset in PRESETS:
            bob = prime(services, "bob", message, preset=preset, budget=3000)
            assert "durian" not in bob.text.lower() and "osaka" not in bob.text.lower()
    alice = prime(services, "alice", "What is my favourite food?", budget=3000)
    assert "durian" in alice.text.lower()  # the same question does find the owner's own memory
    alice_ids = {i.source for i in alice.items()}
    bob_ids = {i.source for i in prime(services, "bob", "What is my favourite food?", budget=3000).items()}
    assert not alice_ids & bob_ids


def test_knowledge_base_passages_are_primed_above_the_threshold(memory, tmp_path):
    from lumina_memory.nodes.kb.add import add_files

    services = memory.services
    sentence = "The mountain hut on the north ridge opens on the first of July and closes in late September."
    doc = tmp_path / "huts.md"
    doc.write_text("# Huts\n\n" + sentence + "\n\nBring cash: cards are not accepted at the hut.\n", encoding="utf-8")
    add_files(services, "huts", [str(doc)])
    primed = prime(services, "kai", sentence, message_type="request", budget=3000)
    kb = primed.section("kb")
    assert kb.items and all(i.source.startswith("kb:huts:") for i in kb.items)
    assert all(i.similarity >= PRESETS["default"].threshold for i in kb.items)
    assert "[knowledge-bases]" in primed.text and "north ridge" in primed.text
    assert parse_pointer(kb.items[0].source).kb == "huts"
    unrelated = prime(services, "kai", "My sister plays the violin in an orchestra.", message_type="request", budget=3000)
    assert not unrelated.section("kb").items  # below the threshold: nothing


def test_episodes_are_grouped_by_day_and_a_days_date_is_paid_for_once():
    from lumina_memory.nodes.priming.assemble import _pack, render_by_day

    def ep(n: int, day: str | None) -> dict:
        text = (f"[{day}] " if day else "") + f"user: memory number {n}"
        return {"_source": f"ep:m{n}", "kind": "episode", "text": text, "quoted_source_ids": [f"m{n}"]}

    found = [ep(1, "2026-03-02"), ep(2, "2026-01-05"), ep(3, "2026-03-02"), ep(4, None), ep(5, "2026-01-05")]
    packed = _pack(found, 10_000, set(), by_day=True)
    text = render_by_day(packed)
    assert text.splitlines() == [
        "user: memory number 4 (ep:m4)",
        "[2026-01-05]", "user: memory number 2 (ep:m2)", "user: memory number 5 (ep:m5)",
        "[2026-03-02]", "user: memory number 1 (ep:m1)", "user: memory number 3 (ep:m3)",
    ]
    # What the items were charged is what the text costs: each day's header once, not a date per line.
    assert sum(i["tokens"] for i in packed) == count_tokens(text)
    assert count_tokens(text) < sum(count_tokens(f"{i['text']} ({i['_source']})") for i in found)
    # A tight budget keeps the best-ranked lines that fit, headers included.
    tight = _pack(found, count_tokens(text) - 6, set(), by_day=True)
    assert sum(i["tokens"] for i in tight) <= count_tokens(text) - 6
    assert count_tokens(render_by_day(tight)) == sum(i["tokens"] for i in tight)


def test_a_segments_lines_of_a_day_sit_under_one_time_header_that_is_their_pointer():
    from lumina_memory.nodes.priming.assemble import _pack, render_by_day

    day2 = 1_772_409_600.0  # 2026-03-02T00:00 UTC

    def ep(n: int, day: str, segment: str | None, ts: float | None) -> dict:
        return {"_source": f"ep:m{n}", "kind": "episode", "text": f"[{day}] user: memory number {n}",
                "quoted_source_ids": [f"m{n}"], "segment_id": segment, "ts": ts}

    found = [ep(1, "2026-03-02", "a", day2 + 14 * 3600 + 330), ep(2, "2026-03-02", "b", day2 + 9 * 3600),
             ep(3, "2026-03-02", "a", day2 + 14 * 3600 + 30), ep(4, "2026-03-03", "a", day2 + 86_400 + 60),
             ep(5, "2026-03-02", None, None), ep(6, "2026-03-02", "a", day2 + 15 * 3600),
             ep(7, "2026-03-02", None, None), ep(8, "2026-03-02", None, day2 + 20 * 3600)]
    packed = _pack(found, 10_000, set(), by_day=True)
    text = render_by_day(packed)
    assert text.splitlines() == [
        "[2026-03-02]",  # lines with pointers of their own (no time: a fact, a summary) under the day's date
        "user: memory number 5 (ep:m5)", "user: memory number 7 (ep:m7)",
        "[2026-03-02T09:00]", "user: memory number 2",  # alone in its segment that day: its header is its pointer
        "[2026-03-02T14:00]",  # segment a's first line that day was said at 14:00:30
        "user: memory number 1", "user: memory number 3", "user: memory number 6",
        "[2026-03-02T20:00]", "user: memory number 8",  # an excerpt of a long message: a header of its own
        "[2026-03-03T00:01]", "user: memory number 4",  # the same segment on another day: a header of its own
    ]
    assert sum(i["tokens"] for i in packed) == count_tokens(text)
    # Against a date and a pointer on each of the 8 lines: 5 headers and 2 pointers instead of 16.
    per_line = sum(count_tokens(f"{i['text']} ({i['_source']})") for i in found)
    assert count_tokens(text) == per_line - 9
    # A budget one token short of the whole drops a line, never overflows.
    tight = _pack(found, count_tokens(text) - 1, set(), by_day=True)
    assert len(tight) == len(found) - 1 and sum(i["tokens"] for i in tight) <= count_tokens(text) - 1
    assert count_tokens(render_by_day(tight)) == sum(i["tokens"] for i in tight)


def test_two_segments_whose_lines_begin_in_one_minute_share_its_header():
    from lumina_memory.nodes.priming.assemble import _pack, render_by_day

    minute = 1_772_460_000.0  # 2026-03-02T14:00 UTC
    found = [{"_source": f"ep:m{n}", "kind": "episode", "text": f"[2026-03-02] user: line {n}", "quoted_source_ids": [f"m{n}"],
              "segment_id": seg, "ts": minute + n} for n, seg in ((1, "a"), (2, "b"))]
    packed = _pack(found, 10_000, set(), by_day=True)
    assert render_by_day(packed).splitlines() == ["[2026-03-02T14:00]", "user: line 1", "user: line 2"]
    assert sum(i["tokens"] for i in packed) >= count_tokens(render_by_day(packed))  # charged for two, costs one


def test_recall_pays_one_pointer_per_segment_and_day_when_asked(demo_memory):
    """pointer_groups: recall packs a budget in which a segment's items of one day pay one pointer; priming renders
    those items within it, nothing dropped, and no less of the memory fits than with a pointer on every line."""
    from lumina_memory.nodes.priming.assemble import _pack, render_by_day
    from lumina_memory.nodes.priming.channels import _groupable_segment

    services = demo_memory.services
    more = 0
    for query in ("モカは何歳？", "京都旅行の話", "What did we talk about?"):
        for budget in (60, 100, 250, 400):
            lined = recall(services, USER, query, purpose="question", budget=budget, item_overhead=1, dates_once=True)
            grouped = recall(services, USER, query, purpose="question", budget=budget, item_overhead=1, dates_once=True,
                             pointer_groups=True)
            entries = [{**i, "_source": f"ep:{n}", "quoted_source_ids": i["source_ids"],
                        "segment_id": _groupable_segment(i), "ts": i.get("first_ts")} for n, i in enumerate(grouped)]
            packed = _pack(entries, budget, set(), by_day=True)
            assert len(packed) == len(entries), "every item recall packed fits as priming renders it"
            assert count_tokens(render_by_day(packed)) <= budget
            text = lambda items: sum(count_tokens(i["text"]) for i in items)  # noqa: E731
            assert text(grouped) >= text(lined) - max((count_tokens(i["text"]) for i in grouped), default=0)
            more += text(grouped) > text(lined)
    assert more, "somewhere a shared pointer made room for more of the memory"


def test_primed_lines_under_a_time_header_are_in_what_it_opens(demo_memory):
    from lumina_memory.nodes.tools.reading import open_pointer

    services = demo_memory.services
    grouped = []
    for query in ("What did we talk about?", "京都旅行の話", "映画のおすすめ", "モカは何歳？"):
        primed = prime(services, USER, query, message_type="question", budget=300)
        _check_budgets(primed)
        for entry in primed.section("episodes").items:
            if entry.segment_id is None:
                continue
            grouped.append(entry)
            assert f"\n[{entry.shown}]\n" in primed.text and entry.shown.startswith(entry.date)
            opened = open_pointer(services, USER, parse_pointer(f"[{entry.shown}]"))  # as the model copies it
            assert opened is not None and opened.kind == "segment"
            body = entry.text.split("] ", 1)[-1]  # an excerpt's sentences are joined by a space
            assert body.split(" … ")[0].split()[0][:20] in opened.text
    assert len(grouped) > 3, "the demo primes segments' lines under their time headers"


def test_recall_packs_the_way_priming_shows_it(demo_memory):
    """item_overhead / dates_once: recall fills a budget in which every line pays its pointer and a day's date
    is shown once, so priming's rendering of those items fits that budget with nothing dropped."""
    from lumina_memory.nodes.priming.assemble import _pack, render_by_day
    from lumina_memory.nodes.retrieval.recall import recall

    services = demo_memory.services
    for budget in (40, 120, 400):
        plain = recall(services, USER, "モカは何歳？", purpose="question", budget=budget)
        lined = recall(services, USER, "モカは何歳？", purpose="question", budget=budget, item_overhead=1, dates_once=True)
        assert lined and sum(i["tokens"] for i in plain) <= budget
        entries = [{**i, "_source": f"ep:{n}", "quoted_source_ids": i["source_ids"]} for n, i in enumerate(lined)]
        packed = _pack(entries, budget, set(), by_day=True)
        assert len(packed) == len(entries), "every item recall packed fits as priming renders it"
        assert count_tokens(render_by_day(packed)) <= budget
        # With a pointer per line, the same budget holds no more text than plain recall packs.
        assert sum(count_tokens(i["text"]) for i in lined) <= sum(count_tokens(i["text"]) for i in plain) + len(
            {i["date"] for i in lined})


@pytest.fixture
def asked(monkeypatch) -> dict:
    """What priming asked recall for (its keyword arguments) and what came back (``items``), per call."""
    seen: dict = {}
    real = channels.recall_items

    def spy(*args, **kwargs):
        seen.update(kwargs, items=real(*args, **kwargs))
        return seen["items"]

    monkeypatch.setattr(channels, "recall_items", spy)
    return seen


def test_priming_recalls_into_the_room_the_other_sections_leave(demo_memory, asked):
    """Recall is asked for exactly the episodes' room, and none of what it packs is then dropped."""
    from lumina_memory.nodes.tools.pointers import format_pointer

    for budget in (120, 500):
        primed = prime(demo_memory.services, USER, "モカの誕生日はいつ？", message_type="question", budget=budget)
        episodes = primed.section("episodes")
        assert episodes.budget == asked["budget"] + _given_back(primed, asked["refunds"])
        shown = [i.source for i in primed.items()]
        wanted = [format_pointer(i) for i in asked["items"] if i.get("kind", "episode") in ("episode", "knowledge")]
        assert wanted and all(p in shown for p in wanted)
        assert len(episodes.items) >= len(wanted) - sum(p in {i.source for i in primed.section("profile").items} for p in wanted)
        _check_budgets(primed)


def test_recall_leaves_out_the_facts_the_profile_shows_and_fills_their_room(demo_memory, asked):
    """A fact the profile section shows is not packed again by recall: its room goes to other memories, and
    nothing recall packs is then dropped as a duplicate (it was: ~0.8 tokens a question on LoCoMo dev at 200)."""
    from lumina_memory.nodes.tools.pointers import format_pointer

    overlapped = 0
    for question in ("うちの猫は何歳になった？", "モカの誕生日はいつ？", "京都旅行の予定は？"):
        for budget in (80, 200, 500):
            primed = prime(demo_memory.services, USER, question, message_type="question", budget=budget)
            # What the profile packed, its facts left out as redundant included (the next test).
            profile = {i.source for i in primed.section("profile").items} | {f"fact:{f}" for f in asked["shown_facts"]}
            episodes = {i.source for i in primed.section("episodes").items}
            wanted = [format_pointer(i) for i in asked["items"] if i.get("kind", "episode") in ("episode", "knowledge")]
            assert all(p in episodes for p in wanted), "recall packed something priming then dropped"
            assert not profile & set(wanted)
            # The same recall not told what the profile shows would have packed one of its facts again.
            plain = recall(demo_memory.services, USER, question, purpose="question", budget=asked["budget"],
                           item_overhead=1, dates_once=True, pointer_groups=True)
            overlapped += bool(profile & {format_pointer(i) for i in plain})
            _check_budgets(primed)
    assert overlapped, "the demo has a question whose profile fact recall ranks too"


def test_a_questions_profile_facts_match_its_words_not_the_speakers_names(demo_memory):
    services = demo_memory.services
    facts = channels.profile_channel(services, USER, "うちの猫は何歳になった？", "question", None)
    assert any(f["text"] == "pet: モカ" for f in facts)  # 猫 is in the sentence the fact was heard in
    assert not any(f["text"].startswith("habit:") for f in facts)
    # A question naming only a speaker (as every sentence of theirs does) primes none of their facts.
    speakers = services.turn_index.get(services.stores.archive, USER, services.stores.turns).speakers
    assert speakers
    assert channels.profile_channel(services, USER, f"{speakers[0]}？", "question", None) == []


def test_a_questions_profile_facts_are_found_across_scripts(memory):
    """「ボブ」 in a fact, "Bob" in the question: the cross-script keys (nodes.text.transliterate) meet."""
    from lumina_memory.graphs.replay import replay

    replay(memory.graph, "nana", [{"speaker": "user", "text": "友達のボブは毎週テニスをしている。", "ts": 1_760_000_000},
                                  {"speaker": "user", "text": "ペットの犬はポチという名前です。", "ts": 1_760_000_060}])
    facts = memory.services.stores.archive.knowledge.items("nana", subject="user")
    texts = " ".join(f"{f['attribute']} {f['value']} {f['text']}" for f in facts)
    assert "ボブ" in texts, texts
    primed = channels.profile_channel(memory.services, "nana", "What does Bob play every week?", "question", None)
    assert [f["text"] for f in primed] == ["friend: ボブ"]
    assert channels.profile_channel(memory.services, "nana", "What does Tim play every week?", "question", None) == []


@pytest.mark.parametrize("budget", [30, 100])
def test_a_procedure_longer_than_the_budget_neither_overflows_recall_nor_starves_it(demo_memory, budget):
    """The demo's cheesecake recipe is ~190 tokens: asked for within a smaller budget, recall leaves it out and
    packs what fits, and priming primes episodes instead of an empty section."""
    services = demo_memory.services
    items = recall(services, USER, "チーズケーキ", purpose="question", budget=budget)
    assert items and sum(i["tokens"] for i in items) <= budget
    assert all(i.get("kind") != "procedure" for i in items)
    whole = recall(services, USER, "チーズケーキ", purpose="question", budget=400)
    assert any(i.get("kind") == "procedure" for i in whole)  # it is found when it fits
    primed = prime(services, USER, "チーズケーキ", message_type="question", budget=budget)
    _check_budgets(primed)
    assert primed.section("episodes").items


def test_a_passage_joining_a_segments_line_makes_it_a_line_of_its_own_and_pays_its_pointer(demo_memory):
    """pointer_groups: a long message's passage (an excerpt keeps its own pointer) joined to a turn of a segment
    whose pointer another line shares takes that turn out of the group: recall must charge the extra pointer, or
    the rendered section overflows the budget it packed and priming drops a line."""
    from types import SimpleNamespace

    from lumina_memory.nodes.priming.assemble import _pack, render_by_day
    from lumina_memory.nodes.priming.channels import _groupable_segment
    from lumina_memory.nodes.retrieval.packing import pack_turns

    settings = demo_memory.services.settings
    long_text = "user: " + " ".join(f"Sentence number {n} is about the staging database and its port." for n in range(60))

    def turn(n: int, text: str) -> SimpleNamespace:
        return SimpleNamespace(text=text, ts=1_700_000_000.0 + n, segment_id="seg-a", source_id=f"m{n}",
                               turn_id=f"t{n}", speaker="user")

    turns = [turn(0, "user: we moved the staging database to a new host"), turn(1, "user: something else entirely"),
             turn(2, "user: the staging database port is 15432 now"), turn(3, long_text)]
    passage = lambda i: (2, 5, (0, 400)) if i == 3 else None  # noqa: E731

    def packed(budget: int) -> list[dict]:
        kept = [(1.0, 2, 1.0, 0.0), (0.9, 3, 0.9, 0.0), (0.8, 0, 0.8, 0.0)]  # the short line, the passage, another
        return pack_turns(kept, turns, {}, budget, None, settings, 10, ["staging", "database", "port"], None, passage,
                          item_overhead=1, dates_once=True, pointer_groups=True)

    def rendered_cost(items: list[dict]) -> tuple[int, int]:
        entries = [{**i, "_source": f"ep:{n}", "quoted_source_ids": i["source_ids"], "segment_id": _groupable_segment(i),
                    "ts": i.get("first_ts")} for n, i in enumerate(items)]
        fitted = _pack(entries, 10_000, set(), by_day=True)
        return len(fitted), count_tokens(render_by_day(fitted))

    everything = packed(10_000)
    assert len(everything) == 2 and any(i.get("passages") for i in everything)  # the passage joined the short line
    n, cost = rendered_cost(everything)
    for budget in range(cost - 3, cost + 1):
        items = packed(budget)
        n, used = rendered_cost(items)
        assert used <= budget, f"recall packed {used} tokens as rendered into a budget of {budget}"


def test_a_profile_fact_the_episodes_quote_is_not_shown_twice_and_its_room_goes_to_them(memory, demo_memory, asked):
    """A fact of the profile whose messages the episodes quote whole says again what they say: it is left out, and
    recall, told what each such line costs, packs into the room it frees (the same text would otherwise hold
    the fact twice and one memory fewer)."""
    from lumina_memory.graphs.replay import replay

    replay(memory.graph, "nana", [{"speaker": "user", "text": "友達のボブは毎週テニスをしている。", "ts": 1_760_000_000},
                                  {"speaker": "user", "text": "ペットの犬はポチという名前です。", "ts": 1_760_000_060},
                                  {"speaker": "user", "text": "今日は雨だった。", "ts": 1_760_090_000}])
    freed = 0
    for services, user, questions in (
            (memory.services, "nana", ("ペットの犬の名前は？", "ボブは毎週何をしている？")),
            (demo_memory.services, USER, ("うちの猫は何歳になった？", "モカの誕生日はいつ？", "京都旅行の予定は？", "猫の名前は？"))):
        for question in questions:
            for budget in (60, 120, 200, 500):
                primed = prime(services, user, question, message_type="question", budget=budget)
                # The messages the episodes quote whole (another fact learnt from one of them says something else).
                quoted = {s for i in primed.section("episodes").items for s in i.whole_source_ids}
                for fact in primed.section("profile").items:
                    assert not (fact.quoted_source_ids and set(fact.quoted_source_ids) <= quoted), (question, budget, fact.text)
                refunds = asked["refunds"]
                left_out = [f for f in channels.profile_channel(services, user, question, "question", None)
                            if f["_source"] in refunds.earned]
                assert all(set(f["quoted_source_ids"]) <= quoted for f in left_out)
                assert not {f["_source"] for f in left_out} & {i.source for i in primed.section("profile").items}
                freed += refunds.tokens
                # What recall was given back is what the profile left out, and the episodes' room holds it.
                assert primed.section("episodes").budget == asked["budget"] + _given_back(primed, refunds)
                _check_budgets(primed)
    assert freed, "a question whose profile fact the episodes quote whole"


def test_recall_packs_into_the_room_a_refund_gives_back(demo_memory):
    """``refunds``: once the packed turns quote whole all the messages a caller's line stands for, that line's
    tokens come back to the budget, and more is packed than without."""
    from lumina_memory.nodes.retrieval.packing import Refunds

    services = demo_memory.services
    question = "モカは何歳？"
    for budget in (80, 160, 320):
        plain = recall(services, USER, question, purpose="question", budget=budget, item_overhead=1, dates_once=True,
                       pointer_groups=True)
        first = next(i for i in plain if i.get("whole_source_ids"))
        refunds = Refunds({"fact:x": (first["whole_source_ids"][:1], 30), "fact:never": (["no-such-message"], 30)})
        more = recall(services, USER, question, purpose="question", budget=budget, item_overhead=1, dates_once=True,
                      pointer_groups=True, refunds=refunds)
        assert refunds.earned == {"fact:x": 30} and refunds.tokens == 30
        before, after = ({s for i in items for s in i.get("quoted_source_ids", ())} for items in (plain, more))
        # The room came back while packing: a turn skipped for want of it may now lead a shorter one it displaced.
        assert len(after) > len(before) or (len(after) == len(before) and after != before)
        assert sum(len(i["text"]) for i in more) > sum(len(i["text"]) for i in plain)


def test_only_a_message_quoted_whole_makes_a_profile_fact_redundant():
    """An excerpt of a message may leave out the sentence a fact was learnt from: the fact stays, and the packer
    gives no room back for it; a message quoted whole makes it redundant."""
    from lumina_memory.nodes.priming.assemble import redundant_facts
    from lumina_memory.nodes.retrieval.packing import Refunds, pack_turns
    from lumina_memory.nodes.retrieval.turn_index import UserTurns
    from lumina_memory.stores.models import Turn
    from lumina_memory.stores.settings import LuminaSettings

    fact = {"_source": "fact:f1", "kind": "knowledge", "text": "pet: Mocha", "quoted_source_ids": ["m-long"]}
    excerpt = {"_source": "ep:m-long", "kind": "episode", "text": "[2026-01-02] … my cat …",
               "quoted_source_ids": ["m-long"], "whole_source_ids": []}
    assert redundant_facts([fact], [excerpt]) == set()
    assert redundant_facts([fact], [{**excerpt, "whole_source_ids": ["m-long"]}]) == {"fact:f1"}

    long_text = "Nana: " + " ".join(f"Sentence {k} is about the weather and nothing else." for k in range(12)) + \
        " My cat Mocha turned three."
    turns = [Turn(turn_id="t0", source_id="m-long", user_id="u", speaker="user", text=long_text, ts=100.0, segment_id="s"),
             Turn(turn_id="t1", source_id="m-short", user_id="u", speaker="user", text="Nana: I love tea.",
                  ts=100.0 + 3 * 86400, segment_id="s2")]
    index = UserTurns.build(turns)
    settings = LuminaSettings()
    ranked = [(1.0, 0, 1.0, 1.0), (0.9, 1, 1.0, 1.0)]
    refunds = Refunds({"fact:f1": (["m-long"], 20), "fact:f2": (["m-short"], 20)})
    items = pack_turns(ranked, index.turns, {}, 200, None, settings, 10, ["cat"], index.token_counts, refunds=refunds)
    long_item = next(i for i in items if "m-long" in i["quoted_source_ids"])
    assert "Mocha" in long_item["text"] and len(long_item["text"]) < len(long_text)  # an excerpt
    assert long_item["whole_source_ids"] == []
    assert refunds.earned == {"fact:f2": 20}  # the short message is quoted whole
    assert next(i for i in items if "m-short" in i["quoted_source_ids"])["whole_source_ids"] == ["m-short"]
