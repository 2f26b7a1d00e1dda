"""A generated village of agents whose answers are known (issue 48's quality check).

Each agent lives through routine events (work, meals, weather, neighbours seen) and, hidden among them, the events
a question is about:
- *told*: another agent told it a fact ("who told me where the iron is?"); the answer is the teller. A second
  agent told it where another thing is, in the same words otherwise.
- *rule*: its group agreed two rules at two meetings, each also kept as a group memory by the group's leader
  ("what did our group agree about the well?"); only the rule asked about answers, and an agent outside the group
  must never be shown either memory.
- *trust*: one agent helped it three times, another once, one promised and failed ("who helps me most?"); it is
  answered when the helper's events outnumber the others' among the results.
- *latest*: where it saw something, twice, at different times ("where did I last see the wolf?"); only the later
  sighting answers, which a search by meaning alone cannot tell from the earlier one: it is answered when the later
  sighting ranks above the earlier one.
A question's ``decoys`` are the events (and group memories) that look like an answer and are not; ``rule`` says how
results are read: ``any`` (an evidence event among them), ``first`` (evidence ranked above every decoy), ``most``
(more evidence than decoy events).
Half the agents speak English, half Japanese; names, places and facts are drawn per agent from shared pools, so
the same words occur in many agents' distractors and in other questions. Deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NAMES = ["Lila", "Noah", "Mira", "Oren", "Sana", "Kai", "Yuki", "Ren", "Aiko", "Tomas", "Ines", "Hugo", "Emi",
         "Rafa", "Nina", "Sora", "Taro", "Hana", "Leo", "Maya", "Ivo", "Rin", "Jun", "Ada"]
PLACES_EN = ["the cave east of the river", "the old mine under the hill", "the birch forest", "the north farm",
             "the stone bridge", "the marsh by the lake", "the ruined tower", "the village well"]
PLACES_JA = ["川の東の洞窟", "丘の下の古い鉱山", "白樺の森", "北の農場", "石の橋", "湖のそばの沼地", "崩れた塔", "村の井戸"]
THINGS = [("iron ore", "鉄鉱石"), ("coal", "石炭"), ("clay", "粘土"), ("wild wheat", "野生の小麦"),
          ("honey", "はちみつ"), ("flint", "火打ち石")]
ANIMALS = [("wolf", "狼"), ("bear", "熊"), ("wild boar", "猪"), ("fox", "狐")]
RULES = [("no one cuts trees near the well", "井戸の近くの木は誰も切らない", "trees", "木"),
         ("bread is shared equally at supper", "夕食のパンは平等に分ける", "bread", "パン"),
         ("the night watch changes at midnight", "夜警は真夜中に交代する", "night watch", "夜警"),
         ("nobody mines under the houses", "家の下では誰も採掘しない", "mining", "採掘")]
HELP = [("carried stone to the wall with me", "壁まで石を一緒に運んでくれた"),
        ("fixed my broken pickaxe", "壊れたツルハシを直してくれた"),
        ("brought me water when I was sick", "病気のときに水を持ってきてくれた"),
        ("helped me harvest the wheat", "小麦の収穫を手伝ってくれた")]
ROUTINE_EN = ["I mined some stone near {p}.", "I ate bread and rested at home.", "It started raining over {p}.",
              "{n} was farming near {p}.", "I chopped wood in {p}.", "I repaired the fence of the north farm.",
              "{n} and I talked about the weather.", "I saw {n} walking towards {p}.", "I sorted my inventory.",
              "The sun set behind {p}.", "I planted potatoes in the field.", "{n} asked what time it was."]
ROUTINE_JA = ["{p}の近くで石を掘った。", "パンを食べて家で休んだ。", "{p}に雨が降り始めた。", "{n}が{p}の近くで畑仕事をしていた。",
              "{p}で木を切った。", "北の農場の柵を直した。", "{n}と天気の話をした。", "{n}が{p}の方へ歩いていくのを見た。",
              "持ち物を整理した。", "{p}の向こうに日が沈んだ。", "畑にジャガイモを植えた。", "{n}に時間を聞かれた。"]


@dataclass
class Question:
    agent_id: str
    kind: str
    query: str
    evidence: list[str]
    answer: str
    """A word the retrieved text must contain to answer (the teller's name, the rule, the place)."""
    module: str = "default"
    shared: str | None = None
    """A group memory that answers too (rule questions)."""
    decoys: list[str] = field(default_factory=list)
    """Events or group memories that look like an answer and are not."""
    rule: str = "any"
    """How results answer: any, first or most (module docstring)."""
    decoy_answers: list[str] = field(default_factory=list)
    """Texts a decoy holds in place of the answer (the other rule, the earlier place, the other helpers)."""


@dataclass
class Scenario:
    events: list[dict] = field(default_factory=list)
    """Event dicts in time order: agent_id, event_id, time, type, content, participants, metadata."""
    groups: dict[str, list[str]] = field(default_factory=dict)
    shared: list[dict] = field(default_factory=list)
    """Group memories: memory_id, author, group_id, content, source_events, created_at."""
    questions: list[Question] = field(default_factory=list)
    outsiders: list[tuple[str, str]] = field(default_factory=list)
    """(agent, group memory id) pairs the agent must never be shown."""


def generate(agents: int = 24, routine_per_agent: int = 60, hours: float = 2.0, seed: int = 7,
             start: float = 1_800_000_000.0) -> Scenario:
    rnd = random.Random(seed)
    ids = [f"agent_{i:03d}" for i in range(agents)]
    name = {a: NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else str(i // len(NAMES))) for i, a in enumerate(ids)}
    ja = {a: i % 2 == 1 for i, a in enumerate(ids)}
    sc = Scenario()
    span = hours * 3600.0
    counter = {"n": 0}

    def event(agent: str, t: float, typ: str, content: str, participants=(), **meta) -> str:
        counter["n"] += 1
        eid = f"evt_{agent}_{counter['n']:06d}"
        sc.events.append({"agent_id": agent, "event_id": eid, "time": start + t, "type": typ, "content": content,
                          "participants": [agent, *participants], "metadata": meta})
        return eid

    # groups of four, each with a rule; the first member leads and keeps the group memory
    for g in range(agents // 4):
        members = ids[g * 4:(g + 1) * 4]
        sc.groups[f"group_{g}"] = members
    for g, (group, members) in enumerate(sc.groups.items()):
        made = []  # per rule: (rule_en, rule_ja, topic_en, topic_ja, sources, memory id)
        for r, rule in enumerate((RULES[g % len(RULES)], RULES[(g + 1) % len(RULES)])):
            rule_en, rule_ja = rule[0], rule[1]
            t = rnd.uniform(0.1, 0.5) * span
            sources = []
            for m in members:
                text = (f"グループの集会で決めた: {rule_ja}。" if ja[m] else f"At the group meeting we agreed that {rule_en}.")
                sources.append(event(m, t, "conversation", text, [x for x in members if x != m], request=True))
            mid = f"shared_{group}_{r}"
            sc.shared.append({"memory_id": mid, "author": members[0], "group_id": group, "created_at": start + t,
                              "content": f"Group rule ({group}): {rule_en} / {rule_ja}", "source_events": sources})
            made.append((*rule, sources, mid))
        asked, other = made[g % 2], made[1 - g % 2]
        rule_en, rule_ja, topic_en, topic_ja, sources, mid = asked
        for n, m in enumerate(members):
            q = f"私たちのグループは{topic_ja}について何を決めた?" if ja[m] else f"What did our group agree about {topic_en}?"
            sc.questions.append(Question(m, "rule", q, [sources[n]], rule_ja if ja[m] else rule_en, "goals",
                                         shared=mid, decoys=[other[4][n], other[5]], rule="first",
                                         decoy_answers=[other[1] if ja[m] else other[0]]))
        outsider = ids[(g * 4 + 5) % agents]
        if outsider not in members:
            sc.outsiders += [(outsider, made[0][5]), (outsider, made[1][5])]

    for i, a in enumerate(ids):
        others = [x for x in ids if x != a]
        teller, helper, once, failer = rnd.sample(others, 4)
        thing_en, thing_ja = rnd.choice(THINGS)
        place = rnd.randrange(len(PLACES_EN))
        # told: a fact from another agent
        t = rnd.uniform(0.05, 0.9) * span
        told = event(a, t, "conversation",
                     f"{name[teller]}が{thing_ja}は{PLACES_JA[place]}にあると教えてくれた。" if ja[a] else
                     f"{name[teller]} told me that {thing_en} can be found in {PLACES_EN[place]}.", [teller])
        other_teller = rnd.choice([x for x in others if x not in (teller, helper, once, failer)])
        other_en, other_ja = rnd.choice([x for x in THINGS if x != (thing_en, thing_ja)])
        other_place = rnd.randrange(len(PLACES_EN))
        event(a, rnd.uniform(0.05, 0.9) * span, "conversation",
              f"{name[other_teller]}が{other_ja}は{PLACES_JA[other_place]}にあると教えてくれた。" if ja[a] else
              f"{name[other_teller]} told me that {other_en} can be found in {PLACES_EN[other_place]}.", [other_teller])
        q = f"{thing_ja}がどこにあるか誰が教えてくれた?" if ja[a] else f"Who told me where to find {thing_en}?"
        sc.questions.append(Question(a, "told", q, [told], name[teller], "social"))
        # trust: one helper three times, another once, one who promised and failed
        help_ids = []
        for k in range(3):
            h_en, h_ja = rnd.choice(HELP)
            help_ids.append(event(a, rnd.uniform(0.05, 0.95) * span, "action",
                                  f"{name[helper]}が{h_ja}。" if ja[a] else f"{name[helper]} {h_en}.", [helper],
                                  goal_related=True))
        h_en, h_ja = rnd.choice(HELP)
        once_id = event(a, rnd.uniform(0.05, 0.95) * span, "action", f"{name[once]}が{h_ja}。" if ja[a] else
                        f"{name[once]} {h_en}.", [once], goal_related=True)
        failed_id = event(a, rnd.uniform(0.05, 0.95) * span, "conversation",
                          f"{name[failer]}は手伝うと約束したが来なかった。" if ja[a] else
                          f"{name[failer]} promised to help but never came.", [failer], failure=True)
        q = "いちばんよく手伝ってくれるのは誰?" if ja[a] else "Who has helped me the most?"
        sc.questions.append(Question(a, "trust", q, help_ids, name[helper], "social", decoys=[once_id, failed_id],
                                     rule="most", decoy_answers=[name[once], name[failer]]))
        # latest: the same animal seen twice, in two places
        an_en, an_ja = rnd.choice(ANIMALS)
        p1, p2 = rnd.sample(range(len(PLACES_EN)), 2)
        t1 = rnd.uniform(0.05, 0.4) * span
        t2 = rnd.uniform(0.6, 0.95) * span
        first, last = (event(a, t, "observation", f"{PLACES_JA[p]}で{an_ja}を見た。" if ja[a] else
                             f"I saw a {an_en} near {PLACES_EN[p]}.", threat=True) for t, p in ((t1, p1), (t2, p2)))
        q = f"最後に{an_ja}を見たのはどこ?" if ja[a] else f"Where did I last see the {an_en}?"
        places = PLACES_JA if ja[a] else PLACES_EN
        sc.questions.append(Question(a, "latest", q, [last], places[p2], "planning", decoys=[first], rule="first",
                                     decoy_answers=[places[p1]]))
        # routine distractors
        pool = ROUTINE_JA if ja[a] else ROUTINE_EN
        places = PLACES_JA if ja[a] else PLACES_EN
        for _ in range(routine_per_agent):
            n = rnd.choice(others)
            event(a, rnd.uniform(0, span), rnd.choice(["action", "observation", "conversation"]),
                  rnd.choice(pool).format(p=rnd.choice(places), n=name[n]), [n])
    sc.events.sort(key=lambda e: (e["time"], e["event_id"]))
    return sc
