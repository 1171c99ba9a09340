"""Live run status, curves and spectator games in Redis, written by a background thread that never blocks training.

The keys (docs/architecture.md, "Redis keys"; ``<run>`` is the run id):

- ``lzlite:runs``: sorted set of run ids, scored by their last update (unix seconds);
- ``lzlite:run:<run>:status``: the learner's status, JSON, TTL 60 s;
- ``lzlite:run:<run>:info``: what the run is (experiment, algorithm, game, run directory), JSON, kept as long as
  its streams, so a finished run can still be listed and played against;
- ``lzlite:run:<run>:actor:<k>``: actor k's status, JSON, TTL 30 s;
- ``lzlite:run:<run>:curve``: stream of logged scalars (fields ``tag``, ``step``, ``value``, ``t``), capped ~20000;
- ``lzlite:run:<run>:games``: stream of ``MoveEvent`` JSON (field ``event``), capped ~2000.

Callers only put work on a bounded queue (``put_nowait``) or replace the status dict; the thread sends what
it holds in one pipeline. Redis absent or gone: one warning, then reconnects with exponential backoff while
what cannot be sent is dropped and counted (``dropped``). The status and the run's registration are rewritten
by a heartbeat, so a run that logs rarely (a long collect) stays listed.
"""
from __future__ import annotations

import json
import queue
import threading
import time
import warnings
from typing import Any, Dict, Optional, Tuple

from lzlite.telemetry.events import MoveEvent

__all__ = ["RedisPublisher", "RUNS_KEY", "run_key", "STATUS_TTL_S", "ACTOR_TTL_S", "CURVE_MAXLEN", "GAMES_MAXLEN"]

RUNS_KEY = "lzlite:runs"
STATUS_TTL_S = 60
ACTOR_TTL_S = 30
CURVE_MAXLEN = 20000
GAMES_MAXLEN = 2000
KEEP_S = 7 * 24 * 3600  # a run's streams and its entry in lzlite:runs go a week after its last update
QUEUE_SIZE = 10000  # curve points and move events waiting for the thread; more are dropped
HEARTBEAT_S = {"learner": 20.0, "actor": 10.0}  # status rewritten at least this often (a third of its TTL)
MIN_STATUS_GAP_S = 0.25  # a status changed more often is sent at this rate
BACKOFF_S = (0.5, 30.0)  # reconnect delay: first, and the most it doubles to


def run_key(run: str, what: str) -> str:
    """``lzlite:run:<run>:<what>`` (``status``, ``info``, ``curve``, ``games``, ``actor:<k>``)."""
    return f"lzlite:run:{run}:{what}"


class RedisPublisher:
    """Sends one run's status, curve points and move events to Redis from a daemon thread.

    Args:
        url: a Redis URL ('redis://127.0.0.1:6379/0').
        run: the run id.
        role: 'learner' (writes the run status) or 'actor' (writes its actor key).
        actor_id: the actor's number (role 'actor').
        info: the run's ``info`` (role 'learner'): run, exp_name, algorithm, game, run_dir, started_at.
    Attributes:
        dropped: curve points and events not sent (queue full, or Redis unreachable).
        sent: curve points and events sent.
        connected: whether the last attempt to talk to Redis succeeded.
    """

    def __init__(self, url: str, run: str, role: str = "learner", actor_id: Optional[int] = None,
                 info: Optional[Dict[str, Any]] = None) -> None:
        if role not in HEARTBEAT_S:
            raise ValueError(f"role must be 'learner' or 'actor', got {role!r}")
        if role == "actor" and actor_id is None:
            raise ValueError("an actor's publisher needs its actor_id")
        self.url, self.run, self.role, self.actor_id = url, run, role, actor_id
        self.info = json.dumps(info or dict(run=run))
        self.dropped = 0
        self.sent = 0
        self.connected = False
        self.warned: Optional[str] = None  # the one warning given, if any
        self._queue: "queue.Queue[Tuple[str, Any]]" = queue.Queue(maxsize=QUEUE_SIZE)
        self._lock = threading.Lock()
        self._status: Optional[Dict[str, Any]] = None
        self._status_dirty = False
        self._stop = threading.Event()
        self._client = None
        self._thread = threading.Thread(target=self._run, name=f"lzlite-redis-{role}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------------------------ the callers' side
    def set_status(self, status: Dict[str, Any]) -> None:
        """Replace the status to publish (the thread sends the newest one; never blocks)."""
        with self._lock:
            self._status = dict(status)
            self._status_dirty = True

    def curve(self, tag: str, step: int, value: float, t: Optional[float] = None) -> None:
        """Queue one curve point (dropped and counted when the queue is full)."""
        self._put(("curve", (tag, int(step), float(value), time.time() if t is None else t)))

    def move(self, event: MoveEvent) -> None:
        """Queue one move event for the games stream."""
        self._put(("move", event))

    def _put(self, item: Tuple[str, Any]) -> None:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1

    def close(self, timeout: float = 3.0) -> None:
        """Send what is queued (for up to ``timeout`` seconds while Redis answers) and stop the thread."""
        self._stop.set()
        self._thread.join(timeout)

    # ------------------------------------------------------------------------------------ the thread's side
    def _warn(self, what: str) -> None:
        if self.warned is None:
            self.warned = what
            warnings.warn(f"lzlite: Redis at {self.url}: {what}; training goes on, the web UI gets no updates "
                          f"until it answers (retrying with backoff)", RuntimeWarning, stacklevel=2)

    def _connect(self) -> bool:
        try:
            import redis  # optional: `pip install lzlite[redis]`
        except ImportError:
            self._warn("the redis package is not installed (pip install 'lzlite[redis]')")
            return False
        try:
            client = redis.Redis.from_url(self.url, socket_connect_timeout=1.0, socket_timeout=2.0)
            client.ping()
        except Exception as e:  # any failure to reach the server: warn once, retry later
            self._warn(f"cannot connect ({type(e).__name__}: {str(e)[:120]})")
            return False
        self._client = client
        return True

    def _run(self) -> None:
        backoff, retry_at = BACKOFF_S[0], 0.0
        last_status_at, status_sent_at = 0.0, 0.0
        while True:
            stopping = self._stop.is_set()
            items = self._drain(timeout=0.0 if stopping else 0.1)
            now = time.monotonic()
            if self._client is None:
                if now >= retry_at and self._connect():
                    backoff = BACKOFF_S[0]
                else:
                    if now >= retry_at:
                        retry_at, backoff = now + backoff, min(backoff * 2, BACKOFF_S[1])
                    self.dropped += len(items)
                    self.connected = False
                    if stopping:
                        return
                    continue
            with self._lock:
                status = self._status
                due = status is not None and (
                    (self._status_dirty and now - status_sent_at >= MIN_STATUS_GAP_S)
                    or now - last_status_at >= HEARTBEAT_S[self.role] or stopping)
                if due:
                    self._status_dirty = False
            try:
                self._send(items, status if due else None)
                self.connected = True
                self.sent += len(items)
                if due:
                    last_status_at = status_sent_at = now
            except Exception as e:  # Redis went away mid-run: drop this batch, reconnect with backoff
                self._warn(f"lost the connection ({type(e).__name__}: {str(e)[:120]})")
                self.dropped += len(items)
                self.connected = False
                self._client = None
                retry_at, backoff = now + backoff, min(backoff * 2, BACKOFF_S[1])
                with self._lock:
                    self._status_dirty = self._status_dirty or due
            if stopping and self._queue.empty():
                return

    def _drain(self, timeout: float, limit: int = 1000) -> list:
        items = []
        try:
            items.append(self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait())
            while len(items) < limit:
                items.append(self._queue.get_nowait())
        except queue.Empty:
            pass
        return items

    def _send(self, items: list, status: Optional[Dict[str, Any]]) -> None:
        pipe = self._client.pipeline(transaction=False)
        now = time.time()
        curve_key, games_key = run_key(self.run, "curve"), run_key(self.run, "games")
        for kind, payload in items:
            if kind == "curve":
                tag, step, value, t = payload
                pipe.xadd(curve_key, {"tag": tag, "step": step, "value": repr(value), "t": f"{t:.3f}"},
                          maxlen=CURVE_MAXLEN, approximate=True)
            else:
                pipe.xadd(games_key, {"event": payload.to_json()}, maxlen=GAMES_MAXLEN, approximate=True)
        if status is not None:
            body = dict(status, updated_at=now)
            if self.role == "learner":
                pipe.set(run_key(self.run, "status"), json.dumps(body), ex=STATUS_TTL_S)
                pipe.zadd(RUNS_KEY, {self.run: now})
                pipe.zremrangebyscore(RUNS_KEY, "-inf", now - KEEP_S)
                pipe.set(run_key(self.run, "info"), self.info, ex=KEEP_S)
                for what in ("curve", "games"):
                    pipe.expire(run_key(self.run, what), KEEP_S)
            else:
                pipe.set(run_key(self.run, f"actor:{self.actor_id}"), json.dumps(body), ex=ACTOR_TTL_S)
        if items or status is not None:
            pipe.execute()
