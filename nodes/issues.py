"""A5's state update and resolution propagation: open items a user mentions, and their resolution later.

The notes' immediate encoding parses each session's summary for "resolved items" and "new tasks", keeps them as
the current task state, and records each resolution as an ``issue_resolved`` event in the activity log (and a
registry every agent reads). Here, when closed segments become memories (nodes.lifecycle.encode):

- a user turn that states a problem or a task still open (「Wi-Fiが壊れて困ってる」, "I still need to fix the bike",
  「返さないと」), or an illness or a worry it does not deny (「風邪をひいた」, "I'm worried about the exam"; not
  「心配ないよ」) opens an item: an ``issue_opened`` event with the turn, its segment and its nouns (unless an open
  item shares a noun with it: the same item said again);
- a later user turn that says something is done (「Wi-Fi直った！」, "fixed the bike") resolves every open item of
  the user's sharing a noun with it: an ``issue_resolved`` event naming the item, the segment that opened it and
  the one that resolved it.

The activity log is per user and every character reads it, so it is both the notes' own-agent log and their
cross-agent registry here. An item is named by its nouns less words of time and cue words (「来月」, "next
week", "finally" name no item: a "done" about something else said of the same day would resolve it).
``open_issues`` and ``resolved_issues`` read the state back. Events are keyed by the opening turn's id, so
encoding the same segment again records nothing twice. Offline, by cue words (Japanese and
English); a turn with both cues (「まだ直ってない」) is an open item, not a resolution.
"""

from __future__ import annotations

import re
from typing import Any

from lumina_memory.nodes.activity import activity_log, record
from lumina_memory.nodes.text.calendar.names import EN_MONTHS, EN_WEEKDAYS, JA_WEEKDAYS
from lumina_memory.nodes.text.tokenize import nouns

OPENED, RESOLVED = "issue_opened", "issue_resolved"

_OPEN = re.compile(
    r"困って|壊れ|動かな|つかな|繋がらな|つながらな|直らな|治らな|終わってな|終わらな|決まってな|できてな|まだ|"
    r"なきゃ|なくちゃ|しないと|ないといけない|なければ|予定|問題|悩んで|迷って|見つからな|届かな|"
    r"\b(?:broken|not working|doesn't work|won't|need to|have to|todo|to-do|issue|problem|bug|stuck|still haven't|"
    r"can't find|haven't)\b|"
    r"(?:か|さ|た|ま|ら|わ|が|ば|な|け)ないと(?:[。．.！!…、]|$)", re.I)  # 「行かないと」, not 「知らないと思う」
# An illness or a worry is an open item unless denied (「心配ないよ」, "I'm not worried"); "still" does not deny it.
_TROUBLE = re.compile(
    r"風邪(?:を|が)?(?:ひ|引)|熱が(?:ある|出)|体調が?(?:悪|わる)|具合が?(?:悪|わる)|痛い|痛くて|病気|心配|不安|怪我|ケガ|"
    r"\b(?:caught a cold|have a cold|got a cold|sick|fever|hurts?|worried|anxious|injured)\b", re.I)
_DENIED = re.compile(r"ない|\b(?:not|no longer)\b|n't\b", re.I)
_RESOLVED = re.compile(
    r"直った|治った|なおった|解決|終わった|済んだ|片付いた|できた|決まった|見つかった|届いた|繋がった|つながった|"
    r"良くなった|よくなった|元気になった|回復|"
    r"\b(?:fixed|resolved|solved|finished|sorted out|works now|working now|done with|found it|arrived|recovered|"
    r"feel better|feeling better|got better|better now)\b", re.I)
_NEGATED = re.compile(r"まだ|ない|\b(?:not|never|still)\b", re.I)
_IGNORED_NOUNS = frozenset({"問題", "予定", "issue", "problem", "bug", "need", "todo", "fix"})
# Words that say when or how far along, never what: two items said on the same kind of day (「来月」, "next
# week") or with the same cue ("finally", "finished") are not the same item.
_TIME_WORDS = frozenset({
    "今日", "明日", "昨日", "今朝", "今晩", "今夜", "今週", "来週", "先週", "今月", "来月", "先月", "今年", "来年", "去年",
    "週末", "最近", "今度", "この前", "午前", "午後", "朝", "夜", "今", "後で", "さっき", "やっと",
    *(f"{day}曜" for day in JA_WEEKDAYS), *(f"{day}曜日" for day in JA_WEEKDAYS),
    "today", "tomorrow", "yesterday", "tonight", "next", "last", "week", "weekend", "month", "year", "morning",
    "evening", "night", "now", "soon", "later", "still", "already", "finally", "before", "after", "yet",
    *EN_WEEKDAYS, *EN_MONTHS,
})
_CUE_WORDS = frozenset({"finished", "fixed", "resolved", "solved", "sorted", "done", "working", "works", "arrived",
                        "haven", "found", "decided", "stuck", "broken", "recovered", "better", "feeling", "caught",
                        "worried", "anxious"})


def item_terms(text: str) -> list[str]:
    """The nouns that name an item: without cue words and words of time (module docstring)."""
    return list(dict.fromkeys(n for n in nouns(text)
                              if n not in _IGNORED_NOUNS and n not in _TIME_WORDS and n not in _CUE_WORDS))


def _troubled(text: str) -> bool:
    return bool(_TROUBLE.search(text)) and not _DENIED.search(text)


def opens_item(text: str) -> bool:
    return (bool(_OPEN.search(text)) or _troubled(text)) and not resolves_item(text)


def resolves_item(text: str) -> bool:
    return bool(_RESOLVED.search(text)) and not _NEGATED.search(text)


def _states(services, user_id: str) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """(item id -> its issue_opened event, ids resolved) from the user's activity log."""
    opened: dict[str, dict[str, Any]] = {}
    resolved: set[str] = set()
    for event in activity_log(services.settings).events(user_id):
        if event.get("event") == OPENED and event.get("item_id"):
            opened[event["item_id"]] = event
        elif event.get("event") == RESOLVED and event.get("item_id"):
            resolved.add(event["item_id"])
    return opened, resolved


def track_issues(services, user_id: str, segments: list[tuple[Any, list[dict]]]) -> dict[str, int]:
    """Record the items the segments' user turns open and resolve, in conversation order; counts recorded."""
    counts = {"opened": 0, "resolved": 0}
    turns = sorted(((float(t.get("ts", 0.0)), record_.segment_id, t) for record_, ts in segments for t in ts
                    if t.get("speaker") == "user" and t.get("text")
                    and (_OPEN.search(t["text"]) or _TROUBLE.search(t["text"]) or _RESOLVED.search(t["text"]))),
                   key=lambda x: x[0])
    if not turns:  # most segments: no cue, and the log is not read
        return counts
    opened, resolved = _states(services, user_id)
    for ts, segment_id, turn in turns:
        text, turn_id = turn["text"], turn["turn_id"]
        if resolves_item(text):
            words = set(item_terms(text))
            for item_id, event in opened.items():
                if item_id in resolved:
                    continue
                if words & set(event.get("terms") or []):
                    record(services, user_id, RESOLVED, item_id=item_id, opened_segment=event.get("segment_id"),
                           resolved_segment=segment_id, resolved_turn=turn_id, text=text, ts=ts)
                    resolved.add(item_id)
                    counts["resolved"] += 1
        elif opens_item(text) and turn_id not in opened:
            terms = item_terms(text)
            if not terms or any(set(terms) & set(e.get("terms") or []) for i, e in opened.items() if i not in resolved):
                continue  # nothing to name it by, or the same item still open, said again
            event = {"item_id": turn_id, "segment_id": segment_id, "text": text, "terms": terms, "ts": ts}
            record(services, user_id, OPENED, **event)
            opened[turn_id] = event
            counts["opened"] += 1
    return counts


def open_issues(services, user_id: str) -> list[dict[str, Any]]:
    """The user's items opened and not resolved, oldest first ({item_id, segment_id, text, terms, ts})."""
    opened, resolved = _states(services, user_id)
    return [_view(e) for i, e in opened.items() if i not in resolved]


def resolved_issues(services, user_id: str) -> list[dict[str, Any]]:
    """The user's resolved items with what resolved them, in resolution order."""
    opened, _ = _states(services, user_id)
    out = []
    for event in activity_log(services.settings).events(user_id):
        if event.get("event") == RESOLVED and event.get("item_id") in opened:
            out.append({**_view(opened[event["item_id"]]), "resolved_segment": event.get("resolved_segment"),
                        "resolved_turn": event.get("resolved_turn"), "resolved_text": event.get("text")})
    return out


def _view(event: dict[str, Any]) -> dict[str, Any]:
    return {k: event.get(k) for k in ("item_id", "segment_id", "text", "terms", "ts")}
