"""The user-facing docs stay short, current and connected.

README.md and bench/README.md are pages a user reads first: each stays under 420 lines, holds no dated diary
(an ISO date appears only on the line that dates the benchmark table; no heading names a year), and every
relative link of the README, bench/README.md and docs/ points at a file that exists (and at a heading that exists,
when the link names one). Dated notes and the history of what was tried live in docs/history.md and
docs/bench-history.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BENCH_README = ROOT / "bench" / "README.md"
MAX_LINES = 420
ISO_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
YEAR = re.compile(r"(?<!\d)20\d\d(?!\d)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
DATE_LINE = "Measured "  # the benchmark table's date line starts so


def _pages() -> list[Path]:
    return [README, BENCH_README, *sorted((ROOT / "docs").glob("**/*.md"))]


def _prose(path: Path) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks and indented command lines."""
    out, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            out.append((number, line))
    return out


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for _, line in _prose(path) if line.startswith("#")}


@pytest.mark.parametrize("page", [README, BENCH_README], ids=["README", "bench-README"])
def test_front_pages_are_short(page):
    lines = page.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"{page.relative_to(ROOT)} has {len(lines)} lines (at most {MAX_LINES})"


@pytest.mark.parametrize("page", [README, BENCH_README], ids=["README", "bench-README"])
def test_front_pages_carry_no_dated_diary(page):
    text = page.read_text(encoding="utf-8").splitlines()
    dated = [(n, line) for n, line in enumerate(text, 1) if ISO_DATE.search(line)]
    assert len(dated) <= 1 and all(line.startswith(DATE_LINE) for _, line in dated), dated
    if dated:  # the date line dates the benchmark table right below it
        below = [line for line in text[dated[0][0]:] if line.strip()][:1]
        assert below and below[0].startswith("|"), (dated, below)
    headings = [line for _, line in _prose(page) if line.startswith("#") and YEAR.search(line)]
    assert headings == [], headings


def test_the_readme_dates_its_benchmark_table():
    dated = [line for line in README.read_text(encoding="utf-8").splitlines() if ISO_DATE.search(line)]
    assert len(dated) == 1 and dated[0].startswith(DATE_LINE), dated


def test_the_two_commands_stay_as_ci_runs_them():
    readme = README.read_text(encoding="utf-8")
    assert "pip install -e . && lumina-memory demo\n" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = "apt-get update && apt-get install -y redis-server && pip install -e '.[test]' && python -m pytest -q"
    assert f"\n{command}\n" in readme and f"\n{command}\n" in ci


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for number, line in _prose(page):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: …
                continue
            path_part, _, anchor = target.partition("#")
            file = (page.parent / path_part).resolve() if path_part else page
            if not file.exists():
                broken.append((number, target, "no such file"))
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
                broken.append((number, target, "no such heading"))
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


def test_history_has_one_home():
    """Dated notes moved from the README and bench/README are kept, in docs/."""
    history = (ROOT / "docs" / "history.md").read_text(encoding="utf-8")
    bench_history = (ROOT / "docs" / "bench-history.md").read_text(encoding="utf-8")
    assert ISO_DATE.search(history) and ISO_DATE.search(bench_history)
