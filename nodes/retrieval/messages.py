"""Reading a stored message back whole: one turn, or the parts of a long message (S3) joined again."""

from __future__ import annotations

from lumina_memory.stores import ids

from ..text.chunking import join_parts, parse_part


def read_message(archive, user_id: str, source_id: str, overlap: int = 200, max_parts: int = 1_000) -> str | None:
    """The whole text of the message ``source_id`` as stored: one turn, or the parts of a long message
    (S3) read from the archive and joined back; None when it is not there."""
    whole = archive.get_turns(user_id, [ids.turn_id(user_id, source_id)])
    if whole:
        return whole[0].text
    wanted = [ids.turn_id(user_id, ids.part_source_id(source_id, k)) for k in range(max_parts)]
    parts = sorted(archive.get_turns(user_id, wanted), key=lambda t: parse_part(t.source_id)[1])
    if not parts:
        return None
    return join_parts([(t.source_id, t.text, True) for t in parts], overlap, sep=" … ")
