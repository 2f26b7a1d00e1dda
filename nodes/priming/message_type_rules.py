"""The rules that tell a message's type (A1), as data: patterns per type and language, read by message_type.py.

A message is first stripped of greeting phrases; what is left decides. Nothing left (or only a name and
punctuation) → greeting. Otherwise the first type whose patterns match the remainder wins, in ``ORDER``: a
heartbeat is a machine's tick, a request asks the character to do something (and may be phrased as a question:
"Can you help me …?"), a question asks for something to be known. What is none of them is ``default`` (a
statement, small talk), which gets the settings' default budget.

Patterns are regular expressions matched, case-insensitively, on NFKC-normalised text. English patterns are
anchored at word boundaries; Japanese ones at the end of a clause where the form is a sentence ending.
"""

from __future__ import annotations

import re

from lumina_memory.nodes.characters import CAST

ORDER = ("heartbeat", "request", "question")

# Whole messages a scheduler or a client sends to keep the character alive, not a person speaking.
HEARTBEAT = {
    "en": [r"^\s*[\[\(<{]?\s*(heartbeat|tick|ping|keep-?alive|cron|scheduled (check|run)|status check|idle check)\s*[\]\)>}]?\s*[.!]?\s*$",
           r"^\s*[\[\(<{]\s*(heartbeat|tick|system|scheduler|cron)\b[^\]\)>}]*[\]\)>}]"],
    "ja": [r"^\s*[\[\(（【<]?\s*(定期(巡回|チェック|確認|実行)|巡回|ハートビート|死活(監視|確認))\s*[\]\)）】>]?\s*[。.!！]?\s*$",
           r"^\s*[\[\(（【]\s*(定期|巡回|ハートビート|システム)[^\]\)）】]*[\]\)）】]"],
}

# Greeting phrases, removed before the rest of the message is read. "How are you" is a greeting, not a question.
GREETING = {
    "en": [r"\b(hi|hello|hey|hiya|howdy|yo|greetings)\b( there)?",
           r"\bgood (morning|afternoon|evening|night|day)\b",
           r"\b(long time no see|nice to (see|meet) you|good to see you|welcome back|i'?m (back|home)|see you( later| tomorrow| soon)?|bye|goodbye|good ?night|take care|cheers|happy (new year|birthday|holidays))\b",
           r"\bhow (are|r) (you|u)( doing)?( today)?\b", r"\bhow'?s it going\b", r"\bwhat'?s up\b", r"\bsup\b",
           r"\bhow have you been\b"],
    "ja": [r"おはよ(う|ー)?(ございます)?", r"こんにち(は|わ)", r"こんばん(は|わ)", r"やあ", r"やっほー?", r"どうも",
           r"はじめまして", r"初めまして", r"(お)?久しぶり(です)?(ね)?", r"ただいま", r"おかえり(なさい)?",
           r"おやすみ(なさい)?", r"また(ね|明日|あとで)", r"さようなら", r"じゃあね", r"よろしく(お願いします|ね)?",
           r"明けましておめでとう(ございます)?", r"あけおめ", r"(お)?元気(ですか|だった|してた|\?|？)", r"ハロー", r"もしもし"],
}

# Asking the character to do something (often politely shaped as a question).
REQUEST = {
    "en": [r"\b(please|pls|plz)\b", r"\b(could|can|would|will) you\b(?! (remember|recall|believe|tell me (what|when|where|who|which|why|how|if|whether)))",
           r"\b(help me|i need you to|i want you to|i'?d like you to|let'?s|make sure)\b", r"\bremind me\b(?! (what|when|where|who|which|why|how|if|whether))",
           r"^\s*(write|make|create|draft|plan|prepare|summari[sz]e|translate|fix|book|send|list|draw|compose|"
           r"schedule|organi[sz]e|set up|add|update|delete|remove|check|find|give me|show me|recommend|suggest|"
           r"explain|walk me through|generate|build|cook|bake)\b",
           r"\b(do me a favou?r|go ahead and)\b"],
    "ja": [r"(?<!教え)(して|て|で)(ください|下さい|くれ|くれる\?|くれない|くれませんか|もらえ(る|ます|ない)|いただけ(る|ます|ません)|頂け(る|ます|ません)|ほしい|欲しい)",
           r"お願い", r"頼む|頼みたい|頼める", r"(?<!だ)(?<!でしょ)(よう|ろう|こう|ぼう|もう|おう)(よ|ね|か)?[。!！]?\s*$", r"ましょう", r"手伝って",
           r"(作っ|書い|まとめ|調べ|考え|送っ|予約し|決め|直し|描い|翻訳し|整理し|用意し|準備し|確認し|計画し|思い出させ|探し|選ん|見せ|読ん)(て|で)[。!！]?\s*$",
           r"リマインド", r"(おすすめ|オススメ|提案)(して|を|ある|は)"],
}

# Asking for something to be known.
QUESTION = {
    "en": [r"\?\s*$", r"\?", r"^\s*(what|when|where|who|whom|whose|which|why|how|do|does|did|is|are|was|were|have|has|had|"
           r"can|could|should|would|will|shall|may|might|am)\b",
           r"\b(tell me|i wonder|do you (know|remember|recall)|any idea|remind me what)\b"],
    "ja": [r"[?？]", r"(ですか|ますか|でしたか|ましたか|ですかね|でしょうか|だっけ|っけ|かな|かしら|のか|の\s*$|んだ\s*$)[。]?\s*$",
           r"(何|なに|なん|いつ|どこ|どちら|どっち|誰|だれ|なぜ|なんで|どうして|どう|どんな|どの|いくつ|いくら|何回|何日|何時|何人)",
           r"教えて", r"知って(る|います|ますか)", r"覚えて(る|います|ますか)"],
}

# Left after the greetings are removed, these are not content: "hi Lumina!" is still a greeting.
_NAMES = "|".join(re.escape(s) for c in CAST for s in c.spellings)
FILLER = rf"^[\s\W_]*(({_NAMES}|さん|ちゃん|くん|everyone|all|guys|friend|みんな|皆さん)[\s\W_]*)*$"
