"""Japanese patterns for a life: places, work, names, people and pets, ages, possessions."""

from __future__ import annotations

from lumina_memory.nodes.text.tokenize import Morpheme

from .draft import Draft
from .ja_grammar import (
    FIRST_PERSON, Mood, clause_start, is_hiragana, is_katakana, key_of, mood_after, noun_span_after,
    noun_span_before, strip_honorific, surface_of,
)
from .ja_sentence import NO_LONGER, JaSentence, about
from .models import USER

_NAME_FOLLOW = frozenset(("は", "が", "も", "って", "と", "、", "。", "!", "を", "に", "の"))
_STRICT_NAME_FOLLOW = frozenset(("は", "が", "も", "って", "と", "、", "。", "!"))
_AGE_FILLERS = frozenset("今 もう 今年 今日 昨日 今月 で は も 、 ついに とうとう".split())


def _verb_with_place(s: JaSentence, verbs: frozenset[str], particles: tuple[str, ...]) -> list[tuple[int, list[Morpheme], Mood]]:
    """(verb index, place, mood) for 「<place>に住む」-shaped phrases."""
    found = []
    for i, t in enumerate(s.toks):
        if t.dictionary not in verbs and t.normalized not in verbs:
            continue
        k = i - 1
        if k >= 0 and s.toks[k].surface in ("は", "も"):
            k -= 1
        if k < 1 or s.toks[k].surface not in particles:
            continue
        span = noun_span_before(s.toks, k)
        if span is None:
            continue
        found.append((i, list(s.toks[span[0]:span[1]]), mood_after(s.toks, i)))
    return found


def places(s: JaSentence) -> list[Draft]:
    """住んでる, 引っ越した, 出身, 勤めてる, 働いてる, 在住, 生まれ, 就職した."""
    out: list[Draft] = []
    toks = s.toks

    def add(attribute: str, span: list[Morpheme], pattern: str, at: int, polarity: str = "positive") -> None:
        who = about(s, at)
        if who.subject is None:
            return
        d = s.draft(attribute, span, pattern, subject=who.subject, polarity=polarity, context=who.context)
        if d:
            out.append(d)

    for i, span, mood in _verb_with_place(s, frozenset(("住む",)), ("に",)):
        if mood.unreal or (mood.past and not mood.negated):
            continue  # 住んでた: where she used to live is not where she lives
        start = clause_start(toks, i)
        if mood.negated:
            if any(x.surface in NO_LONGER for x in toks[start:i]):
                add("lives_in", span, "ja.lives", i, "negative")
            continue
        add("lives_in", span, "ja.lives", i)
    for i, span, mood in _verb_with_place(s, frozenset(("引っ越す", "越す", "移住", "引越す")), ("に", "へ")):
        if mood.unreal or mood.negated or not mood.past:
            continue
        add("lives_in", span, "ja.moved", i)
    for i, span, mood in _verb_with_place(s, frozenset(("勤める",)), ("に",)):
        if not mood.unreal and not mood.negated and (mood.progressive or not mood.past):
            add("works_at", span, "ja.works", i)
    for i, span, mood in _verb_with_place(s, frozenset(("働く",)), ("で",)):
        if not mood.unreal and not mood.negated and (mood.progressive or not mood.past):
            add("works_at", span, "ja.works", i)
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.surface in ("住み", "暮らし") and i > 0 and toks[i - 1].pos[0] == "名詞":  # 金沢住み, 名古屋暮らし
            span = noun_span_before(toks, i)
            tail = mood_after(toks, i) if t.pos[0] == "動詞" else Mood(end=i + 1)
            if span and not tail.unreal and not tail.negated and toks[span[1] - 1].pos[1] != "数詞":
                add("lives_in", list(toks[span[0]:span[1]]), "ja.lives", span[0])
            continue
        if t.surface in ("育ち", "地元") and nxt is not None and nxt.surface in ("も", "は"):  # 生まれも育ちも静岡, 地元は新潟
            span = noun_span_after(toks, i + 2)
            if span and not mood_after(toks, span[1] - 1).unreal:
                add("from", list(toks[span[0]:span[1]]), "ja.from", i)
            continue
        if t.surface in ("在住", "出身", "生まれ") and nxt is not None and nxt.surface == "の" and i + 2 < len(toks) \
                and toks[i + 2].pos[0] == "名詞":
            continue  # アイルランド出身のショーン先生: someone else's origin
        if t.surface in ("在住", "出身", "生まれ", "勤務", "就職") and t.pos[0] == "名詞":
            attribute = {"在住": "lives_in", "出身": "from", "生まれ": "from", "勤務": "works_at", "就職": "works_at"}[t.surface]
            pattern = {"lives_in": "ja.lives", "from": "ja.from", "works_at": "ja.works"}[attribute]
            mood = mood_after(toks, i)
            if mood.unreal or mood.negated:
                continue
            if t.surface in ("勤務", "就職"):
                if nxt is None or nxt.dictionary != "する" or i < 2 or toks[i - 1].surface not in ("に", "で"):
                    continue
                mood = mood_after(toks, i + 1)
                if mood.unreal or mood.negated or (t.surface == "勤務" and mood.past and not mood.progressive):
                    continue
                span = noun_span_before(toks, i - 1)
            elif nxt is not None and nxt.surface == "は":  # 出身は北海道
                span = noun_span_after(toks, i + 2)
                if span is None or mood_after(toks, span[1] - 1).unreal:
                    continue
            else:
                before = i - 1 if i > 0 and toks[i - 1].surface == "の" else i
                span = noun_span_before(toks, before)
            if span:
                add(attribute, list(toks[span[0]:span[1]]), pattern, min(span[0], i))
        if t.surface == "と" and nxt is not None and nxt.dictionary == "する" and i + 3 < len(toks):
            if toks[i + 2].surface in ("て", "で") and toks[i + 3].dictionary == "働く":
                mood = mood_after(toks, i + 3)
                span = noun_span_before(toks, i)
                if span and not mood.unreal and not mood.negated and (mood.progressive or not mood.past):
                    add("job", list(toks[span[0]:span[1]]), "ja.job", span[0])
        if t.surface in ("仕事", "職業") and nxt is not None and nxt.surface == "は" and i + 2 < len(toks):
            span = noun_span_after(toks, i + 2)
            if span is not None and span[1] == len(toks) or span is not None and toks[span[1]].pos[0] in ("助動詞", "補助記号", "助詞"):
                mood = mood_after(toks, span[1] - 1)
                if not mood.unreal and not mood.negated and not mood.past:
                    add("job", list(toks[span[0]:span[1]]), "ja.job", i)
    return out


def names(s: JaSentence) -> list[Draft]:
    """「名前はさくら」「山田花子と申します」「猫の名前はモカ」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks):
        if t.surface == "名前" and i + 2 < len(toks) and toks[i + 1].surface == "は":
            span = noun_span_after(toks, i + 2)
            if span is None:
                continue
            mood = mood_after(toks, span[1] - 1)
            if mood.unreal or mood.negated:
                continue
            name = strip_honorific(toks[span[0]:span[1]])
            owner = toks[i - 2] if i >= 2 and toks[i - 1].surface == "の" else None
            if owner is None and s.registry.unnamed:
                attribute, kind = s.registry.unnamed  # 「猫飼ってるの。名前はソラ」
                d = s.draft(attribute, name, "ja.named", detail=kind)
                if d:
                    s.registry.add(d.value, attribute, kind)
                    out.append(d)
            elif owner is None and any(_names_a_relation(s, x) for x in toks[:i]):
                continue  # 「保護猫の茶トラで、名前はモカ」: the cat's name, not hers
            elif owner is None or owner.surface in FIRST_PERSON:
                who = about(s, i)
                if who.subject == USER:
                    d = s.draft("name", name, "ja.name")
                    if d:
                        out.append(d)
            elif owner.surface in s.params.relations or owner.normalized in s.params.relations:
                relation = owner.surface
                attribute = s.params.relations.get(relation) or s.params.relations[owner.normalized]
                d = s.draft(attribute, name, "ja.named", detail=relation)
                if d:
                    s.registry.add(d.value, attribute, relation)
                    out.append(d)
        if t.dictionary in ("申す", "言う", "いう") and i >= 2 and toks[i - 1].surface in ("と", "って"):
            if i + 1 < len(toks) and toks[i + 1].surface == "名前" and s.registry.unnamed and i == 2:
                attribute, kind = s.registry.unnamed  # 「ソラっていう名前」 after 「猫飼ってるの」
                d = s.draft(attribute, [toks[0]], "ja.named", detail=kind)
                if d and (is_katakana(d.value) or is_hiragana(d.value) or toks[0].pos[0] == "名詞"):
                    s.registry.add(d.value, attribute, kind)
                    out.append(d)
                continue
            mood = mood_after(toks, i)
            polite = any(x.dictionary == "ます" for x in toks[i + 1:mood.end])
            ends = mood.end >= len(toks) or toks[mood.end].pos[0] in ("補助記号", "助詞")
            if mood.unreal or mood.negated or mood.past or not ends:
                continue
            span = noun_span_before(toks, i - 1)
            if span is None or about(s, span[0]).subject != USER:
                continue
            if not all(x.pos[0] in ("感動詞", "補助記号", "フィラー") or x.surface in FIRST_PERSON for x in toks[:span[0]]):
                continue  # only 「あ、わたし拓海っていうの」-like openings: the name is the sentence's point
            first_person = span[0] > 0 and toks[span[0] - 1].surface in FIRST_PERSON
            if not (polite or first_person):
                continue  # 「モカっていうの」: whose name?
            d = s.draft("name", strip_honorific(toks[span[0]:span[1]]), "ja.name")
            if d:
                out.append(d)
    if any(t.surface == "名前" for t in toks) and not out:
        # 「名前言ってなかったね、陽菜です！」: a name said as the last clause, after the word 名前
        start = clause_start(toks, len(toks) - 1)
        span = noun_span_after(toks, start)
        if span is not None and span[1] < len(toks) and toks[span[1]].dictionary in ("です", "だ") and _looks_like_name(s, span, person=True):
            if mood_after(toks, span[1]).end >= len(toks) or toks[mood_after(toks, span[1]).end].pos[0] == "補助記号":
                d = s.draft("name", strip_honorific(toks[span[0]:span[1]]), "ja.name")
                if d:
                    out.append(d)
    return out


def _names_a_relation(s: JaSentence, t) -> bool:
    """A word that is, or ends with, a relation or pet noun (妹, 保護猫, 子犬)."""
    return t.pos[0] == "名詞" and any(t.surface.endswith(r) or t.normalized.endswith(r) for r in s.params.relations
                                      if not r.isascii())


def _looks_like_name(s: JaSentence, span: tuple[int, int], person: bool = False) -> bool:
    words = strip_honorific(s.toks[span[0]:span[1]])
    text = surface_of(words)
    honorific = span[1] - span[0] > len(words)
    if text in s.params.not_names or text in s.params.relations or text in s.params.categories:
        return False
    nxt = s.toks[span[1]].surface if span[1] < len(s.toks) else "。"
    if person:
        return all(w.pos[1] == "固有名詞" and w.pos[2] == "人名" for w in words) or (
            len(words) == 1 and (is_katakana(text) or is_hiragana(text)) and 1 < len(text) <= 6)
    kept = span[1] + (1 if nxt == "を" else 0)
    if kept < len(s.toks) and s.toks[kept].dictionary == "飼う":
        nxt = "。"  # 猫のソラ飼ってるの, 猫のモカを飼ってる
    if all(w.pos[1] == "固有名詞" and w.pos[2] == "人名" for w in words):
        return nxt in _NAME_FOLLOW
    if len(words) == 1 and (is_katakana(text) or (honorific and is_hiragana(text))) and len(text) <= 8:
        return nxt in _STRICT_NAME_FOLLOW
    return False


def people_and_pets(s: JaSentence) -> list[Draft]:
    """「妹の美咲」「猫のモカ」「友達のケンタくん」, and 「犬を飼ってる」「モカって猫を飼ってる」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks[:-2]):
        relation = t.surface if t.surface in s.params.relations else t.normalized if t.normalized in s.params.relations else None
        if relation is None or toks[i + 1].surface != "の" or t.pos[0] != "名詞":
            continue
        if i >= 2 and toks[i - 1].surface == "の" and toks[i - 2].surface not in FIRST_PERSON:
            continue  # 友達の妹の美咲: someone else's sister
        end = i + 2
        while end < len(toks) and (toks[end].pos[0] == "名詞" and toks[end].pos[1] != "数詞" or
                                   toks[end].surface in ("さん", "ちゃん", "くん", "君")):
            end += 1
        if end == i + 2 or not _looks_like_name(s, (i + 2, end)):
            continue
        attribute = s.params.relations[relation]
        d = s.draft(attribute, strip_honorific(toks[i + 2:end]), "ja.named", detail=t.surface)
        if d:
            s.registry.add(d.value, attribute, t.surface)
            out.append(d)
    for i, t in enumerate(toks):
        if t.dictionary != "飼う" or i < 1:
            continue
        mood = mood_after(toks, i)
        if mood.unreal or mood.negated or (mood.past and not mood.progressive) or about(s, i).subject != USER:
            continue
        span = noun_span_before(toks, i - 1 if toks[i - 1].surface == "を" else i)
        if span is None:
            continue
        species = surface_of(toks[span[0]:span[1]])
        if s.params.relations.get(species) != "pet" and s.params.relations.get(key_of(toks[span[0]:span[1]])) != "pet":
            continue
        k = span[0]
        if k >= 2 and toks[k - 1].surface in ("って", "という", "っていう") or (k >= 3 and toks[k - 1].dictionary in ("言う", "いう")):
            back = k - 1 if toks[k - 1].surface in ("って", "という", "っていう") else k - 2
            if toks[back].surface in ("と", "って") or toks[k - 1].surface in ("って", "という", "っていう"):
                name_span = noun_span_before(toks, back)
                if name_span is not None:
                    d = s.draft("pet", strip_honorific(toks[name_span[0]:name_span[1]]), "ja.named", detail=species)
                    if d:
                        s.registry.add(d.value, "pet", species)
                        out.append(d)
                    continue
        if any(x.pattern == "ja.named" and x.detail == species for x in out):
            continue  # 猫のソラ飼ってるの: the named pet says it
        d = s.draft("pet", toks[span[0]:span[1]], "ja.pet_kept", detail=species)
        if d:
            s.registry.unnamed = ("pet", species)
            out.append(d)
    return out


def ages(s: JaSentence) -> list[Draft]:
    """「猫のモカは3歳」「モカ4歳になった」「私は25歳です」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks[:-1]):
        if t.pos[1] != "数詞" or toks[i + 1].surface not in ("歳", "才"):
            continue
        j = i + 2
        nxt = toks[j].surface if j < len(toks) else "。"
        if nxt == "に" and j + 1 < len(toks) and toks[j + 1].dictionary == "なる":
            mood = mood_after(toks, j + 1)
            if mood.unreal or mood.negated or not mood.past:
                continue
        elif nxt in ("です", "だ", "よ", "ね", "。", "!", "、", "だよ", "な", "なの", "なん", "かあ", "かぁ", "か"):
            if nxt == "か" and j + 1 < len(toks) and toks[j + 1].surface not in ("あ", "ぁ", "!"):
                continue
            mood = mood_after(toks, i + 1)
            if mood.unreal or mood.negated or mood.past:
                continue
        else:
            continue  # 3歳の時, 3歳から, 3歳になる猫
        subject: str | None = None
        start = i
        while start > 0 and toks[start - 1].surface in _AGE_FILLERS:
            start -= 1  # 今年で30歳, ソラ、昨日で6歳, もう5歳
        if start > 0 and toks[start - 1].surface in s.registry.names:
            subject = toks[start - 1].surface  # Sudachi may read a pet's name as anything (ソラ: an interjection)
        elif start > 0 and toks[start - 1].pos[0] == "名詞" and toks[start - 1].pos[1] != "数詞":
            span = noun_span_before(toks, start)
            if span is not None:
                name = surface_of(strip_honorific(toks[span[0]:span[1]]))
                if name in s.registry.names or all(w.pos[2] == "人名" for w in toks[span[0]:span[1]]):
                    subject = name
        if subject is None:
            who = about(s, start)
            subject = who.subject
            if subject == USER and not any(x.surface in FIRST_PERSON for x in toks[:start]):
                # 「3歳になった」 alone: the name this turn just spoke of, or no one
                subject = s.registry.recent if start == 0 or all(x.surface in _AGE_FILLERS for x in toks[:start]) else None
        if subject is None:
            continue
        value = t.normalized if t.normalized.isdigit() else t.surface
        out.append(Draft(attribute="age", value=value, value_key=value, pattern="ja.age", subject=subject))
    return out


def possessions(s: JaSentence) -> list[Draft]:
    """「車を持ってる」「新しいiPhoneを買った」「車を売った」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks):
        if t.dictionary not in ("持つ", "買う", "売る", "手放す") or i < 2 or toks[i - 1].surface != "を":
            continue
        span = noun_span_before(toks, i - 1)
        if span is None:
            continue
        words = toks[span[0]:span[1]]
        is_new = span[0] > 0 and toks[span[0] - 1].dictionary in ("新しい",)
        known = surface_of(words) in s.params.possessions or words[-1].surface in s.params.possessions
        if not (known or is_new):
            continue
        mood = mood_after(toks, i)
        if mood.unreal or about(s, span[0]).subject != USER:
            continue
        if t.dictionary == "持つ":
            if mood.past and not mood.progressive:
                continue
            start = clause_start(toks, span[0])
            if mood.negated and not any(x.surface in NO_LONGER for x in toks[start:span[0]]):
                continue
            polarity = "negative" if mood.negated else "positive"
        elif mood.negated or not mood.past:
            continue
        else:
            polarity = "positive" if t.dictionary == "買う" else "negative"
        d = s.draft("has", words, "ja.has", polarity=polarity)
        if d:
            out.append(d)
    return out
