"""Japanese patterns for tastes: likes, dislikes, favourites, quitting and switching."""

from __future__ import annotations

from lumina_memory.nodes.text.tokenize import Morpheme, morphemes

from .draft import Draft
from .ja_grammar import (
    Mood, clause_start, key_of, mood_after, noun_span_before, phrase_after, phrase_before, surface_of,
)
from .ja_sentence import NO_LONGER, JaSentence, about, object_before

_LIKE = frozenset(("好き", "大好き"))
_DISLIKE = frozenset(("嫌い", "大嫌い", "苦手"))
_HOOKED = frozenset(("嵌まる", "はまる"))
_QUIT = frozenset(("やめる", "止める", "辞める"))
_SWITCH = frozenset(("する", "変える", "変わる", "切り替える", "乗り換える", "替える", "換える"))
_USED_TO = frozenset(("昔", "前", "以前", "子供", "小さい頃", "学生"))
_OBJECT_PARTICLES = frozenset(("が", "は", "も", "を", "って"))


def _compound(t: Morpheme, words: frozenset[str]) -> tuple[str, str] | None:
    """「猫好き」 is one morpheme: (thing, predicate) when a noun ends with a like/dislike word."""
    if t.pos[0] != "名詞":
        return None
    for w in words:
        if t.surface.endswith(w) and len(t.surface) > len(w):
            return t.surface[: -len(w)], w
    return None


# --- rules -------------------------------------------------------------------------------------------------


def likes(s: JaSentence) -> list[Draft]:
    out: list[Draft] = []
    for i, t in enumerate(s.toks):
        like = t.normalized in _LIKE or t.surface in _LIKE
        dislike = t.normalized in _DISLIKE or t.surface in _DISLIKE
        hooked = t.normalized in _HOOKED and t.pos[0] == "動詞"
        compound = _compound(t, _LIKE | _DISLIKE)
        if not (like or dislike or hooked or compound):
            continue
        mood = mood_after(s.toks, i)
        if mood.unreal or _modifies_noun(s.toks, i, mood):
            continue
        if compound:
            thing, word = compound
            like, dislike = word in _LIKE, word in _DISLIKE
            obj_start, span = i, list(morphemes(thing))
        else:
            found = object_before(s, i, frozenset(("に",)) if hooked else _OBJECT_PARTICLES)
            if found is None:
                continue
            obj_start, span = found
        who = about(s, obj_start)
        if who.subject is None:
            continue
        start = clause_start(s.toks, obj_start)
        no_longer = mood.stopped or any(x.surface in NO_LONGER for x in s.toks[start:i])  # もう before or after the object
        used_to = mood.past and any(  # 昔は好きだった ended; 昔から好きだった did not
            x.surface in _USED_TO and k + 1 < i and s.toks[k + 1].surface == "は" for k, x in enumerate(s.toks[:i]) if k >= start)
        positive_like = like or hooked
        if mood.became and not mood.negated:
            attribute, polarity = ("likes" if positive_like else "dislikes"), "positive"  # 好きになった
        elif mood.negated:
            if no_longer:
                attribute, polarity = ("likes" if positive_like else "dislikes"), "negative"
            elif positive_like and not hooked:
                attribute, polarity = "dislikes", "positive"  # 好きじゃない
            else:
                continue  # 嫌いじゃない says little
        elif used_to:
            attribute, polarity = ("likes" if positive_like else "dislikes"), "negative"
        elif mood.past and not mood.progressive and not hooked:
            continue  # 好きだった with no 昔: not sure it ended
        else:
            attribute, polarity = ("likes" if positive_like else "dislikes"), "positive"
        if attribute == "likes" and polarity == "positive":
            attribute = _favourite_kind(s, span, obj_start, i) or attribute
        d = s.draft(attribute, span, "ja.hooked" if hooked else "ja.like" if positive_like else "ja.dislike",
                    subject=who.subject, polarity=polarity, context=who.context)
        if d:
            out.append(d)
    return out


_CONSUME = {"drink": "飲む", "food": "食べる"}


def _favourite_kind(s: JaSentence, span: list[Morpheme], obj_start: int, i: int) -> str:
    """A drink or food liked best (一番好き, 餃子のほうが好き) or liked while saying one has it (好きすぎて毎日
    飲んでる) is the current drink or food; any other like is just a like."""
    category = s.params.categories.get(surface_of(span)) or s.params.categories.get(key_of(span), "")
    if category not in _CONSUME:
        return ""
    between = surface_of(s.toks[obj_start:i])
    best = "一番" in between or "のほうが" in between or "の方が" in between
    consumed = any(t.dictionary == _CONSUME[category] for t in s.toks[i:])
    return category if best or consumed else ""


def _modifies_noun(toks: tuple[Morpheme, ...], i: int, mood: Mood) -> bool:
    """「好きな映画」「妹が好きなケーキ」: the predicate describes a noun, it states nothing by itself."""
    j = i + 1
    if j < len(toks) and toks[j].surface in ("な", "の") and toks[j].pos[0] == "助動詞":
        j += 1
    elif mood.end > i + 1:
        j = mood.end
    return j < len(toks) and toks[j].pos[0] == "名詞" and j == i + 2 and toks[j].pos[1] != "数詞"


def favourite(s: JaSentence) -> list[Draft]:
    """「好きな飲み物は紅茶」「一番好きな映画はインセプション」."""
    out: list[Draft] = []
    toks = s.toks
    if s.asked:
        # 「一番好きな食べ物？」 then 「たこ焼きかな！」: the answer opens the next sentence
        attribute = s.asked
        span = phrase_after(toks, 0)
        if span is not None and (span[2] >= len(toks) or toks[span[2]].surface in _ANSWER_ENDS):
            d = s.draft(attribute, toks[span[0]:span[1]], "ja.favourite")
            if d:
                out.append(d)
    for i in range(len(toks) - 4):
        if toks[i].normalized not in _LIKE or toks[i + 1].surface != "な" or toks[i + 3].surface != "は":
            continue
        noun = toks[i + 2]
        span = phrase_after(toks, i + 4)
        if span is None or noun.pos[0] != "名詞":
            continue
        mood = mood_after(toks, span[1] - 1)
        if mood.unreal or mood.negated:
            continue
        who = about(s, max(i - 1, 0))
        if who.subject is None:
            continue
        attribute = s.params.favourite_nouns.get(noun.surface, "likes")
        d = s.draft(attribute, toks[span[0]:span[1]], "ja.favourite", subject=who.subject,
                    detail="" if attribute != "likes" else noun.surface, context=who.context)
        if d:
            out.append(d)
    return out


_FIRM = ("だけは", "ほんと", "本当に", "絶対", "マジで", "もう")
_ANSWER_ENDS = frozenset("か かな です だ だよ だね 一択 ! 。 、 かも".split())


def asks_own_favourite(s: JaSentence) -> str:
    """「一番好きな食べ物？」 said by the user before answering it: the attribute asked, or ''."""
    toks = [t for t in s.toks if t.surface not in ("?", "一番", "いちばん")]
    if len(toks) == 3 and toks[0].normalized in _LIKE and toks[1].surface == "な":
        return s.params.favourite_nouns.get(toks[2].surface, "")
    return ""


def _favourite_topic(s: JaSentence) -> str:
    """The attribute of a 「好きな<noun>」 the sentence talks about (drink, food, film), or ''."""
    for k in range(len(s.toks) - 2):
        if s.toks[k].normalized in _LIKE and s.toks[k + 1].surface == "な":
            return s.params.favourite_nouns.get(s.toks[k + 2].surface, "")
    return ""


def tastes_in_words(s: JaSentence) -> list[Draft]:
    """「ほうじ茶派」「紅茶ばっかり飲んでる」「登山が趣味」「ヨガはもう飽きちゃった」「アニメはもう卒業した」."""
    out: list[Draft] = []
    toks = s.toks

    def add(attribute: str, span, polarity: str = "positive", at: int = 0, pattern: str = "ja.like") -> None:
        who = about(s, at)
        if who.subject is None:
            return
        d = s.draft(attribute, span, pattern, subject=who.subject, polarity=polarity, context=who.context)
        if d:
            out.append(d)

    def kind_of(span) -> str:
        value = surface_of(span)
        category = s.params.categories.get(value) or s.params.categories.get(key_of(span), "")
        return category if category in ("drink", "food") else "likes"

    for i, t in enumerate(toks):
        if t.surface == "派" and t.pos[0] == "接尾辞" and i > 0:
            span = noun_span_before(toks, i)
            mood = mood_after(toks, i)
            if span and not (mood.unreal or mood.negated or mood.past):
                add(kind_of(toks[span[0]:span[1]]), toks[span[0]:span[1]], at=span[0], pattern="ja.favourite")
        elif t.dictionary == "飲む" and i > 1 and toks[i - 1].normalized in ("ばかり", "しか"):
            span = noun_span_before(toks, i - 1)
            mood = mood_after(toks, i)
            only = toks[i - 1].normalized == "しか"
            if span and not mood.unreal and (mood.negated == only) and (mood.progressive or not mood.past):
                add("drink", toks[span[0]:span[1]], at=span[0], pattern="ja.favourite")
        elif t.surface == "無理" and i > 2:
            before = surface_of(toks[max(0, i - 4):i])
            if not before.endswith(_FIRM) or not any(w in before for w in ("だけは", "は")):
                continue  # 明日は無理 (cannot make it) is no taste
            k = i
            while k > 0 and toks[k - 1].surface in ("だけ", "は", "ほんと", "本当", "に", "絶対", "マジ", "で", "もう"):
                k -= 1
            span = noun_span_before(toks, k)
            mood = mood_after(toks, i)
            if span and not (mood.unreal or mood.negated or mood.past):
                add("dislikes", toks[span[0]:span[1]], at=span[0], pattern="ja.dislike")
        elif t.surface == "趣味" and t.pos[0] == "名詞":
            if i > 1 and toks[i - 1].surface in ("が", "は"):
                span = noun_span_before(toks, i - 1)
                mood = mood_after(toks, i)
            elif i + 2 < len(toks) and toks[i + 1].surface == "は":
                found = phrase_after(toks, i + 2)
                span = found[:2] if found else None
                mood = mood_after(toks, span[1] - 1) if span else Mood()
            else:
                continue
            if span and not (mood.unreal or mood.negated or mood.past):
                add("likes", toks[span[0]:span[1]], at=min(span[0], i))
        elif t.dictionary in ("飽きる", "卒業") and (t.pos[0] == "動詞" or i + 1 < len(toks) and toks[i + 1].dictionary == "する"):
            mood = mood_after(toks, i if t.pos[0] == "動詞" else i + 1)
            found = object_before(s, i, frozenset(("は", "に", "も", "を", "から")))
            if found is None or mood.unreal or mood.negated or not mood.past:
                continue
            start = clause_start(toks, found[0])
            if t.dictionary == "卒業" and not any(x.surface in NO_LONGER for x in toks[start:i]):
                continue  # 大学を卒業した is no taste
            add("likes", found[1], "negative", found[0])
    return out


def quits_and_switches(s: JaSentence) -> list[Draft]:
    """「タバコやめた」「コーヒーやめて紅茶にした」「コーヒーから紅茶に変えた」."""
    out: list[Draft] = []
    toks = s.toks
    for i, t in enumerate(toks):
        if t.pos[0] != "動詞":
            continue
        if t.dictionary in _QUIT or t.normalized in _QUIT:
            mood = mood_after(toks, i)
            later_past = any(x.pos[0] == "助動詞" and x.dictionary == "た" for x in toks[mood.end:])
            if mood.unreal or mood.negated or not (mood.past or (mood.te_form and later_past)):
                continue
            found = object_before(s, i, frozenset(("を", "は", "も")))
            if found is None:
                continue
            obj_start, span = found
            who = about(s, obj_start)
            if who.subject is None:
                continue
            attributes = ("works_at",) if t.dictionary == "辞める" else ("likes", "habit")
            for attribute in attributes:
                d = s.draft(attribute, span, "ja.quit", subject=who.subject, polarity="negative", context=who.context)
                if d:
                    out.append(d)
        elif t.dictionary in _SWITCH and i >= 2 and toks[i - 1].surface == "に":
            mood = mood_after(toks, i)
            if mood.unreal or mood.negated or not mood.past:
                continue
            span = phrase_before(toks, i - 1)
            if span is None:
                continue
            new = list(toks[span[0]:span[1]])
            outer = span[2]
            old_span = phrase_before(toks, outer - 1) if outer > 1 and toks[outer - 1].surface == "から" else None
            quit_before = any(x.dictionary in _QUIT for x in toks[:outer])
            if t.dictionary in ("する", "変わる") and old_span is None and not quit_before:
                continue  # 「紅茶にした」 alone is a choice made once, not a switch
            who = about(s, old_span[2] if old_span else outer)
            if who.subject is None:
                continue
            value = surface_of(new)
            category = s.params.categories.get(value) or s.params.categories.get(key_of(new), "")
            topic = _favourite_topic(s)
            attribute = topic or (category if category in ("drink", "food") else "likes")
            d = s.draft(attribute, new, "ja.switch", subject=who.subject, context=who.context)
            if d:
                out.append(d)
            if old_span is not None and not s.params.is_single(attribute):
                d = s.draft(attribute, toks[old_span[0]:old_span[1]], "ja.switch", subject=who.subject,
                            polarity="negative", context=who.context)
                if d:
                    out.append(d)
            elif old_span is not None and attribute in ("drink", "food"):
                d = s.draft("likes", toks[old_span[0]:old_span[1]], "ja.switch", subject=who.subject,
                            polarity="negative", context=who.context)
                if d:
                    out.append(d)
    return out
