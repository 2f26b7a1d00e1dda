"""tests.conftest.make_settings: an override given by a setting's alias (REDIS_URL=...) wins over the fixture's
own default for that setting, whichever of a field's name and alias pydantic prefers when both are given."""

from __future__ import annotations

from .conftest import make_settings


def test_an_alias_override_beats_the_fixtures_default(tmp_path) -> None:
    settings = make_settings(tmp_path, REDIS_URL="unix:///tmp/shared.sock", DATABASE_URL="postgresql://h/db")
    assert settings.redis_url == "unix:///tmp/shared.sock"
    assert settings.database_url == "postgresql://h/db"


def test_a_field_name_override_still_works_and_unset_servers_stay_off(tmp_path) -> None:
    settings = make_settings(tmp_path, redis_url="unix:///tmp/other.sock")
    assert settings.redis_url == "unix:///tmp/other.sock"
    assert settings.database_url is None and settings.qdrant_url is None and settings.openai_api_key is None
