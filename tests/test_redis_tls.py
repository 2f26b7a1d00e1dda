"""L11: the mid-term store over TLS (rediss://) to a private redis-server that speaks only TLS, with certificates made
here: a trusted server with and without a client certificate, a wrong CA refused by name, settings that would
silently not apply refused before anything connects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.midterm_redis import RedisMidTerm
from lumina_memory.stores.settings import LuminaSettings

from .redis_tls import Certs, TlsRedis, make_certs, start_tls_redis
from .test_midterm_conformance import TTL, new_user, record

pytestmark = pytest.mark.slow


def settings_for(data_dir: Path, url: str | None, **tls) -> LuminaSettings:
    return LuminaSettings(data_dir=data_dir, REDIS_URL=url, **tls)


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def mutual(tmp_path_factory, certs) -> Iterator[TlsRedis]:
    """A server that asks every client for a certificate its CA signed."""
    server = start_tls_redis(tmp_path_factory.mktemp("tls-mutual"), certs, auth_clients="yes")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def one_way(tmp_path_factory, certs) -> Iterator[TlsRedis]:
    server = start_tls_redis(tmp_path_factory.mktemp("tls-oneway"), certs, auth_clients="no")
    yield server
    server.stop()


def test_round_trip_with_a_client_certificate(tmp_path, certs, mutual) -> None:
    mid = RedisMidTerm.from_settings(settings_for(
        tmp_path, mutual.url, redis_tls_ca_file=certs.ca, redis_tls_cert_file=certs.client_cert,
        redis_tls_key_file=certs.client_key))
    try:
        user = new_user()
        original = record(user, "seg-1", 1_700_000_000.5)
        mid.put_segment(original, TTL)
        got = mid.get_segment(user, "seg-1")
        assert got is not None and got.model_dump(exclude={"embedding"}) == original.model_dump(exclude={"embedding"})
        assert mid.count(user) == 1 and mid.delete_user(user) >= 1 and mid.count(user) == 0
        assert mid.backend == "redis"
        connection = mid._client.connection_pool.get_connection()
        try:  # the connection really is TLS, verified against our CA
            assert type(connection).__name__ == "SSLConnection" and connection.ca_certs == str(certs.ca)
        finally:
            mid._client.connection_pool.release(connection)
    finally:
        mid.close()


def test_one_way_tls_needs_only_the_ca(tmp_path, certs, one_way) -> None:
    mid = RedisMidTerm.from_settings(settings_for(tmp_path, one_way.url, redis_tls_ca_file=certs.ca))
    try:
        user = new_user()
        mid.put_segment(record(user, "seg-1", 1_700_000_000.5), TTL)
        assert mid.get_segment(user, "seg-1") is not None
    finally:
        mid.close()


def test_a_wrong_ca_is_refused_by_name(tmp_path, certs, one_way) -> None:
    mid = RedisMidTerm.from_settings(settings_for(tmp_path, one_way.url, redis_tls_ca_file=certs.other_ca))
    try:
        with pytest.raises(StoreUnavailable) as caught:
            mid.get_segment(new_user(), "seg-1")
        message = str(caught.value)
        assert "not trusted" in message and "LUMINA_REDIS_TLS_CA_FILE" in message
        assert "CERTIFICATE_VERIFY_FAILED" in message
    finally:
        mid.close()


def test_a_server_asking_for_a_client_certificate_says_so(tmp_path, certs, mutual) -> None:
    mid = RedisMidTerm.from_settings(settings_for(tmp_path, mutual.url, redis_tls_ca_file=certs.ca))
    try:
        with pytest.raises(StoreUnavailable) as caught:
            mid.get_segment(new_user(), "seg-1")
        assert "client certificate" in str(caught.value) and "LUMINA_REDIS_TLS_CERT_FILE" in str(caught.value)
    finally:
        mid.close()


def test_plain_redis_url_to_a_tls_port_is_not_a_silent_success(tmp_path, one_way) -> None:
    mid = RedisMidTerm.from_settings(settings_for(tmp_path, one_way.url.replace("rediss://", "redis://")))
    try:
        with pytest.raises(StoreUnavailable):
            mid.get_segment(new_user(), "seg-1")
    finally:
        mid.close()


def test_tls_files_beside_a_plain_url_are_refused(tmp_path, certs) -> None:
    with pytest.raises(InvalidInput) as caught:
        RedisMidTerm.from_settings(settings_for(tmp_path, "redis://127.0.0.1:1/0", redis_tls_ca_file=certs.ca))
    assert "rediss://" in str(caught.value) and "LUMINA_REDIS_TLS_CA_FILE" in str(caught.value)


def test_a_missing_certificate_file_is_named(tmp_path, certs) -> None:
    with pytest.raises(InvalidInput) as caught:
        RedisMidTerm.from_settings(settings_for(tmp_path, "rediss://127.0.0.1:1/0",
                                                redis_tls_ca_file=tmp_path / "absent.pem"))
    assert caught.value.field == "redis_tls_ca_file"
    with pytest.raises(InvalidInput) as caught:
        RedisMidTerm.from_settings(settings_for(tmp_path, "rediss://127.0.0.1:1/0", redis_tls_cert_file=certs.client_cert))
    assert caught.value.field == "redis_tls_key_file"


def test_doctor_reaches_the_tls_server_and_names_a_wrong_ca(tmp_path, certs, one_way) -> None:
    from lumina_memory.graphs.doctor import _Doctor
    from lumina_memory.graphs.doctor_check import FAIL, OK

    good = _Doctor(settings_for(tmp_path, one_way.url, redis_tls_ca_file=certs.ca)).midterm_checks()
    assert good[0].status == OK and good[0].check == "reachable", good
    bad = _Doctor(settings_for(tmp_path, one_way.url, redis_tls_ca_file=certs.other_ca)).midterm_checks()
    assert bad[0].status == FAIL and "not trusted" in bad[0].detail, bad
