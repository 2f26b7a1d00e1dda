"""deploy/compose.yaml and deploy/.env.example agree with each other and with stores/settings.py.

Docker is not available where tests run, so this checks what can go wrong without it: the YAML parses, every
backend has a healthcheck and a volume, every variable compose interpolates is in the example env file, every
variable the app is meant to read is one LuminaSettings reads, and that file selects every production backend.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pydantic import AliasChoices

from lumina_memory.stores.settings import LuminaSettings

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
BACKENDS = ("postgres", "redis", "qdrant", "neo4j", "s3")
OPTIONAL = ("qdrant", "neo4j")  # started with `--profile qdrant` / `--profile neo4j`
# Read by the containers (or by boto3 on the app side), never by LuminaSettings; each with its reader.
NOT_SETTINGS = {
    "REDIS_PASSWORD": "redis-server --requirepass (REDIS_URL carries it for the app)",
    "POSTGRES_PASSWORD": "the postgres image's lumina role (DATABASE_URI carries it for the app)",
    "AWS_ACCESS_KEY_ID": "SeaweedFS identity and boto3",
    "AWS_SECRET_ACCESS_KEY": "SeaweedFS identity and boto3",
    "AWS_REGION": "boto3",
}
# ${VAR}, ${VAR:-default}, ${VAR:?error}; "$${...}" is an escaped dollar for the container's shell.
INTERPOLATION = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:?-][^}]*)?\}")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))


def env_example(commented: bool = False) -> dict[str, str]:
    """The example's variables; ``commented``: also those commented out as ``# NAME=value`` (optional backends)."""
    values: dict[str, str] = {}
    for line in (DEPLOY / ".env.example").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if commented and re.match(r"#\s*[A-Z][A-Z0-9_]*=", line):
            line = line.lstrip("#").strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value.strip()
    return values


def settings_env_names() -> set[str]:
    """Every environment variable LuminaSettings reads."""
    prefix = LuminaSettings.model_config.get("env_prefix", "")
    names: set[str] = set()
    for field, info in LuminaSettings.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names.update(str(choice) for choice in alias.choices)
        elif isinstance(alias, str):
            names.add(alias)
        else:
            names.add(f"{prefix}{field}".upper())
    return names


def test_compose_parses_and_every_backend_has_a_healthcheck_and_a_volume(compose):
    services = compose["services"]
    declared = set(compose["volumes"])
    for name in BACKENDS:
        service = services[name]
        assert service["healthcheck"]["test"], name
        mounted = {v.split(":", 1)[0] for v in service["volumes"]}
        assert mounted & declared, f"{name} keeps its data in no named volume"
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond loopback"
    assert services["s3-init"]["depends_on"]["s3"]["condition"] == "service_healthy"
    assert {name for name in BACKENDS if services[name].get("profiles")} == set(OPTIONAL)


def test_every_interpolated_variable_is_in_the_env_example():
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    used = set(INTERPOLATION.findall(text))
    assert used, "compose.yaml interpolates nothing: the pattern is broken"
    missing = used - set(env_example())
    assert not missing, f"compose.yaml uses {sorted(missing)} but deploy/.env.example does not define them"


def test_every_env_example_variable_is_read_by_settings_or_named_as_container_only():
    known = settings_env_names()
    assert {"DATABASE_URI", "REDIS_URL", "QDRANT_URL", "NEO4J_URI", "LUMINA_S3_ENDPOINT_URL", "LUMINA_DATA_DIR",
            "LUMINA_SECRET_KEY"} <= known
    for name in env_example(commented=True):
        assert name in known or name in NOT_SETTINGS, (
            f"deploy/.env.example sets {name}, which stores/settings.py does not read"
        )
    assert not set(NOT_SETTINGS) & known, "a variable listed as container-only is now a setting"


def test_env_example_selects_every_production_backend_on_the_published_ports(compose, monkeypatch):
    env = env_example()
    for name in env:  # real environment variables would win over the file
        monkeypatch.delenv(name, raising=False)
    settings = LuminaSettings(_env_file=DEPLOY / ".env.example")
    assert settings.database_url and settings.redis_url and settings.s3_endpoint_url and settings.secret_key
    assert not settings.qdrant_url and not settings.neo4j_uri  # pgvector and the graph in PostgreSQL by default
    assert settings.redis_url == env["REDIS_URL"] and f":{env['REDIS_PASSWORD']}@" in settings.redis_url
    assert f":{env['POSTGRES_PASSWORD']}@" in settings.database_url
    assert settings.neo4j_user == env["NEO4J_USER"]
    optional = env_example(commented=True)
    published = {
        name: {str(p).split(":")[1] for p in compose["services"][name]["ports"]} for name in BACKENDS
    }
    for url, service in (
        (settings.database_url, "postgres"), (settings.redis_url, "redis"), (optional["QDRANT_URL"], "qdrant"),
        (optional["NEO4J_URI"], "neo4j"), (settings.s3_endpoint_url, "s3"),
    ):
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert port in published[service], f"{url} does not reach a port {service} publishes"
