"""Priming (A1, L6, P1, S1, S2): the memory a character starts its answer with, under budgets by message type."""

from .budgets import WorkingMemoryBudget, channel_budgets, working_memory_split
from .message_type import MESSAGE_TYPES, detect_message_type
from .models import Primed, PrimedItem, Section
from .presets import PRESETS, PrimingPreset
from .prime import prime

__all__ = ["MESSAGE_TYPES", "PRESETS", "Primed", "PrimedItem", "PrimingPreset", "Section", "WorkingMemoryBudget",
           "channel_budgets", "detect_message_type", "prime", "working_memory_split"]
