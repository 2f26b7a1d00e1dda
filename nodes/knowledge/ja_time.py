"""Japanese patterns in time: plans and dated events, habits."""

from __future__ import annotations

from lumina_memory.nodes.text.tokenize import Morpheme

from .dates import find_date, local_day
from .draft import Draft
from .ja_grammar import is_katakana, key_of, mood_after, noun_span_after, noun_span_before, surface_of
from .ja_sentence import JaSentence, about
from .models import USER

_NON_ACTIVITY = frozenset("なる ある いる 思う 言う 降る 晴れる 曇る 疲れる 眠る 困る 分かる 出来る できる 見える 聞こえる "
                          "住む 暮らす 慣れる".split())
_PLAN_NOUNS = frozenset(("予定", "つもり"))


def _predicate_value(s: JaSentence, start: int) -> tuple[list[Morpheme], int] | None:
    """The phrase from ``start`` to the clause's main verb (dictionary form), with the verb's index."""
    toks = s.toks
    for j in range(start, len(toks)):
        t = toks[j]
        if t.pos[0] == "補助記号" or (t.pos[0] == "助詞" and t.pos[1] == "接続助詞" and t.surface not in ("て", "で")):
            return None
        helper = j > 0 and toks[j - 1].pos[1] == "接続助詞" and toks[j - 1].surface in ("て", "で")
        if t.pos[0] == "動詞" and (t.pos[1] != "非自立可能" or not helper):
            if t.dictionary == "する" and j > start and toks[j - 1].pos[0] == "名詞":
                span = list(toks[start:j])  # ジョギングする → ジョギング
            else:
                span = [*toks[start:j], t._replace(surface=t.dictionary)]
            while span and span[0].pos[0] in ("助詞", "補助記号"):
                span.pop(0)
            return (span, j) if span else None
    return None


def _later_unreal(toks, start: int) -> bool:
    """「まとめて観たい」: a wish on a later verb of the clause makes the whole clause a wish."""
    for k in range(start, len(toks)):
        if toks[k].pos[0] == "補助記号":
            return False
        if toks[k].pos[0] == "動詞" and mood_after(toks, k).unreal:
            return True
    return False


def plans(s: JaSentence) -> list[Draft]:
    """「12月5日に京都に行く」「明日は歯医者の予定」「昨日京都に行った」 (day resolved against the turn's time)."""
    toks = s.toks
    mention = find_date(s.text, s.said_at, s.zone, future=True, english=False)
    if mention is None:
        return []
    # the morpheme right after the date expression
    pos = 0
    after = None
    for k, t in enumerate(toks):
        pos += len(t.surface)
        if pos >= mention.end:
            after = k + 1
            break
    if after is None:
        return []
    while after < len(toks) and toks[after].surface in ("に", "は", "、", "も", "の", "から"):
        after += 1
    today = local_day(s.said_at, s.zone)
    found = _predicate_value(s, after)
    if found is None:
        # 「明日は歯医者の予定」: a noun and 予定
        span = noun_span_after(toks, after)
        if span is None or span[1] + 1 >= len(toks) or toks[span[1]].surface != "の" or toks[span[1] + 1].surface not in _PLAN_NOUNS:
            return []
        if mention.day is not None and mention.day < today:
            return []
        d = s.draft("plan", toks[span[0]:span[1]], "ja.plan", event_date=mention.day, when_text=mention.text)
        return [d] if d else []
    span, verb = found
    if toks[verb].dictionary in _NON_ACTIVITY or about(s, verb).subject != USER:
        return []
    if any(x.pos[0] == "助詞" and x.surface == "が" for x in toks[after:verb]):
        return []  # 雨が降る: the sentence is about something else
    mood = mood_after(toks, verb)
    if mood.unreal or mood.negated or _later_unreal(toks, mood.end):
        return []
    if mood.progressive and not mood.past:
        return []  # 住んでる, 飲んでる: what is going on, not what is planned
    if mood.past:
        past = find_date(s.text, s.said_at, s.zone, future=False, english=False)
        day = past.day if past else None
        if day is not None and day > today:
            return []
        d = s.draft("event", span, "ja.event", event_date=day, when_text=mention.text)
        return [d] if d else []
    if mention.day is not None and mention.day < today:
        return []
    d = s.draft("plan", span, "ja.plan", event_date=mention.day, when_text=mention.text)
    return [d] if d else []


_GENERIC_VERBS = frozenset("飲む 食べる する やる 吸う 見る 聴く 聞く 読む 弾く".split())


def _habit_key(span: list[Morpheme]) -> str:
    """「コーヒーを飲む」 is keyed by コーヒー, so 「コーヒーやめた」 ends it."""
    if len(span) >= 3 and span[-1].dictionary in _GENERIC_VERBS and span[-2].surface in ("を", "は", "も"):
        noun = noun_span_before(tuple(span), len(span) - 2)
        if noun is not None:
            return key_of(span[noun[0]:noun[1]])
    return key_of(span)


def habits(s: JaSentence) -> list[Draft]:
    """「毎朝ジョギングしてる」「毎日コーヒーを飲む」「毎週末テニスしてる」."""
    toks = s.toks
    markers = s.params.habit_markers_ja
    for k, t in enumerate(toks):
        marker = t.surface
        end = k + 1
        if t.surface == "毎" and k + 1 < len(toks):  # 毎 + 週末
            marker, end = t.surface + toks[k + 1].surface, k + 2
        if marker not in markers:
            continue
        while end < len(toks) and toks[end].surface in ("は", "に", "、", "の"):
            end += 1
        found = _predicate_value(s, end)
        if found is None:
            return []
        span, verb = found
        if toks[verb].dictionary in _NON_ACTIVITY | _TAKING_UP or about(s, verb).subject != USER:
            return []
        mood = mood_after(toks, verb)
        if mood.unreal or mood.negated or mood.past or _later_unreal(toks, mood.end):
            return []
        d = s.draft("habit", span, "ja.habit", detail=marker, category="", value_key=_habit_key(span))
        return [d] if d else []
    return []


_TAKING_UP = frozenset(("始める", "続ける"))
_NOT_HABITS = frozenset("仕事 バイト アルバイト 準備 生活 一人暮らし 就活 転職 引っ越し".split())
_SKIP_BACK = frozenset("も を は 、 ずっと ちょっとずつ 少しずつ 最近 また".split())


def taking_up(s: JaSentence) -> list[Draft]:
    """「筋トレも始めたよ、毎日ちょっとずつ」「ストレッチ、毎日続けてるよ」: an activity taken up is a habit."""
    toks = s.toks
    markers = s.params.habit_markers_ja
    for i, t in enumerate(toks):
        if t.dictionary not in _TAKING_UP or t.pos[0] != "動詞" or (i > 0 and toks[i - 1].pos[0] == "動詞"):
            continue  # 働き始めた: the verb before is what started
        mood = mood_after(toks, i)
        if mood.unreal or mood.negated:
            continue
        k, marker = i, next((x.surface for x in toks if x.surface in markers), "")
        while k > 0 and (toks[k - 1].surface in _SKIP_BACK or toks[k - 1].surface in markers):
            k -= 1
        span = noun_span_before(toks, k)
        if span is None or about(s, span[0]).subject != USER:
            continue
        words = toks[span[0]:span[1]]
        head = words[-1]
        if surface_of(words) in _NOT_HABITS or not (head.pos[2] == "サ変可能" or is_katakana(head.surface) or marker):
            continue
        d = s.draft("habit", words, "ja.habit", detail=marker, category="")
        return [d] if d else []
    return []


_TRAVEL = frozenset(("行く", "旅行", "遊ぶ", "出かける", "訪れる", "行ける"))


def visited(s: JaSentence) -> list[Draft]:
    """「この前台湾行ってきた」「週末台湾まで旅行してきた」「伊勢にも行ったよ」: a named place been to."""
    toks = s.toks
    out: list[Draft] = []
    for i, t in enumerate(toks):
        went = t.dictionary == "行う" and t.surface == "行っ" and i > 0 and toks[i - 1].surface in ("に", "も", "へ")
        if (t.dictionary not in _TRAVEL and not went) or t.pos[0] not in ("動詞", "名詞"):
            continue  # Sudachi reads 「奈良にも行った」 as 行う
        verb = i + 1 if t.pos[0] == "名詞" and i + 1 < len(toks) and toks[i + 1].dictionary == "する" else i
        if t.pos[0] == "名詞" and verb == i:
            continue
        mood = mood_after(toks, verb)
        rest = "".join(x.surface for x in toks[mood.end:mood.end + 4])
        if mood.unreal or mood.negated or not mood.past or rest.startswith(("ことない", "ことがない", "事ない")):
            continue  # 一回も行ったことない
        k = i
        while k > 0 and toks[k - 1].surface in ("に", "へ", "まで", "も", "には", "、", "初めて", "にも", "遊び"):
            k -= 1
        span = noun_span_before(toks, k)
        if span is None or toks[span[1] - 1].pos[1] != "固有名詞" or about(s, span[0]).subject != USER:
            continue
        d = s.draft("visited", toks[span[0]:span[1]], "ja.visited")
        if d:
            out.append(d)
    return out
