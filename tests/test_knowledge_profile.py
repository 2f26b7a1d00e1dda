"""The person (L7) after the bundled demo conversation: topics, each character's relationship, current facts."""

from __future__ import annotations

from lumina_memory.nodes.knowledge.profile import build_profile


def test_the_demo_users_profile(demo_memory):
    profile = build_profile(demo_memory.services, "demo-user")
    topics = list(profile["topics"])
    assert topics[0] == "モカ" and profile["topics"]["モカ"] == 1.0  # the cat is what she talks about most
    assert all(0 < w <= 1 for w in profile["topics"].values())
    chars = profile["characters"]
    assert set(chars) == {"lumina", "clarisse", "nox"}
    assert "チーズケーキ" in chars["clarisse"]["topics"]  # Clarisse taught the cheesecake
    assert "メメント" in chars["nox"]["topics"]  # Nox recommended the film
    assert "チーズケーキ" not in chars["nox"]["topics"][:2]
    assert max(chars, key=lambda c: chars[c]["mentions"]) == "nox"  # the character she names most
    assert all(0 < c["relationship_depth"] <= 1 and c["days"] == 3 for c in chars.values())
    assert any(f["attribute"] == "pet" and f["value"] == "モカ" for f in profile["facts"])
    assert len(profile["preference_vector"]) == demo_memory.services.embedder.dim
    assert profile["updated_at"] is not None


def test_an_unknown_user_has_an_empty_profile(demo_memory):
    profile = build_profile(demo_memory.services, "someone-else")
    assert profile["topics"] == {} and profile["facts"] == [] and profile["preference_vector"] is None
    assert all(c["turns"] == 0 and c["relationship_depth"] == 0 for c in profile["characters"].values())
