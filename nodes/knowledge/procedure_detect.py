"""Offline distillation (A8): a segment's turns → the procedure they teach, or None. A pure function.

A segment is procedural when, outside questions and past-tense narration, it holds
- a recipe or how-to cue (レシピ, 作り方, 手順, やり方, コツ, 材料, "recipe", "how to", "instructions") and at
  least ``min_steps`` clauses with a measured amount or a sequence marker (200g, 170度, 40分, まず, then), or
- at least two sequence markers (まず…次に…最後に, 〜してから〜する, 1. 2., ①②, "first … then … finally")
  and ``min_steps`` step clauses.
The steps are the clauses of the densest run of such clauses (no more than ``_GAP`` turns apart) plus the
instructions between them (an object and a verb, a request, an imperative), in the order said: extractive,
so a step is always something the conversation said. The title is the task the cue named (「チーズケーキの
レシピ」 → チーズケーキ, "how do I make pancakes" → pancakes, or 【チーズケーキ】), else the steps' most
frequent noun.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from lumina_memory.nodes.text.tokenize import STOP_NOUNS, morphemes

from .models import SourceTurn, as_source_turn
from .procedure_models import ProcedureDraft, ProcedureParams, Step
from .procedure_text import Clause, clauses, content_words, frequent_nouns, is_action, is_japanese, normal, quantities, task_key

_GAP = 3
"""Turns from one step clause (a measured or ordered one, or an instruction) to the next in one procedure."""

_JA_VERB_WAYS = "作り|つくり|焼き|茹で|ゆで|炊き|入れ|淹れ|煮|やり|使い|育て|洗い|選び|切り|巻き|揚げ|蒸し|漬け|溶き|作"
_JA_CUE_NOUNS = rf"レシピ|作り方|つくり方|作りかた|手順|やり方|方法|コツ|(?:{_JA_VERB_WAYS})方"
_JA_TITLE = re.compile(rf"([^\s、。！？!?「」『』（）()・]+?)の({_JA_CUE_NOUNS})")
_JA_CUE = re.compile(rf"{_JA_CUE_NOUNS}|材料|分量")
_EN_CUE = re.compile(r"\b(?:recipes?|how (?:to|do|can|should) |instructions?|ingredients|steps? (?:to|for)|here'?s how)\b",
                     re.I)
_EN_STOP_AT = r"(?=[?.!,;:]|$|\s(?:at home|properly|from scratch|without|with|in|for|so|because|that|like)\b)"
_EN_TITLES = (
    re.compile(rf"\bhow (?:do|can|should|would|did) (?:i|you|we|one) (?P<verb>[a-z]+) (?P<x>[a-z][a-z' -]{{1,40}}?){_EN_STOP_AT}", re.I),
    re.compile(rf"\bhow to (?P<verb>[a-z]+) (?P<x>[a-z][a-z' -]{{1,40}}?){_EN_STOP_AT}", re.I),
    re.compile(rf"\b(?:recipe|instructions) for (?P<x>[a-z][a-z' -]{{1,40}}?){_EN_STOP_AT}", re.I),
    re.compile(rf"\bsteps? (?:to|for) (?P<verb>make|cook|bake|brew|fix|set up|build|clean) (?P<x>[a-z][a-z' -]{{1,40}}?){_EN_STOP_AT}", re.I),
    re.compile(r"\b(?P<x>[a-z][a-z'-]{2,20}(?: [a-z][a-z'-]{2,20})?) recipe\b", re.I),
)
_EN_DETERMINERS = re.compile(r"^(?:(?:a|an|the|some|my|your|our|this|that|good|great|perfect|proper|really|nice)\s+)+", re.I)
_BRACKETS = re.compile(r"【([^】]{1,30})】|\[([^\]]{1,30})\]")
_SIGNALS = re.compile(
    rf"{_JA_CUE.pattern}|まず|次に|最後に|[てで]から|[\u2460-\u2473]|\d\s*(?:g|ml|度|分|°|cm|個|cups?|tbsp|tsp|minutes?)|"
    r"大さじ|小さじ|(?<!\S)\d{1,2}[.)．）]|\b(?:recipe|how to|how do|first|then|finally|step)\b", re.I)


def _ja_title(text: str) -> tuple[str, str] | None:
    """(title, description) from 「Xのレシピ」-like phrases: X is the noun compound right before の."""
    for m in _JA_TITLE.finditer(_BRACKETS.sub(lambda b: b.group(1) or b.group(2), text)):
        ms = list(morphemes(m.group(1)))
        tail: list[str] = []
        for morph in reversed(ms):
            if morph.pos[1] == "代名詞":  # 私のレシピ names no task
                tail = []
                break
            if morph.pos[0] not in ("名詞", "接尾辞"):
                break
            tail.insert(0, morph.surface)
        title = "".join(tail)
        if title and title not in STOP_NOUNS and content_words(title):
            return title, f"{title}の{m.group(2)}"
    return None


def _en_title(text: str) -> tuple[str, str] | None:
    for pattern in _EN_TITLES:
        for m in pattern.finditer(text):
            x = _EN_DETERMINERS.sub("", m.group("x").strip()).strip()
            x = " ".join(x.split()[:4])
            if not x or not content_words(x):
                continue
            verb = m.groupdict().get("verb")
            return x, (f"how to {verb.lower()} {x}" if verb else f"{x} recipe")
    return None


def _title(texts: Sequence[str], steps: Sequence[str]) -> tuple[str, str]:
    for text in texts:
        found = _ja_title(text) if is_japanese(text) else _en_title(text)
        if found is not None:
            return found
    for text in texts:
        for m in _BRACKETS.finditer(text):
            word = (m.group(1) or m.group(2)).strip()
            if content_words(word):
                return word, word
    common = frequent_nouns(list(steps), 1)
    return (common[0] if common else ""), steps[0][:80]


def _has_cue(texts: Sequence[str]) -> bool:
    return any(_JA_CUE.search(t) if is_japanese(t) else _EN_CUE.search(t) for t in texts)


def _strong(clause: Clause) -> bool:
    return not clause.question and not clause.narrative and (clause.markers > 0 or bool(quantities(clause.text)))


def _densest_run(steps: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """The strong step positions (turn, clause) of the run of steps — strong or instructions, none more than
    ``_GAP`` turns after the previous one — with the most strong steps (the first among equals)."""
    runs: list[list[tuple[int, int, bool]]] = []
    for position in steps:
        if runs and position[0] - runs[-1][-1][0] <= _GAP:
            runs[-1].append(position)
        else:
            runs.append([position])
    best = max(runs, key=lambda run: sum(strong for _, _, strong in run), default=[])
    return [(ti, ci) for ti, ci, strong in best if strong]


def distill(turns: Sequence[Mapping[str, Any] | Any], params: ProcedureParams | None = None) -> ProcedureDraft | None:
    """The procedure the turns teach, or None when they teach none."""
    params = params or ProcedureParams()
    source: list[SourceTurn] = [as_source_turn(t) for t in turns]
    texts = [t["text"] for t in source]
    if not _SIGNALS.search(normal("\n".join(texts))):
        return None  # most segments: no cue, marker or amount at all
    parsed = [clauses(t) for t in texts]
    run = _densest_run([(ti, ci, _strong(c)) for ti, cs in enumerate(parsed) for ci, c in enumerate(cs)
                        if _strong(c) or (not c.question and not c.narrative and is_action(c))])
    if not run:
        return None
    (first_turn, first_clause), last_turn = run[0], run[-1][0]
    members = set(run)
    chosen: list[tuple[int, Clause]] = []
    for ti in range(first_turn, last_turn + 1):
        for ci, c in enumerate(parsed[ti]):
            if ti == first_turn and ci < first_clause or c.question or c.narrative:
                continue
            if (ti, ci) in members or is_action(c):
                chosen.append((ti, c))
    markers = sum(parsed[ti][ci].markers for ti, ci in run)
    if len(chosen) < params.min_steps:
        return None
    if not (_has_cue(texts) and len(run) >= params.min_steps) and markers < 2:
        return None
    chosen = chosen[: params.max_steps]
    steps = tuple(
        Step(text=_cut(c.text, params.max_step_chars), turn_id=source[ti]["turn_id"],
             source_id=source[ti]["source_id"], speaker=source[ti]["speaker"])
        for ti, c in chosen)
    step_texts = [s.text for s in steps]
    title, description = _title(texts[: last_turn + 1], step_texts)
    keywords = list(dict.fromkeys([*content_words(title), *frequent_nouns(step_texts, params.keyword_limit)]))
    step_turns = list(dict.fromkeys(ti for ti, _ in chosen))
    return ProcedureDraft(
        title=title, task_key=task_key(title), description=description, steps=steps,
        keywords=tuple(keywords[: params.keyword_limit]),
        language="ja" if is_japanese("".join(step_texts)) else "en",
        source_turn_ids=tuple(source[ti]["turn_id"] for ti in step_turns),
        source_ids=tuple(source[ti]["source_id"] for ti in step_turns),
        said_at=source[step_turns[0]]["ts"],
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
