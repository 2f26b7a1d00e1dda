"""Statistics of the recall ablation (bench.ablation): a switch's contribution with a paired bootstrap interval
over conversations, and leave-one-conversation-out.

The unit of resampling is the conversation, not the question: questions of one conversation share its turns,
speakers and index, so they are not independent. Each resample draws as many conversations as there are, with
replacement, and computes the same statistic for both configurations on the same draw (paired): the contribution
full − off is the difference of question-weighted means over the drawn conversations' questions. Everything here
reads per-conversation sums (``ConvSums``), enough to recompute every figure from the saved JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

RESAMPLES = 1000
SEED = 7


@dataclass
class ConvSums:
    """One configuration's per-question scores summed over one conversation's questions."""

    n: int = 0
    recall: float = 0.0
    hit: float = 0.0

    def add(self, recall: float, hit: bool) -> None:
        self.n += 1
        self.recall += recall
        self.hit += float(hit)

    def as_dict(self) -> dict[str, float]:
        return {"n": self.n, "recall": round(self.recall, 6), "hit": self.hit}


def _arrays(full: Mapping[str, ConvSums], off: Mapping[str, ConvSums], metric: str):
    names = sorted(full)
    missing = sorted(set(names) ^ set(off))
    if missing:
        raise ValueError(f"paired bootstrap needs the same conversations in both configurations; differ: {missing}")
    counts = np.array([full[c].n for c in names], dtype=np.float64)
    if any(full[c].n != off[c].n for c in names):
        raise ValueError("paired bootstrap needs the same questions in both configurations")
    diff = np.array([getattr(full[c], metric) - getattr(off[c], metric) for c in names], dtype=np.float64)
    return names, counts, diff


def contribution(full: Mapping[str, ConvSums], off: Mapping[str, ConvSums], metric: str = "recall",
                 resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95) -> dict[str, float]:
    """Δ = mean(full) − mean(off) over all questions, and its percentile bootstrap interval resampling
    conversations (paired: the same draw for both configurations)."""
    names, counts, diff = _arrays(full, off, metric)
    if counts.sum() == 0:
        raise ValueError("no questions")
    delta = float(diff.sum() / counts.sum())
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(resamples, len(names)))
    n = counts[draws].sum(axis=1)
    ok = n > 0  # a draw of conversations without questions has no mean; it is left out
    boot = diff[draws].sum(axis=1)[ok] / n[ok]
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(boot, [tail, 100 - tail])
    return {"delta": delta, "lo": float(lo), "hi": float(hi), "resamples": int(ok.sum())}


def includes_zero(ci: Mapping[str, float], eps: float = 1e-12) -> bool:
    return ci["lo"] <= eps and ci["hi"] >= -eps


def keep_if_positive(full: Mapping[str, ConvSums], off: Mapping[str, ConvSums], metric: str) -> bool:
    """The tuning rule leave-one-out checks: keep a switch when it raised the metric on the conversations seen."""
    _, counts, diff = _arrays(full, off, metric)
    return bool(counts.sum() and diff.sum() / counts.sum() > 0)


def leave_one_out(full: Mapping[str, ConvSums], off: Mapping[str, ConvSums], metric: str = "recall",
                  decide: Callable[[Mapping[str, ConvSums], Mapping[str, ConvSums], str], bool] = keep_if_positive,
                  ) -> dict[str, object]:
    """Leave-one-conversation-out: for each conversation, ``decide`` keeps or drops the switch from the others
    alone, and the held-out conversation scores that decision (its Δ if kept, 0 if dropped: the metric's gain
    over running without the switch). The mean held-out gain is what choosing the switch this way is worth on
    conversations no choice saw; ``agree`` counts the held-out conversations whose own Δ has the chosen sign."""
    names, counts, diff = _arrays(full, off, metric)
    held: dict[str, dict[str, float]] = {}
    for i, name in enumerate(names):
        rest = [c for c in names if c != name]
        keep = decide({c: full[c] for c in rest}, {c: off[c] for c in rest}, metric) if rest else True
        own = float(diff[i] / counts[i]) if counts[i] else 0.0
        held[name] = {"keep": keep, "delta": own, "gain": own if keep else 0.0}
    n = counts.sum()
    gain = float(sum(held[c]["gain"] * counts[i] for i, c in enumerate(names)) / n) if n else 0.0
    agree = sum(1 for c in names if (held[c]["delta"] > 0) == held[c]["keep"] or held[c]["delta"] == 0)
    return {"held_out": held, "gain": gain, "agree": agree, "conversations": len(names)}


def per_question_sums(rows: Sequence[Mapping[str, object]]) -> dict[str, ConvSums]:
    """Per-question rows ({"conv", "recall", "hit"}) of one configuration summed by conversation."""
    out: dict[str, ConvSums] = {}
    for row in rows:
        out.setdefault(str(row["conv"]), ConvSums()).add(float(row["recall"]), bool(row["hit"]))
    return out
