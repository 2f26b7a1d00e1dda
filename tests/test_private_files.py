"""The data directory is private: 0700 directories, 0600 files, whatever the caller's umask (issue 16:
data files were created 0644 in 0755 directories)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.nodes.text.embedder import make_embedder
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings


def _open_to_others(root: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        for name in (".", *dirs, *files):
            path = Path(folder, name)
            mode = path.lstat().st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077:
                found.append(f"{path.relative_to(root)} {stat.filemode(mode)}")
    return found


def test_every_file_of_a_demo_replay_is_private(tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "LUMINA_DATA_DIR": str(data), "COLUMNS": "200"}
    for key in ("REDIS_URL", "QDRANT_URL", "NEO4J_URI", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(key, None)
    try:
        proc = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "demo"], env=env, cwd=tmp_path, umask=0o022,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        files = [p for p in data.rglob("*") if p.is_file()]
        names = {p.name for p in files}
        assert {"archive.duckdb", "checkpoints.sqlite", ".lock"} <= names, names
        assert any(p.parent.name == "redis" for p in files) and any("qdrant" in p.parts for p in files)
        assert _open_to_others(data) == []
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
    finally:
        stop_server(make_settings(data))


def test_an_existing_world_readable_data_dir_is_made_private_when_opened(tmp_path):
    data = tmp_path / "old"
    (data / "qdrant" / "old-collection").mkdir(parents=True)
    (data / "notes.txt").write_text("what a user said")
    for path in (data, data / "qdrant", data / "qdrant" / "old-collection"):
        os.chmod(path, 0o755)
    os.chmod(data / "notes.txt", 0o644)
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    os.chmod(outside, 0o644)
    (data / "link").symlink_to(outside)  # left alone: it points outside
    settings = make_settings(data)
    store = make_store(settings, embedder=make_embedder(settings))
    try:
        store.put(("docs", "u1"), "k", {"text": "a private note"})
        assert _open_to_others(data) == []
        assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # the symlink's target untouched
    finally:
        store.close()
        stop_server(settings)
