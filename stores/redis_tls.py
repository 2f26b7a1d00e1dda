"""L11: TLS to a production Redis (``rediss://``): the certificate settings as redis-py's ``ssl_*`` options, and a
failed handshake told as what it is (an untrusted certificate, a refused client certificate) rather than as a
server that is down.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import InvalidInput
from .settings import LuminaSettings

_FILES = (("redis_tls_ca_file", "ssl_ca_certs"), ("redis_tls_cert_file", "ssl_certfile"),
          ("redis_tls_key_file", "ssl_keyfile"))


def tls_options(settings: LuminaSettings, url: str) -> dict[str, Any]:
    """redis-py's ``ssl_*`` keyword arguments for ``url`` under ``settings``; {} for a plain ``redis://`` or unix
    URL. A certificate setting beside a URL that is not ``rediss://`` is refused: it would be ignored, and the
    connection would go in clear text while the settings say TLS."""
    given = {name: getattr(settings, name) for name, _ in _FILES if getattr(settings, name) is not None}
    if urlsplit(url).scheme != "rediss":
        if given:
            names = ", ".join(f"LUMINA_{n.upper()}" for n in given)
            raise InvalidInput("redis_url", f"{names} set but REDIS_URL is not rediss://; use rediss:// for TLS")
        return {}
    if (settings.redis_tls_cert_file is None) != (settings.redis_tls_key_file is None):
        raise InvalidInput("redis_tls_key_file", "a client certificate needs both LUMINA_REDIS_TLS_CERT_FILE and "
                           "LUMINA_REDIS_TLS_KEY_FILE")
    options: dict[str, Any] = {
        "ssl_cert_reqs": settings.redis_tls_verify,
        # A hostname can be checked only against a verified certificate.
        "ssl_check_hostname": settings.redis_tls_verify == "required" and settings.redis_tls_check_hostname,
    }
    for name, option in _FILES:
        path: Path | None = getattr(settings, name)
        if path is None:
            continue
        path = path.expanduser()
        if not path.is_file():
            raise InvalidInput(name, f"{str(path)!r} is not a readable file")
        options[option] = str(path)
    return options


def tls_failure(exc: BaseException) -> str | None:
    """What a failed TLS handshake means, from the error redis-py raised (None: not a TLS failure)."""
    seen: BaseException | None = exc
    text = ""
    while seen is not None:  # redis-py wraps ssl.SSLError in its ConnectionError, sometimes only in the message
        text += f" {seen}"
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return ("TLS: the server's certificate is not trusted (not signed by LUMINA_REDIS_TLS_CA_FILE, or its "
                    "name is not the host in REDIS_URL)")
        if isinstance(seen, ssl.SSLEOFError) or "EOF occurred in violation of protocol" in str(seen) or (
                "CERTIFICATE_REQUIRED" in str(seen).upper()):
            # TLS 1.3 sends the client's certificate after the handshake: a server that wanted one hangs up then.
            return ("TLS: the server closed the connection after the handshake, as one does that asks for a client "
                    "certificate: set LUMINA_REDIS_TLS_CERT_FILE and LUMINA_REDIS_TLS_KEY_FILE (signed by a CA it trusts)")
        seen = seen.__cause__ or seen.__context__
    if "SSL" in text or "TLS" in text:
        return "TLS handshake failed (is the server's port a TLS port, and REDIS_URL rediss://?)"
    return None
