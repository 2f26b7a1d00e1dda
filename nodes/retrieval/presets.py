"""P6 weight presets: α·relevance + β·recency + γ·importance, by what the memory is wanted for."""

from __future__ import annotations

PRESETS: dict[str, tuple[float, float, float]] = {
    "default": (0.5, 0.3, 0.2),
    "talking": (0.3, 0.5, 0.2),
    "social": (0.4, 0.4, 0.2),
    "goals": (0.6, 0.1, 0.3),
    "planning": (0.5, 0.3, 0.2),
    "reflection": (0.3, 0.2, 0.5),
    "question": (0.8, 0.1, 0.1),
}


def weights_for(purpose: str) -> tuple[float, float, float]:
    try:
        return PRESETS[purpose]
    except KeyError:
        raise ValueError(f"unknown purpose {purpose!r}; choose one of {', '.join(PRESETS)}") from None
