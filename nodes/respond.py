"""respond: the chosen character answers, using what was recalled.

ChatOpenAI when configured (or any chat model passed in); otherwise a deterministic offline responder
that speaks in the character's voice and quotes the remembered turn that answers, or says that nothing is
remembered (nodes.offline_reply). ``reply_path`` says which ran.

With a model, the memory context is the run's primed sections (``state["primed"]["text"]``) when priming
ran, else the recalled items. A model that can call tools (``bind_tools``) gets search_memory and
read_memory (A2, nodes.tools), bound to this run's user, and may look things up a few times before it
answers (nodes.tools.loop.MAX_TOOL_CALLS).

A11: the reply is journalled while it is generated (the model's stream, chunk by chunk; offline, the
reply text), flushed with fsync every ``journal_flush_seconds`` or ``journal_flush_chars``. A process
that dies mid-reply leaves the journal file; ``recover_replies`` (run once per process before the first
reply, or by an operator) turns every orphan into a ``reply_interrupted`` event in the activity log.
S7: the reply is redacted before it joins the conversation (a model can echo what it should not keep).
"""

from __future__ import annotations

import logging

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from lumina_memory.nodes.characters import CAST
from lumina_memory.stores import ids
from lumina_memory.stores.factory import open_journal

from .activity import record
from .offline_reply import offline_reply  # noqa: F401 - the offline path, kept importable from here
from .reply_recovery import recover_replies, recover_replies_once  # noqa: F401 - operators call them from here
from .text.redact import redact_text
from .tools.loop import bind, message_text, run_tool_loop, stream_round
from .tools.memory_tools import create_memory_tools
from .tools.writing import create_writing_tools, written_notes
from .validate import redaction_kinds

log = logging.getLogger("lumina.respond")

PERSONAS = {c.id: f"{c.name_ja}: {c.persona}" for c in CAST}


def memory_context(state: dict) -> str:
    """What the model is told it remembers: the primed sections (nodes.priming) when the run primed,
    else the recalled items as dated lines."""
    primed = state.get("primed") or {}
    if isinstance(primed, dict) and primed.get("text"):
        return primed["text"]
    recalled = state.get("recalled") or []
    seen: set[str] = set()
    lines = []
    for r in recalled:  # a memory recalled twice (by two channels, or a turn and its segment alike) is told once
        key = " ".join(r["text"].split())
        if key not in seen:
            seen.add(key)
            lines.append(f"- [{r['date']}, {'/'.join(r['tiers'])}] {r['text']}")
    return "\n".join(lines[:8])


def _llm_reply(chat_model, character: str, query: str, context: str, entry=None, tools=()) -> tuple[str, list]:
    """The reply, and the tool results the model read (its notes among them)."""
    bound = bind(chat_model, tools)
    look_up = (" You can look further with search_memory and open an id with read_memory before you answer (a"
               " [date and time] header is the id of the memories under it); write_memory keeps a note, and"
               " report_procedure_outcome says how a procedure went." if bound is not None else "")
    messages = [
        SystemMessage(
            f"You are {PERSONAS[character]} One of three characters chatting with the user. "
            f"Use these memories when relevant:\n{context or '(none)'}{look_up}"
        ),
        HumanMessage(query),
    ]
    write = entry.write if entry is not None else None
    if bound is not None:
        text, results = run_tool_loop(bound, tools, messages, write)
        log.info("reply tool results=%d", len(results))
        return text, results
    return message_text(stream_round(chat_model, messages, write).content).strip(), []


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
    recover_replies_once(services)
    source = f"reply-{turns[-1]['source_id']}"[:128]
    kinds = redaction_kinds(services.settings)
    entry = open_journal(services.settings).open(
        ctx.user_id, ids.turn_id(ctx.user_id, source), redact=(lambda t: redact_text(t, kinds)) if kinds else None,
        character=character, turn_id=turns[-1]["turn_id"],
    )
    notes: list[str] = []
    try:
        if chat_model is not None:
            tools = [*create_memory_tools(services, ctx.user_id),
                     *create_writing_tools(services, ctx.user_id, turns[-1]["turn_id"])]
            (text, results), path = _llm_reply(chat_model, character, query, memory_context(state), entry, tools), "llm"
            notes = written_notes(results)
        else:
            text, path = offline_reply(character, query, recalled, services.embedder.embed,
                                       services.settings.offline_reply_min_similarity), "offline"
            entry.write(text)
    except BaseException:
        # The model failed mid-reply in a process that lives on: record what came, as start-up would.
        entry.flush()
        partial = open_journal(services.settings).read(entry.path) or {"text": "", "chunks": 0}
        record(services, ctx.user_id, "reply_interrupted", reply_id=ids.turn_id(ctx.user_id, source),
               character=character, chars=len(partial["text"]), chunks=partial["chunks"], text=partial["text"][:2_000])
        entry.finish()
        raise
    text = redact_text(text, kinds) if kinds else text
    entry.finish()
    log.info("reply character=%s path=%s recalled=%d", character, path, len(recalled))
    record(services, ctx.user_id, "reply", turn_id=ids.turn_id(ctx.user_id, source), character=character, path=path,
           chars=len(text))
    # The reply is part of the conversation: it joins the open segment as the character's turn.
    reply_turn = {
        "turn_id": ids.turn_id(ctx.user_id, source),
        "source_id": source,
        "speaker": character,
        "text": text,
        "ts": turns[-1]["ts"] + 1.0,
    }
    # The agent's notes (write_memory) join the conversation after the reply, in the character's voice.
    note_turns = [{"turn_id": ids.turn_id(ctx.user_id, f"{source}-note{k}"[:128]), "source_id": f"{source}-note{k}"[:128],
                   "speaker": character, "text": redact_text(note, kinds) if kinds else note,
                   "ts": reply_turn["ts"] + 0.001 * (k + 1)} for k, note in enumerate(notes)]
    if notes:
        log.info("reply notes=%d character=%s", len(notes), character)
        record(services, ctx.user_id, "note", turn_id=reply_turn["turn_id"], character=character, notes=len(notes))
    counts = dict(state.get("character_turns") or {})
    counts[character] = counts.get(character, 0) + 1
    return {
        "reply": text,
        "reply_path": path,
        "messages": [AIMessage(content=text, name=character)],
        "turns": [*turns, reply_turn, *note_turns],
        "character_turns": counts,
        "last_update": (note_turns or [reply_turn])[-1]["ts"],
    }
