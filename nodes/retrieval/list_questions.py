"""Questions answered by what one person says across many turns: those that ask for many things of them ("What activities does Melanie partake in?", "Which cities has
Jon visited?", 「美咲が行ったことのある国は？」「健太はどんな料理を作った？」) — issue 19, multi-hop.

Their answers are spread over that person's turns across sessions, in words the question does not use ("a short
trip to Rome", "camping at the beach"), so the question's own ranking, dominated by its words, finds the one or two
turns that share them and leaves the rest far down. A count ("How many times has Joanna found new hiking
trails?", 「何回」) needs every turn that says it once. Likewise a question about what someone would do or is likely
to be ("Would Caroline pursue writing as a career?", 「美咲は先生に向いていると思う？」) is answered from what they said
of themselves anywhere, not from a turn that repeats its words. For both, recall adds a ranking of the named
person's turns by meaning alone (channels.speaker_dense_channel). The asker's own ("What are my hobbies?", "What areas am I interested in?") are asked the same way in the first person. Questions about one thing ("What is Caroline's identity?", 「モカは
どんな猫？」) are not these: English marks the many by a plural object before its verb, Japanese by asking what
kinds someone does (「どんな…を…」) or has ever done (「…たことがある…」) or by saying all of them.
"""

from __future__ import annotations

import re
import unicodedata

# "what/which (kinds of) [up to two words] <plural noun> has/does/did/is/are …" — the plural names the many. The
# plural is a lower-case word: a capitalised one ending in -s is a name ("What does Thomas do …").
_EN_PLURAL_OBJECT = re.compile(
    r"^\s*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[a-z/-]+\s+){0,2}?"
    r"(?!(?:is|was|has|does|this|his|its|us|plus|yes|bus|gas|class|glass|grass)\b)(?-i:[a-z][a-z/-]*)s\s+"
    r"(?:has|have|does|do|did|is|am|are|was|were)\b", re.IGNORECASE)
# "Where has X been / camped …", "What has X done / made …", "What are some of X's hobbies?"
_EN_OTHER = re.compile(
    r"^\s*(?:what|which)\s+(?:kinds|types|sorts)\s+of\s+(?:[a-z/-]+\s+){1,2}?(?:has|have|does|do|did|are|were)\b"
    r"|^\s*where\s+(?:has|have)\b"
    r"|^\s*what\s+(?:all\s+)?has\s+[\w'-]+\s+(?:done|made|painted|bought|read|seen|visited|tried|cooked|baked|written|played)\b"
    r"|^\s*what\s+are\s+(?:some\s+)?(?:of\s+)?(?:[\w-]+'s?|my|your|our)\s+(?:[a-z-]+\s+){0,2}?[a-z-]+s\b"
    r"|^\s*what\s+are\s+(?:some\s+of\s+)?the\s+(?:[a-z-]+\s+){0,2}?[a-z-]+s\b(?!\s+of\s+the\b)"
    r"|\b(?:list|name)\s+(?:all|every|the)\b", re.IGNORECASE)
# Counts across the conversation: "How many times has Joanna found new trails?", "How many dogs has Maria adopted?"
# (not a length of time: "how many days", nodes.retrieval.temporal_questions), 「何回」「何匹」「いくつ」.
_EN_COUNT = re.compile(r"^\s*how\s+many\s+(?!(?:more\s+)?(?:seconds|minutes|hours|days|nights|weeks|months|years|decades)\b)",
                       re.IGNORECASE)
_JA_COUNT = re.compile(r"何\s*(?:回|度|個|匹|頭|人|冊|本|枚|台|つ|か所|カ所|ヶ所|箇所)|いくつ|いく(?:ら|つ)か")
# 「どんな料理を作った」「どういう場所に行った」: a kind of thing someone does, with its verb (「モカはどんな猫？」 has none).
_JA_KINDS = re.compile(r"(?:どんな|どういう|どのような|どういった)[^？?。、]{1,12}?(?:を|に|へ|で)[^？?。]*?(?:した|して|する|している|してる|行った|行って|作った|作って|読んだ|見た|買った|食べた|訪れた|参加)")
# 「行ったことのある国」「したことがある」: everything someone has ever done; 「全部」「すべて」「いろいろ」: all of them.
_JA_EVER = re.compile(r"た(?:こと|事)(?:が|の)ある|(?:全部|すべて|全て|いろいろ|色々|何と何|いくつか)")


# "Would X …?", "Is X likely to …?", "What might X …?": a guess from what the person is like.
_EN_GUESS = re.compile(r"^\s*(?:would|could|might|will)\s+\w+|\b(?:likely|probably|might)\b", re.IGNORECASE)
# 「〜だろうか」「〜しそう？」「〜と思う？」「〜に向いている？」「〜可能性」
_JA_GUESS = re.compile(r"だろう(?:か|ね)?[？?]?$|(?<=[\u3040-\u309f\u4e00-\u9fff])(?<![にもはがをでとの])そう(?:だ|です)?(?:か|ね)?[？?]$|と思う[？?]|と思いますか|向いて(?:い)?る|可能性")


def asks_for_many(question: str) -> bool:
    """Whether ``question`` asks for a list of things (see the module docstring)."""
    text = unicodedata.normalize("NFKC", question).strip()
    if not text:
        return False
    return bool(_EN_PLURAL_OBJECT.search(text) or _EN_OTHER.search(text) or _JA_KINDS.search(text)
                or _JA_EVER.search(text))


def asks_a_guess(question: str) -> bool:
    """Whether ``question`` asks what someone would do or is likely to be (see the module docstring)."""
    text = unicodedata.normalize("NFKC", question).strip()
    return bool(text) and bool(_EN_GUESS.search(text) or _JA_GUESS.search(text))


def asks_a_count(question: str) -> bool:
    """Whether ``question`` asks how many things or times (not how long: nodes.retrieval.temporal_questions)."""
    text = unicodedata.normalize("NFKC", question).strip()
    return bool(text) and bool(_EN_COUNT.search(text) or _JA_COUNT.search(text))


def answered_across_turns(question: str) -> bool:
    """A question about a person that their turns across the conversation answer, rather than one turn."""
    return asks_for_many(question) or asks_a_guess(question) or asks_a_count(question)
