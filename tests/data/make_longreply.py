"""Writes longreply_mini.json: the small fixed sample of the long-reply evaluation set (issue 19) for the tests —
one English and one Japanese user ↔ assistant conversation in LoCoMo's format, 4–5 sessions each, long markdown
replies with code blocks and lists, facts buried in them, facts updated later, and 10–14 questions each
(category 6 = update). Made by bench.longreply_data's generator with its MINI profile and a fixed seed, so this
script regenerates the file byte for byte:

    python tests/data/make_longreply.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from bench.longreply_data import MINI, dumps, generate  # noqa: E402

OUT = Path(__file__).with_name("longreply_mini.json")
SEED = 19


def build() -> str:
    """The file's text: one conversation per language, no degenerate reply (the generated set has those)."""
    return dumps(generate(1, SEED, profile=MINI))


def main() -> None:
    OUT.write_text(build(), encoding="utf-8")


if __name__ == "__main__":
    main()
