"""P6 weight presets: α·relevance + β·recency + γ·importance, by what the memory is wanted for."""

from __future__ import annotations

from lumina_memory.stores.settings_agents import NOTE_MODULE_WEIGHTS

# The note's per-module weights (the agents' defaults too), less the cognitive controller's, plus a user's question.
PRESETS: dict[str, tuple[float, float, float]] = {
    **{module: w for module, w in NOTE_MODULE_WEIGHTS.items() if module != "cc"},
    "question": (0.8, 0.1, 0.1),
}


def weights_for(purpose: str) -> tuple[float, float, float]:
    try:
        return PRESETS[purpose]
    except KeyError:
        raise ValueError(f"unknown purpose {purpose!r}; choose one of {', '.join(PRESETS)}") from None
