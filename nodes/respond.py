"""respond: the chosen character answers, using what was recalled.

ChatOpenAI when configured (or any chat model passed in); otherwise a deterministic offline responder
that speaks in the character's voice and cites the memory it used. ``reply_path`` says which ran.
"""

from __future__ import annotations

import logging

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from stores import ids

log = logging.getLogger("lumina.respond")

PERSONAS = {
    "lumina": "ルミナ: warm, curious, loves stars, science and books. Speaks softly in Japanese.",
    "clarisse": "クラリス: elegant and practical, loves cooking, tea and planning. Polite Japanese (です/ます).",
    "nox": "ノクス: cool, witty night owl who loves games, music and movies. Casual Japanese (オレ).",
}
_OFFLINE_OPENERS = {
    "lumina": ("ねえ、覚えてるよ。", "それならね、"),
    "clarisse": ("覚えておりますよ。", "そうですね、"),
    "nox": ("ああ、覚えてるぜ。", "そうだな、"),
}


def offline_reply(character: str, query: str, recalled: list[dict]) -> str:
    remembered, fresh = _OFFLINE_OPENERS[character]
    memories = [r for r in recalled if r.get("segment_id") != "(open)" and r.get("text")]
    if not memories:
        return f"{fresh}「{query[:40]}」のこと、もう少し聞かせて。"
    top = memories[0]
    return f"{remembered}{top['date']}に話したこと — {top['text'][:120]}"


def _llm_reply(chat_model, character: str, query: str, recalled: list[dict]) -> str:
    context = "\n".join(f"- [{r['date']}, {'/'.join(r['tiers'])}] {r['text']}" for r in recalled[:8])
    messages = [
        SystemMessage(
            f"You are {PERSONAS[character]} One of three characters chatting with the user. "
            f"Use these memories when relevant:\n{context or '(none)'}"
        ),
        HumanMessage(query),
    ]
    return str(chat_model.invoke(messages).content).strip()


def respond(state: dict, ctx, services) -> dict:
    turns = state.get("turns") or []
    if not turns or turns[-1]["speaker"] != "user":
        return {}
    character = state.get("responder") or "lumina"
    query = turns[-1]["text"]
    recalled = state.get("recalled") or []
    chat_model = services.chat_model
    if chat_model is None and services.settings.use_openai and services.settings.llm != "offline":
        from langchain_openai import ChatOpenAI

        key = services.settings.openai_api_key
        chat_model = ChatOpenAI(
            model=services.settings.openai_chat_model,
            api_key=key.get_secret_value() if key else "unused",
            base_url=services.settings.openai_base_url,
        )
    if chat_model is not None:
        text, path = _llm_reply(chat_model, character, query, recalled), "llm"
    else:
        text, path = offline_reply(character, query, recalled), "offline"
    log.info("reply character=%s path=%s recalled=%d", character, path, len(recalled))
    # The reply is part of the conversation: it joins the open segment as the character's turn.
    source = f"reply-{turns[-1]['source_id']}"[:128]
    reply_turn = {
        "turn_id": ids.turn_id(ctx.user_id, source),
        "source_id": source,
        "speaker": character,
        "text": text,
        "ts": turns[-1]["ts"] + 1.0,
    }
    counts = dict(state.get("character_turns") or {})
    counts[character] = counts.get(character, 0) + 1
    return {
        "reply": text,
        "reply_path": path,
        "messages": [AIMessage(content=text, name=character)],
        "turns": [*turns, reply_turn],
        "character_turns": counts,
        "last_update": reply_turn["ts"],
    }
