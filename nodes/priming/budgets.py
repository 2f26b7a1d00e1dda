"""Priming budgets (A1) and the working-memory prompt split (P1).

Channel budgets: the notes give profile 500, recent activity 1,300, related knowledge 700 and procedures 200
tokens. The whole is chosen by message type (settings.recall_budgets: greeting 500, question 1,500, request
3,000, heartbeat 200, default 1,024), and each channel gets the notes' share of that whole. What a channel
leaves unused flows to the knowledge & episodes channel, which can always use more.

P1: an agent keeping a working memory splits a 4,096-token prompt into system 10 %, working memory 30 %, goals
15 %, social 15 %, memories 20 %, alerts 10 %; the notes make it adjustable (more to alerts in an emergency, more
to the social part while talking with others). ``working_memory_split`` gives that split, the shares renormalised
after any adjustment, rounded so the parts sum to the total exactly.
"""

from __future__ import annotations

from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lumina_memory.nodes.retrieval.budget import budget_for

CHANNELS = ("profile", "recent", "episodes", "procedures")
NOTES_CHANNEL_BUDGETS: dict[str, int] = {"profile": 500, "recent": 1300, "episodes": 700, "procedures": 200}


def _split(total: int, weights: Mapping[str, float]) -> dict[str, int]:
    """``total`` split by ``weights`` into whole tokens that sum to ``total`` (largest remainders get the rest)."""
    whole = sum(weights.values())
    if total <= 0 or whole <= 0:
        return {k: 0 for k in weights}
    exact = {k: total * w / whole for k, w in weights.items()}
    parts = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: exact[k] - parts[k], reverse=True)[: total - sum(parts.values())]:
        parts[k] += 1
    return parts


def total_budget(settings, message_type: str) -> int:
    return budget_for(settings, message_type)


def channel_budgets(total: int, base: Mapping[str, int] = NOTES_CHANNEL_BUDGETS) -> dict[str, int]:
    """The notes' channel budgets scaled to ``total`` (they sum to it)."""
    return _split(total, base)


def flow_unused(budgets: Mapping[str, int], used: Mapping[str, int], into: str = "episodes") -> dict[str, int]:
    """Each channel keeps what it used; the rest of every other channel's budget is added to ``into``."""
    out = {k: (used.get(k, 0) if k != into else v) for k, v in budgets.items()}
    out[into] = budgets[into] + sum(max(0, budgets[k] - used.get(k, 0)) for k in budgets if k != into)
    return out


# --- P1 -------------------------------------------------------------------------------------------------
P1_TOTAL = 4096
P1_SHARES: dict[str, float] = {"system": 0.10, "working_memory": 0.30, "goals": 0.15, "social": 0.15,
                               "memories": 0.20, "alerts": 0.10}
P1_SITUATIONS: dict[str, dict[str, float]] = {
    # The notes: in an emergency the action-awareness part grows, in a social interaction the social part.
    "normal": {},
    "emergency": {"alerts": 2.0},
    "social": {"social": 1.6},
}


class WorkingMemoryBudget(BaseModel):
    """Tokens per section of an agent's prompt (P1). ``parts`` sums to ``total``."""

    model_config = ConfigDict(frozen=True)

    total: int = Field(gt=0)
    situation: str = "normal"
    shares: dict[str, float]
    parts: dict[str, int]

    @model_validator(mode="after")
    def _sums(self) -> "WorkingMemoryBudget":
        if sum(self.parts.values()) != self.total:
            raise ValueError("the parts must sum to the total")
        return self


def working_memory_split(total: int = P1_TOTAL, *, situation: str = "normal",
                         shares: Mapping[str, float] | None = None,
                         adjust: Mapping[str, float] | None = None) -> WorkingMemoryBudget:
    """P1's split of ``total`` tokens. ``shares`` replaces the notes' shares; ``adjust`` (and the situation's
    own factors) multiply some of them; the shares are renormalised to 1 afterwards."""
    if situation not in P1_SITUATIONS:
        raise ValueError(f"unknown situation {situation!r}; choose one of {', '.join(P1_SITUATIONS)}")
    base = dict(shares or P1_SHARES)
    if any(v < 0 for v in base.values()) or not sum(base.values()):
        raise ValueError("shares must be non-negative and not all zero")
    factors = {**P1_SITUATIONS[situation], **(adjust or {})}
    unknown = set(factors) - set(base)
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(sorted(unknown))}")
    weighted = {k: v * factors.get(k, 1.0) for k, v in base.items()}
    whole = sum(weighted.values())
    normal = {k: round(v / whole, 6) for k, v in weighted.items()}
    return WorkingMemoryBudget(total=total, situation=situation, shares=normal, parts=_split(total, weighted))
