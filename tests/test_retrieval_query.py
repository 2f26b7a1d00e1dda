"""Query analysis and speaker focus (nodes/retrieval/query.py, turn_index.speaker_labels)."""

from lumina_memory.nodes.retrieval.query import analyse
from lumina_memory.nodes.retrieval.turn_index import speaker_labels
from lumina_memory.stores.models import Turn


def _turn(i: int, speaker: str, text: str) -> Turn:
    return Turn(turn_id=f"t{i}", source_id=f"D1:{i}", user_id="u", speaker=speaker, text=text, ts=float(i))


def test_speaker_labels_from_name_prefixes_else_role():
    turns = [_turn(i, "user" if i % 2 else "lumina", f"{'Priya' if i % 2 else 'Marek'}: hello {i}") for i in range(8)]
    turns.append(_turn(9, "user", "no prefix here"))
    turns.append(_turn(10, "user", "Once: a one-off colon"))
    labels = speaker_labels(turns)
    assert labels[:2] == ("Marek", "Priya")
    assert labels[-2:] == ("user", "user")
    ja = [_turn(i, "user", f"{'プリヤ' if i % 2 else 'マレク'}：こんにちは") for i in range(6)]
    assert set(speaker_labels(ja)) == {"プリヤ", "マレク"}


def test_analyse_names_subjects_not_possessives():
    names = ["Priya", "Marek"]
    assert analyse("What did Marek paint?", names).speakers == ["Marek"]
    assert analyse("What do Priya and Marek both like?", names).speakers == ["Priya", "Marek"]
    assert analyse("What did Priya say about Marek's pottery?", names).speakers == ["Priya"]
    assert analyse("What do Marek's nephews like?", names).speakers == ["Marek"]
    assert analyse("Where did they go camping?", names).speakers == []
    assert analyse("Mar painted what?", names).speakers == []  # whole words only
    assert analyse("マレクは何を描いた？", ["プリヤ", "マレク"]).speakers == ["マレク"]
    assert analyse("What did Marek paint?", ["Marek"]).speakers == []  # one speaker: nothing to focus


def test_excerpt_keeps_prefix_and_query_sentences_within_cap():
    from lumina_memory.nodes.retrieval.budget import count_tokens
    from lumina_memory.nodes.retrieval.excerpts import excerpt
    from lumina_memory.nodes.text.tokenize import terms

    text = ("Priya: Thanks, Mar! Having you in my corner helps more than you know these days. I gave a talk at the school "
            "about beekeeping last week. It was great to see how the pupils took to it all. [image: a stage]")
    short = excerpt(text, set(terms("What did Priya talk about at the school?")), 20)
    assert short.startswith("Priya: ") and "talk at the school about beekeeping" in short
    assert count_tokens(short) <= 20 and count_tokens(short) < count_tokens(text)
    assert excerpt("Priya: short turn.", {"x"}, 20) == "Priya: short turn."
    assert excerpt(text, set(), 0) == text
    ja = "マレク：昨日は公園に行きました。娘と一緒に絵を描きました。とても楽しかったです。"
    assert excerpt(ja, set(terms("マレクは何を描いた？")), 16) == "マレク：娘と一緒に絵を描きました。"


def test_feedback_channel_reaches_turns_that_share_words_with_the_first_hits_only():
    """Pseudo-relevance feedback: the answer to "what did the knitting circle lead to?" never says
    "knitting circle"; it shares "sailing lessons" with the first hit, and that is how it is found."""
    from lumina_memory.nodes.retrieval.channels import Candidates, feedback_channel
    from lumina_memory.nodes.retrieval.turn_index import UserTurns
    from lumina_memory.nodes.text.tokenize import terms
    from lumina_memory.stores.settings import LuminaSettings

    texts = [
        "Priya: The knitting circle members told me about sailing lessons for adults.",
        "Marek: That sounds hopeful!",
        "Priya: I went hiking with friends last weekend.",
        "Marek: My kids love painting with me.",
        "Priya: I signed up for sailing lessons that welcome beginners.",
        "Marek: We went camping at the beach.",
        "Priya: My friends gave me a necklace.",
        "Marek: Pottery class was relaxing this week.",
    ]
    index = UserTurns.build([_turn(i, "user", t) for i, t in enumerate(texts)])
    settings = LuminaSettings()
    q_terms = terms("What did the knitting circle lead to?")
    out = Candidates()
    out.turn_rankings["turn_keyword"] = [i for i, _ in index.search(q_terms, 80)]
    assert 4 not in out.turn_rankings["turn_keyword"]
    feedback_channel(index, q_terms, settings, out)
    assert out.turn_rankings["turn_feedback"][:2] == [0, 4]
    off = Candidates()
    off.turn_rankings["turn_keyword"] = list(out.turn_rankings["turn_keyword"])
    feedback_channel(index, q_terms, settings.model_copy(update={"recall_feedback_terms": 0}), off)
    assert "turn_feedback" not in off.turn_rankings


def test_content_view_drops_question_scaffolding_and_the_speakers_asked_about():
    from lumina_memory.nodes.retrieval.query import content_view

    assert content_view("What sports does Marek play?", ["Marek"]) == "sports play"
    assert content_view("What do Marek's nephews like?", ["Marek"]) == "nephews like"
    assert content_view("Where is Kyoto?") == "Kyoto"
    # Japanese: interrogative + its particle, the question ending, the name with its honorific and particle
    assert content_view("マレクは何を描いた？", ["マレク"]) == "描いた"
    assert content_view("マレクさんは週末どこに行きましたか？", ["マレク"]) == "週末 行きました"
    assert content_view("マレクさんは週末どこに行きましたか", ["マレク"]) == "週末 行きました"
    assert content_view("京都は好きですか？") == "京都は好き"
    assert content_view("ノクスの好きな映画はなんですか") == "ノクスの好きな映画は"
    assert content_view("先月、誰と京都へ行ったの？") == "先月、 京都へ行った"
    assert content_view("何か食べた？") == "何か食べた"  # 何か is "something", not a question word
    assert content_view("いつものカフェで何を飲んだ？") == "いつものカフェで 飲んだ"  # いつも is "always"
    assert content_view("どうぞよろしく") is None and content_view("なんて素敵な映画") is None
    # No other view: nothing removed, or nothing with a content word left
    assert content_view("映画が好き") is None
    assert content_view("部屋は静か") is None  # 静か ends in か and is no question
    assert content_view("green tea") is None
    assert content_view("What?") is None
    assert content_view("How are you?") is None
    assert content_view("何？") is None


def test_recall_searches_turns_by_the_content_view_or_by_a_query_that_is_all_content(memory):
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.recall import Timings, recall
    from lumina_memory.stores.settings_recall import RecallConfig

    rows = [
        {"speaker": "user", "text": "Priya: I went to a pottery class and made a bowl.", "ts": 1_700_000_000 + i * 30,
         "source_id": f"D1:{i}"} if i % 2 == 0 else
        {"speaker": "lumina", "text": f"Marek: The kids and I are going swimming again, round {i}.",
         "ts": 1_700_000_000 + i * 30, "source_id": f"D1:{i}"}
        for i in range(8)
    ]
    replay(memory.graph, "alice", rows)
    replay(memory.graph, "bob", [{**r, "text": r["text"].replace("swimming", "skiing")} for r in rows])
    services = memory.services
    question = "What sports does Marek play?"
    qvec = services.embedder.embed([question])[0]
    timings = Timings()
    items = recall(services, "alice", question, budget=200, query_vector=qvec, timings=timings)
    assert "turn_content" in timings.channels
    assert timings.embed_ms > 0  # the view was embedded here, and is counted as query embedding
    assert items and all("skiing" not in i["text"] for i in items)  # only alice's turns, through every channel
    assert any("long-term" in i["tiers"] for i in items)

    off = Timings()
    recall(services, "alice", question, budget=200, query_vector=qvec, timings=off, disabled=("turn_content",))
    assert "turn_content" not in off.channels
    # The segment vectors are searched for a reply (ranked as remembered), not for a deliberate question.
    asked, reply = Timings(), Timings()
    recall(services, "alice", question, purpose="question", budget=200, query_vector=qvec, timings=asked)
    recall(services, "alice", question, purpose="talking", budget=200, query_vector=qvec, timings=reply)
    assert "segment_dense" not in asked.channels and "segment_dense" in reply.channels
    # A query that is all content (a statement, a topic) has no other view: the dense channel searches with
    # the query itself, so recall by meaning alone still finds its turn.
    dense_only = RecallConfig.only(["turn_content"])
    statement = Timings()
    items = recall(services, "alice", "pottery class bowl", budget=200, timings=statement, config=dense_only)
    assert "turn_content" in statement.channels
    assert items and "pottery" in items[0]["text"]

    # Without a precomputed vector, the question and its view go to the embedder in one call (one request
    # to a remote embedding API, not two).
    calls: list[list[str]] = []
    real_embed = services.embedder.embed
    services.embedder.embed = lambda texts: (calls.append(list(texts)), real_embed(texts))[1]
    try:
        recall(services, "alice", "Where did Marek go swimming?", budget=200)
    finally:
        services.embedder.embed = real_embed
    assert calls == [["Where did Marek go swimming?", "go swimming"]]
    calls.clear()
    services.embedder.embed = lambda texts: (calls.append(list(texts)), real_embed(texts))[1]
    try:
        recall(services, "alice", "swimming kids", budget=200)
    finally:
        services.embedder.embed = real_embed
    assert calls == [["swimming kids"]]


def test_feedback_reads_a_long_turns_answering_passage_not_the_whole_reply():
    """A long reply gives feedback the terms of the passage that answers (excerpts.passage_picker), not of its
    other paragraphs: those are about other things, and tokenising whole replies was the channel's main cost."""
    from lumina_memory.nodes.retrieval.channels import Candidates, feedback_channel
    from lumina_memory.nodes.retrieval.excerpts import passage_picker
    from lumina_memory.nodes.retrieval.turn_index import UserTurns
    from lumina_memory.nodes.text.tokenize import terms
    from lumina_memory.stores.settings import LuminaSettings

    settings = LuminaSettings()
    # The answer opens the reply, among words no other turn has (they cannot lead anywhere); the rest of the
    # reply is boilerplate that other turns share.
    unique = " ".join("".join(chr(97 + (k * 7 + j * 3) % 26) for j in range(7)) + "." for k in range(200))
    filler = " ".join(f"The deployment pipeline step {k} copies the zeppelin artefacts to the bucket." for k in range(40))
    reply = ("Assistant: For the task queue we picked Dramatiq over Celery, because Dramatiq retries with backoff "
             "by default. " + unique + "\n\n" + filler)
    texts = [reply,
             "Maya: The zeppelin artefacts are large.", "Maya: Zeppelin builds are slow on Fridays.",
             "Maya: Backoff retries kept the mailer alive.", "Maya: Dramatiq workers restart cleanly."]
    index = UserTurns.build([_turn(i, "user", t) for i, t in enumerate(texts)], passage_cut=(settings.recall_passage_tokens, settings.recall_passage_min_tokens))
    assert len(index.passages.doc_turn) > 1, "the reply is long enough to have passages"
    q_terms = terms("Which task queue did we pick?")

    def expansion(passage_of):
        out = Candidates()
        out.turn_rankings["turn_keyword"] = [0]
        feedback_channel(index, q_terms, settings.model_copy(update={"recall_feedback_docs": 1}), out, passage_of)
        return out.turn_rankings.get("turn_feedback", [])

    focused = expansion(passage_picker(index, {}, q_terms))
    whole = expansion(None)
    # From the answering passage: its words (Dramatiq, backoff) lead to the turns that share them; from the
    # whole reply, the boilerplate that fills it (zeppelin artefacts) does.
    assert {3, 4} <= set(focused) and not {1, 2} & set(focused)
    assert {1, 2} & set(whole)


def test_an_excerpts_token_count_is_added_up_exactly():
    """excerpts.counted_excerpt counts its excerpt from the sentences' known counts; it must equal counting the
    excerpt's text, for any mix of scripts, speaker prefixes (with or without a space), clipped sentences and
    ellipses."""
    from hypothesis import given, settings as hsettings, strategies as st

    from lumina_memory.nodes.retrieval.budget import count_tokens
    from lumina_memory.nodes.retrieval.excerpts import counted_excerpt
    from lumina_memory.nodes.text.tokenize import terms

    pieces = st.sampled_from(["alpha", "beta", "東京", "駅で", "会った。", "猫", "です！", "Hello.", "world?", "x", "…",
                              "[image: a cat]", "code\n", "- item\n", "\n\n", "ｶﾀｶﾅ", "。", "a:b", "ok!"])
    gaps = st.sampled_from([" ", "", "  ", "\n"])
    prefixes = st.sampled_from(["", "Maya: ", "Maya:", "メイ：", "Bob:\t", "Al:x"])

    @hsettings(max_examples=400, deadline=None)
    @given(prefixes, st.lists(st.tuples(pieces, gaps), min_size=1, max_size=60), st.sampled_from([3, 8, 32]),
           st.sets(pieces, max_size=2), st.floats(0, 1))
    def check(prefix, body, max_tokens, wanted, where):
        text = prefix + "".join(p + g for p, g in body)
        q = set(terms(" ".join(wanted)))
        prefer = (int(where * len(text)), len(text)) if where > 0.5 else None
        out, tokens = counted_excerpt(text, q, max_tokens, prefer)
        assert tokens == count_tokens(out)
        assert counted_excerpt(text, q, max_tokens, prefer, count_tokens(text)) == (out, tokens)

    check()


def test_a_question_about_the_askers_own_words_or_the_other_sides_is_read_from_the_pronouns():
    from lumina_memory.nodes.retrieval.query import person_of

    for q in ("What is my dog's name?", "When did I buy the bike?", "Is it mine?", "Can you tell me what I said about Kyoto?",
              "私の犬の名前は？", "僕が買った本は？"):
        assert person_of(q) == "user", q
    for q in ("What port did you suggest for staging?", "Which library did you recommend?", "What was your advice on caching?",
              "Could you remind me what you told me about Redis?", "前に教えてくれたレシピは？", "あなたのおすすめは？"):
        assert person_of(q) == "other", q
    for q in ("Remind me, what is the task queue?", "What did Priya look up?", "i think so", "犬の名前は何だっけ？",
              "Can you tell me the port?"):
        assert person_of(q) is None, q
    assert analyse("What is my dog's name?", ["Maya", "Assistant"]).person == "user"
    named = analyse("What did Maya say about my dog?", ["Maya", "Assistant"])
    assert named.speakers == ["Maya"] and named.person is None  # a name says whose turns; pronouns add nothing


def test_my_in_a_question_prefers_the_users_turn_to_the_assistants_look_alike(memory):
    """User ↔ assistant: the assistant's messages repeat the question's words as often as the user's turn that
    holds the fact; "my" says whose turn it is (settings.recall_person_focus), "you suggested" the other way.

    The assistant's messages open their own sessions (a character writing first), so no user turn sits in their
    exchange: what is measured is the focus between the two sides, not the share a reply passes to the question
    it answers (fusion's neighbour spread), which would lift the user's own question turns beside them."""
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.recall import recall

    rows = []
    for k in range(6):
        rows.append({"speaker": "lumina", "ts": 1_760_000_000 + 3_600 * k,
                     "text": f"For a staging database the port is often 6543; teams pick their own staging database port. Step {k}."})
    rows.append({"speaker": "user", "text": "Our staging database port is 5433.", "ts": 1_760_010_000})
    rows.append({"speaker": "lumina", "text": "Noted, thanks.", "ts": 1_760_010_060})
    replay(memory.graph, "maya", rows)
    services = memory.services

    def episodes(question, **kw):
        items = recall(services, "maya", question, purpose="question", limit=3, **kw)
        return [i for i in items if i.get("kind", "episode") == "episode"]

    def lead(question, **kw):
        """The user's fact's score over the best look-alike's among the items."""
        items = episodes(question, **kw)
        fact = max(i["score"] for i in items if "5433" in i["text"])
        look_alike = max(i["score"] for i in items if "5433" not in i["text"])
        return fact - look_alike

    question = "What is my staging database port?"
    assert "5433" in episodes(question)[0]["text"]
    assert lead(question) > lead(question, disabled=("speakers",))  # the focus is what widens its lead
    assert "6543" in episodes("What staging database port did you suggest?")[0]["text"]
