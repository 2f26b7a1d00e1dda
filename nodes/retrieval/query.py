"""Query analysis: which of the conversation's speakers a question is about.

Questions about a conversation name the people in it ("What did Melanie paint?", "メラニーは何を描いた？").
What a person did is, overwhelmingly, told in that person's own turns, so a question naming exactly one
speaker focuses recall on that speaker's turns; one naming several ("What do Caroline and Melanie both
like?") is answered from each of them, so each speaker's turns are ranked on their own and interleaved.

The user asking about their own memory names nobody: they say "my", "I" (私の, 僕が) — their own turns — or
"you suggested", "your advice" (教えてくれた) — the other side's. That is ``QueryPlan.person``, a milder focus
(settings.recall_person_focus): in a user ↔ assistant history the assistant's long replies share the
question's words as often as the user's short turns that hold the fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..text.tokenize import terms
from ..text.token_count import CJK_RE as _CJK_RE


@dataclass
class QueryPlan:
    speakers: list[str] = field(default_factory=list)  # speaker labels the query names, in order of mention
    person: str | None = None
    """When it names none: "user" — the asker speaks of themself; "other" — of what the other side said."""


# "I" only as written (a capital I is the pronoun); "me" is left out: "remind me", "tell me" ask, they do not say
# whose memory it is.
_EN_SELF = re.compile(r"(?<![\w'])I(?:'m|'ve|'d|'ll)?(?![\w'])|\b(?i:my|mine|myself)\b")
_EN_OTHER = re.compile(
    # what the other side did: "you suggested", "you've told me", "did you recommend" — not "can you tell me" (an ask)
    r"\byou(?:'ve|'d| have| had)?\s+(?:\w+\s+)?(?:said|told|suggested|recommended|mentioned|gave|wrote|explained|"
    r"listed|shared|provided|showed|proposed|advised|picked|chose)\b"
    r"|\bdid you\s+(?:\w+\s+)?(?:say|tell|suggest|recommend|mention|give|write|explain|list|share|provide|show|"
    r"propose|advise|pick|choose)\b"
    r"|\byour\s+(?:suggestions?|advice|answers?|recommendations?|lists?|explanations?|replies|reply|examples?|ideas?)\b",
    re.IGNORECASE,
)
_JA_SELF = re.compile(r"(?:私|わたし|僕|ぼく|俺|おれ|あたし|自分)(?:の|が|は|も|って|に|を|と)")
_JA_OTHER = re.compile(r"(?:あなた|君|きみ)(?:の|が|は|も|って)|(?:教え|勧め|すすめ|提案し|紹介し|説明し|言っ)てくれ")


def person_of(query: str) -> str | None:
    """"other" when the query asks what the other side said, "user" when the asker speaks of themself, else None."""
    if _EN_OTHER.search(query) or _JA_OTHER.search(query):
        return "other"
    if _EN_SELF.search(query) or _JA_SELF.search(query):
        return "user"
    return None


def _mentions(query: str, name: str) -> tuple[int, bool]:
    """(position of ``name`` in ``query`` as a word, or -1; whether every mention is a possessive "Name's")."""
    if not name:
        return -1, False
    if _CJK_RE.search(name):
        return query.find(name), False
    found = list(re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])('s\b|’s\b)?", query, re.IGNORECASE))
    if not found:
        return -1, False
    return found[0].start(), all(m.group(1) for m in found)


def analyse(query: str, speakers: list[str]) -> QueryPlan:
    if len(speakers) < 2:
        return QueryPlan()
    found = sorted((pos, possessive, name) for name in speakers for pos, possessive in [_mentions(query, name)] if pos >= 0)
    subjects = [f for f in found if not f[1]]
    if subjects:  # "What did Jon say about Gina's store?" is about what Jon said, in Jon's turns
        found = subjects
    if not found:
        return QueryPlan(person=person_of(query))
    return QueryPlan([name for _pos, _poss, name in found])


# --- the query's content view --------------------------------------------------------------------------
# A question embeds as a question: its wh-word and auxiliaries ("What did … do?") and the names of the people
# it is about pull its vector towards other questions and towards every turn of that person ("Melanie: …"),
# while the memories that answer it are statements about the topic. A second dense search with only the
# question's content ("activities partake in") finds turns the question as asked ranks far down; the speaker
# focus already takes care of whose turns they are.
_EN_SCAFFOLD = re.compile(
    r"\b(?:what|when|where|which|who|whom|whose|why|how|does|do|did|is|are|was|were|has|have|had|would|"
    r"could|can|will)\b",
    re.IGNORECASE,
)
# Japanese: the sentence-final question forms (ですか, のか, か？ — 行きましたか keeps 行きました), then interrogatives with the particle
# that follows them (何を, どこで, 誰と); 何か, 誰か, いつも, 何も, どうぞ, なんて ("something", "always",
# "please", "how …!") are not questions.
_JA_ENDING = re.compile(r"(?:でしょう|です|だった)?(?:か|の)?[？?]\s*$|(?:でしょう|です|の)か\s*$|(?<=[たすだい])か\s*$")
_JA_INTERROGATIVE = re.compile(
    r"(?:どうして|なぜ|何|なに|なん(?![てと])|いつ|どこ|どちら|どれ|どの|どんな|どう(?![ぞせ])|誰|だれ|いくつ|いくら)(?![かも])"
    r"(?:を|が|に|で|と|へ|の|は|から|まで)?"
)
_QUESTION_MARKS = re.compile(r"[?？]")
_JA_NAME_TAIL = "(?:さん|ちゃん|くん|君|様)?(?:は|が|の|も|と|に|を)?"


def content_view(query: str, speakers: list[str] | tuple[str, ...] = ()) -> str | None:
    """``query`` without its question scaffolding (wh-words, auxiliaries, question marks; Japanese
    interrogatives and ですか-style endings) and without the names in ``speakers`` (the speakers a
    question is about, possessives included). None when that leaves nothing of the query's own, or
    nothing was removed (the query already is its content)."""
    text = query
    for name in speakers:
        if not name:
            continue
        if _CJK_RE.search(name):
            text = re.sub(re.escape(name) + _JA_NAME_TAIL, " ", text)
        else:
            text = re.sub(rf"(?<![\w]){re.escape(name)}(?:'s|’s)?(?![\w])", " ", text, flags=re.IGNORECASE)
    text = _JA_INTERROGATIVE.sub(" ", _JA_ENDING.sub("", text.strip()))
    text = _QUESTION_MARKS.sub(" ", text)
    text = _EN_SCAFFOLD.sub(" ", text)
    text = " ".join(text.split())
    if text == " ".join(query.split()) or not terms(text):
        return None  # nothing removed, or nothing left with a content word ("How are you?" -> "you")
    return text
