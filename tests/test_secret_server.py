"""The memory's secret (stores.secret.memory_secret): the data dir's lumina.secret when embedded; in server mode
the setting LUMINA_SECRET_KEY, required there, the same in every process, and never a file or a row."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lumina_memory.stores.erasure import check_token, make_token
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.secret import SECRET_FILE, MissingSecret, data_dir_secret, existing_memory_secret, memory_secret

from .conftest import make_settings

REPO = Path(__file__).resolve().parents[1]
# Server mode is chosen by the setting alone; reading the secret connects to nothing.
SERVER = "postgresql://lumina@/lumina?host=/nonexistent-socket-dir"


def test_embedded_the_secret_is_the_data_dirs_file(tmp_path):
    settings = make_settings(tmp_path / "data")
    assert existing_memory_secret(settings) is None
    key = memory_secret(settings)
    assert len(key) == 32 and key == data_dir_secret(tmp_path / "data")
    assert (tmp_path / "data" / SECRET_FILE).stat().st_mode & 0o777 == 0o600
    assert existing_memory_secret(settings) == key
    # A secret_key set without DATABASE_URI changes nothing: existing data dirs keep their tokens and chain.
    assert memory_secret(make_settings(tmp_path / "data", secret_key="z" * 40)) == key


def test_server_mode_refuses_to_run_without_the_secret(tmp_path):
    settings = make_settings(tmp_path / "data", database_url=SERVER)
    for read in (memory_secret, existing_memory_secret):
        with pytest.raises(MissingSecret) as refused:
            read(settings)
        assert isinstance(refused.value, InvalidInput) and refused.value.field == "secret_key"
        assert "LUMINA_SECRET_KEY" in str(refused.value) and "is not set" in str(refused.value)
    assert not (tmp_path / "data").exists()  # no file stands in for it


@pytest.mark.parametrize("value, problem", [("short", "too short"), ("  " + "a" * 20 + "  ", "too short"),
                                            ("\ud800" * 40, "not valid Unicode")])
def test_a_weak_or_broken_server_secret_is_named(tmp_path, value, problem):
    with pytest.raises(MissingSecret, match=problem):
        memory_secret(make_settings(tmp_path / "data", database_url=SERVER, secret_key=value))


def test_the_server_secret_is_the_setting(tmp_path, monkeypatch):
    hex_key = bytes(range(32)).hex()
    assert memory_secret(make_settings(tmp_path, database_url=SERVER, secret_key=hex_key)) == bytes(range(32))
    text = "correct horse battery staple, long enough"
    first = memory_secret(make_settings(tmp_path / "a", database_url=SERVER, secret_key=text))
    assert first == memory_secret(make_settings(tmp_path / "b", database_url=SERVER, secret_key=text))
    assert first != memory_secret(make_settings(tmp_path / "a", database_url=SERVER, secret_key=text + "!"))
    assert len(first) == 32 and text.encode() not in first
    monkeypatch.setenv("LUMINA_SECRET_KEY", text)
    from lumina_memory.stores.settings import LuminaSettings

    assert memory_secret(LuminaSettings(data_dir=tmp_path, database_url=SERVER)) == first
    assert text not in repr(LuminaSettings(data_dir=tmp_path, database_url=SERVER))  # a SecretStr
    assert not any(tmp_path.iterdir())


TOKEN = textwrap.dedent("""
    import sys
    from pathlib import Path
    from lumina_memory.stores.erasure import make_token
    from lumina_memory.stores.secret import memory_secret
    from lumina_memory.stores.settings import LuminaSettings

    settings = LuminaSettings(data_dir=Path(sys.argv[1]), database_url=sys.argv[2])
    print(make_token(memory_secret(settings), "alice", 600)[0])
""")


def test_a_token_one_process_issues_another_accepts(tmp_path):
    """Replicas have data dirs of their own: an erase plan shown by one is confirmed on another."""
    text = "the same secret in every replica, 32+"
    env = {**os.environ, "PYTHONPATH": str(REPO), "LUMINA_SECRET_KEY": text}
    child = subprocess.run([sys.executable, "-c", TOKEN, str(tmp_path / "replica-a"), SERVER], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    token = child.stdout.strip()
    here = make_settings(tmp_path / "replica-b", database_url=SERVER, secret_key=text)
    check_token(memory_secret(here), "alice", token)
    with pytest.raises(InvalidInput, match="was not issued"):
        check_token(memory_secret(make_settings(tmp_path / "c", database_url=SERVER, secret_key=text + "x")),
                    "alice", token)
    with pytest.raises(InvalidInput, match="was not issued"):
        check_token(memory_secret(here), "alice2", token)
    assert make_token(memory_secret(here), "alice", 60)[0] != token
