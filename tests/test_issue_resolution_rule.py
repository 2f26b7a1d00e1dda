"""Which of the user's plans a resolved issue ends (nodes.knowledge.resolutions._about), measured on a small
ja+en set: a plan every term of which the issue or its resolving sentence names, one of them the resolution's,
ends; a plan sharing only one noun with the issue, or said after the resolution, stays."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.issues import item_terms
from lumina_memory.nodes.knowledge.models import KnowledgeItem
from lumina_memory.nodes.knowledge.resolutions import _about

CASES = [  # (issue sentence, resolving sentence, plan value, said after the resolution, ends)
    ("来月大阪に引っ越す予定", "大阪への引っ越し終わった", "大阪に引っ越す", False, True),
    ("来月大阪に引っ越す予定", "大阪への引っ越し終わった", "大阪に旅行する", False, False),
    ("I have to move to Osaka next month", "Finished the move to Osaka", "move to Osaka", False, True),
    ("I have to move to Osaka next month", "Finished the move to Osaka", "visit Osaka", False, False),
    ("I still need to renew my passport", "Passport renewed, finally sorted out", "renew passport", False, True),
    ("I'm planning to visit Kyoto but haven't booked the hotel", "Booked the hotel, finally sorted out",
     "visit Kyoto", False, False),
    ("来月大阪に引っ越す予定", "大阪への引っ越し終わった", "大阪に引っ越す", True, False),
]


def plan(value: str, said_at: float) -> KnowledgeItem:
    return KnowledgeItem(item_id="p", subject="user", attribute="plan", value=value, value_key=value, text=value,
                         source_turn_ids=("t",), said_at=said_at, valid_from=said_at)


@pytest.mark.parametrize("issue,resolution,value,later,ends", CASES)
def test_a_resolution_ends_only_the_plans_about_its_issue(issue, resolution, value, later, ends):
    assert _about(plan(value, 200.0 if later else 50.0), set(item_terms(issue)), set(item_terms(resolution)),
                  100.0) is ends
