"""Japanese patterns for tastes: likes, dislikes, favourites, quitting and switching."""

from __future__ import annotations

from nodes.text.tokenize import Morpheme, morphemes

from .draft import Draft
from .ja_grammar import Mood, clause_start, key_of, mood_after, noun_span_after, noun_span_before, surface_of
from .ja_sentence import NO_LONGER, JaSentence, about, object_before

_LIKE = frozenset(("好き", "大好き"))
_DISLIKE = frozenset(("嫌い", "大嫌い", "苦手"))
_HOOKED = frozenset(("嵌まる", "はまる"))
_QUIT = frozenset(("やめる", "止める", "辞める"))
_SWITCH = frozenset(("する", "変える", "切り替える", "乗り換える", "替える", "換える"))
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
        no_longer = mood.stopped or any(x.surface in NO_LONGER for x in s.toks[start:obj_start])
        used_to = mood.past and any(x.surface in _USED_TO for x in s.toks[start:obj_start])
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
        d = s.draft(attribute, span, "ja.hooked" if hooked else "ja.like" if positive_like else "ja.dislike",
                    subject=who.subject, polarity=polarity, context=who.context)
        if d:
            out.append(d)
    return out


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
    for i in range(len(toks) - 4):
        if toks[i].normalized not in _LIKE or toks[i + 1].surface != "な" or toks[i + 3].surface != "は":
            continue
        noun = toks[i + 2]
        span = noun_span_after(toks, i + 4)
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
            span = noun_span_before(toks, i - 1)
            if span is None:
                continue
            new = list(toks[span[0]:span[1]])
            old_span = noun_span_before(toks, span[0] - 1) if span[0] > 1 and toks[span[0] - 1].surface == "から" else None
            quit_before = any(x.dictionary in _QUIT for x in toks[:span[0]])
            if t.dictionary == "する" and old_span is None and not quit_before:
                continue  # 「紅茶にした」 alone is a choice made once, not a switch
            who = about(s, span[0])
            if who.subject is None:
                continue
            value = surface_of(new)
            category = s.params.categories.get(value) or s.params.categories.get(key_of(new), "")
            attribute = category if category in s.params.policy and category in ("drink", "food") else "likes"
            d = s.draft(attribute, new, "ja.switch", subject=who.subject, context=who.context)
            if d:
                out.append(d)
            if old_span is not None:
                d = s.draft("likes", toks[old_span[0]:old_span[1]], "ja.switch", subject=who.subject,
                            polarity="negative", context=who.context)
                if d:
                    out.append(d)
    return out
