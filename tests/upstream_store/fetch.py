"""Fetch LangGraph's own store test files from the source distributions on the package index.

The project keeps only code it wrote, so the suites are not copied into the repository: each test run
takes them from the sdists of the versions installed here (``langgraph-checkpoint``: the InMemoryStore
suite ``tests/test_store.py``; ``langgraph-checkpoint-sqlite``: ``tests/test_store.py``,
``tests/test_async_store.py``, ``tests/test_ttl.py``), unpacked once into

    .cache/upstream-store-suites/<distribution>-<version>/tests/...

(git-ignored by the ``.gitignore`` this module writes into ``.cache/``) and reused while the version stays.
Ahead of a run, or to look at the files:

    python -m tests.upstream_store.fetch

A failed download raises ``FetchError`` with pip's own words; the suites then fail, never skip.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "upstream-store-suites"
DISTRIBUTIONS = ("langgraph-checkpoint", "langgraph-checkpoint-sqlite")
PIP_TIMEOUT_S = 600


class FetchError(RuntimeError):
    """The sdist could not be downloaded or unpacked (the message carries pip's output)."""


def installed_version(distribution: str) -> str:
    return importlib.metadata.version(distribution)


def fetch(distribution: str, version: str | None = None, cache: Path = CACHE) -> Path:
    """The unpacked sdist of ``distribution==version`` (default: the installed version), downloaded once.

    Only the sdist's ``tests/`` folder and PKG-INFO are kept. Concurrent runs are safe: each unpacks into
    its own temporary folder and renames it into place; the first rename wins."""
    version = version or installed_version(distribution)
    target = cache / f"{distribution}-{version}"
    if (target / "tests").is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    _ignore_cache(cache.parent)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as tmp:
        work = Path(tmp)
        archive = _download(distribution, version, work / "download")
        unpacked = work / "unpacked"
        _unpack_tests(archive, unpacked)
        try:
            unpacked.rename(target)
        except OSError:
            if not (target / "tests").is_dir():  # not another run's rename: a real failure
                raise
    return target


def _download(distribution: str, version: str, dest: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--disable-pip-version-check", f"{distribution}=={version}", "-d", str(dest)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise FetchError(f"`{' '.join(command)}` took more than {PIP_TIMEOUT_S} s") from exc
    archives = sorted(dest.glob("*.tar.gz")) if dest.is_dir() else []
    if done.returncode != 0 or len(archives) != 1:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise FetchError(f"could not download the sdist of {distribution}=={version} "
                         f"(`{' '.join(command)}` exited {done.returncode}):\n{tail}")
    return archives[0]


def _unpack_tests(archive: Path, dest: Path) -> None:
    with tarfile.open(archive, "r:gz") as tar:
        wanted = [m for m in tar.getmembers() if _kept(m.name)]
        if not any(m.name.split("/", 2)[1:2] == ["tests"] for m in wanted):
            raise FetchError(f"{archive.name} has no tests/ folder")
        for member in wanted:  # our own check, as Python < 3.11.4 has no extraction filters
            if not (member.isfile() or member.isdir()) or ".." in member.name.split("/") or member.name.startswith("/"):
                raise FetchError(f"{archive.name}: unexpected member {member.name!r}")
        tar.extractall(dest.parent / ".tar", members=wanted)
    (root,) = (dest.parent / ".tar").iterdir()  # the sdist's single top folder
    shutil.move(str(root), str(dest))


def _kept(name: str) -> bool:
    parts = name.split("/")
    return len(parts) >= 2 and (parts[1] == "tests" or (len(parts) == 2 and parts[1] == "PKG-INFO"))


def _ignore_cache(cache_root: Path) -> None:
    marker = cache_root / ".gitignore"
    if not marker.exists():
        marker.write_text("# downloaded at test time (tests/upstream_store/fetch.py)\n*\n", encoding="utf-8")


def main() -> int:
    for distribution in DISTRIBUTIONS:
        path = fetch(distribution)
        tests = sorted(p.relative_to(path).as_posix() for p in (path / "tests").glob("*.py"))
        print(f"{distribution} {installed_version(distribution)}: {path}")
        for name in tests:
            print(f"  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
