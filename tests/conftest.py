"""Fixtures shared across test folders: a real Redis server for the telemetry and web bridge tests.

The server is the system's ``redis-server`` (``.ci/run`` installs it; ``apt-get install redis-server``), started once
per test run on a free port of 127.0.0.1 with persistence off. Without it (or without the ``redis`` package) the
tests that need it are skipped with that reason.
"""
import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A ``redis-server`` process on 127.0.0.1 (``url``); ``stop()`` kills it, ``start()`` brings it back on the
    same port."""

    def __init__(self, exe: str) -> None:
        self.exe = exe
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = tempfile.mkdtemp(prefix="lzlite-redis-")
        self.proc = None

    def start(self) -> "RedisServer":
        import redis

        self.proc = subprocess.Popen([self.exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", self.dir, "--protected-mode", "yes"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10.0
        while True:
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=0.2).ping()
                return self
            except redis.exceptions.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"redis-server did not start on port {self.port}")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def client(self):
        import redis

        return redis.Redis.from_url(self.url, decode_responses=True)


def _redis_server_exe() -> str:
    exe = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)
    if exe is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run installs it)")
    try:
        import redis  # noqa: F401
    except ImportError:
        pytest.skip("the redis Python package is not installed (pip install -e '.[test]')")
    return exe


_SHARED: "RedisServer | None" = None  # one redis-server for the whole test run, started on first use


def _stop_shared() -> None:
    if _SHARED is not None:
        _SHARED.stop()
        shutil.rmtree(_SHARED.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def redis_shared():
    """The test run's one redis-server (started by the first test that needs it, stopped when pytest exits)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = RedisServer(_redis_server_exe()).start()
        atexit.register(_stop_shared)
    return _SHARED


@pytest.fixture
def redis_server(redis_shared):
    """The shared redis-server, emptied before the test."""
    redis_shared.client().flushdb()
    return redis_shared


@pytest.fixture
def own_redis_server():
    """A redis-server of the test's own (it may stop and restart it)."""
    server = RedisServer(_redis_server_exe())
    yield server
    server.stop()
    shutil.rmtree(server.dir, ignore_errors=True)
