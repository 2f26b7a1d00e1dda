"""Segment summaries: extractive offline (central, diverse turns), an LLM when one is configured.

The method that ran is returned with the summary and stored with the segment, so a fallback to the
offline path is visible in stats and logs, never silent.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from lumina_memory.stores.settings import LuminaSettings

log = logging.getLogger("lumina.summarize")

_SNIPPET_CHARS = 160


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET_CHARS else text[: _SNIPPET_CHARS - 1] + "…"


def extractive_summary(
    speakers: Sequence[str], texts: Sequence[str], vectors: np.ndarray, max_sentences: int
) -> str:
    """Pick the turns closest to the segment's centroid, skipping near-repeats (MMR, λ=0.7), and
    keep them in conversation order so the summary still reads as a dialogue."""
    if not texts:
        return ""
    centroid = vectors.mean(axis=0)
    centrality = vectors @ centroid
    # Very short turns ("うん！") are central by accident of averaging; prefer informative ones.
    lengths = np.array([min(len(t), 60) / 60 for t in texts], dtype=np.float32)
    relevance = centrality * (0.5 + 0.5 * lengths)
    chosen: list[int] = []
    candidates = list(range(len(texts)))
    while candidates and len(chosen) < max_sentences:
        def mmr(i: int) -> float:
            redundancy = max((float(vectors[i] @ vectors[j]) for j in chosen), default=0.0)
            return 0.7 * float(relevance[i]) - 0.3 * redundancy

        best = max(candidates, key=mmr)
        chosen.append(best)
        candidates.remove(best)
    return " / ".join(f"{speakers[i]}: {_clip(texts[i])}" for i in sorted(chosen))


def llm_summary(settings: LuminaSettings, speakers: Sequence[str], texts: Sequence[str], chat_model=None) -> str:
    """Summarise with a chat model (ChatOpenAI by default; tests pass a fake chat model)."""
    if chat_model is None:
        from .openai_models import chat_model as openai_chat_model

        chat_model = openai_chat_model(settings)
    transcript = "\n".join(f"{s}: {t}" for s, t in zip(speakers, texts))
    prompt = (
        "Summarise this conversation segment in the language it is written in, in at most "
        f"{settings.summary_max_sentences} sentences. Keep names, dates, numbers and decisions.\n\n{transcript}"
    )
    return str(chat_model.invoke(prompt).content).strip()


def summarise(
    settings: LuminaSettings,
    speakers: Sequence[str],
    texts: Sequence[str],
    vectors: np.ndarray,
    chat_model=None,
) -> tuple[str, str]:
    """Return (summary, method). method is 'llm', 'extractive' or 'extractive-after-llm-error'."""
    use_llm = chat_model is not None or (settings.llm != "offline" and settings.use_openai) or settings.llm == "openai"
    if use_llm:
        try:
            return llm_summary(settings, speakers, texts, chat_model), "llm"
        except Exception as exc:  # noqa: BLE001 - any provider failure falls back, loudly
            log.warning("LLM summary failed (%s); using the extractive summary for this segment", exc)
            return extractive_summary(speakers, texts, vectors, settings.summary_max_sentences), (
                "extractive-after-llm-error"
            )
    return extractive_summary(speakers, texts, vectors, settings.summary_max_sentences), "extractive"
