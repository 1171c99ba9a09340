"""The bridge: an ASGI app (Starlette) serving the built web UI and a WebSocket API fed from Redis.

The API (docs/architecture.md, "WebSocket API"; docs/webui.md): ``ws://HOST:PORT/ws``, JSON text frames. A client
lists runs, subscribes to a run (its status, its curve's history then each new point, its live games), and plays
games against a run's current checkpoint. Read-only except play: the only Redis keys read are ``lzlite:runs`` and
the keys of runs that are members of it, and nothing is ever written to Redis.

One reader per subscribed run (``RunFeed``) follows its streams and status and fans frames, encoded once, out to
every subscriber's bounded queue; a client too slow to take them loses frames, never the bridge's time.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
from typing import Any, Dict, List, Optional, Set, Tuple

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from lzlite.entry.agent import load_agent
from lzlite.telemetry.redis_status import RUNS_KEY, run_key
from lzlite.webui.play import AgentCache, PlayError, PlayGame, play_move, play_new

__all__ = ["create_app", "default_ui_dir", "BUILD_COMMAND", "MAX_FRAME_CHARS"]

BUILD_COMMAND = "python -m lzlite.webui --build"
MAX_FRAME_CHARS = 4096  # a client frame is a small JSON object; longer ones are refused
MAX_RUNS_LISTED = 100
MAX_PLAY_GAMES = 8  # games one connection may hold
OUT_QUEUE = 512  # frames waiting for one client; more are dropped
HISTORY_CHUNK = 2000  # curve points per history frame
RECENT_EVENTS = 30  # move events a new subscriber gets at once (the boards of the games in progress)
STATUS_POLL_S = 1.0


def default_ui_dir() -> str:
    """``webui/dist`` of the source tree this lzlite runs from (the UI is built there; see docs/webui.md)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "webui", "dist")


def _missing_ui_page(ui_dir: str) -> HTMLResponse:
    return HTMLResponse(
        "<!doctype html><title>lzlite web UI</title><body style='font-family:sans-serif'>"
        f"<p>The lzlite web UI is not built ({ui_dir} is missing). Build it and serve it with one command:</p>"
        f"<pre>{BUILD_COMMAND}</pre><p>(it runs <code>npm ci &amp;&amp; npm run build</code> in webui/; Node 20.19+)."
        " The WebSocket API is up at <code>/ws</code>.</p></body>", status_code=200)


def _stream_id(entry_id: str) -> Tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _point(fields: Dict[str, str]) -> Optional[Dict[str, Any]]:
    """A curve entry as a frame's point; None for a malformed or non-finite one (JSON has no NaN)."""
    try:
        point = dict(tag=str(fields["tag"]), step=int(fields["step"]), value=float(fields["value"]),
                     t=float(fields.get("t", 0.0)))
    except (KeyError, ValueError):
        return None
    return point if math.isfinite(point["value"]) else None


def _event(fields: Dict[str, str]) -> Optional[Dict[str, Any]]:
    try:
        event = json.loads(fields["event"])
    except (KeyError, ValueError):
        return None
    return event if isinstance(event, dict) else None


def _encode(frame: Dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"), allow_nan=False)


class Subscriber:
    """One client's subscription to one run. Until its snapshot (status, curve history, recent games) is sent, what
    the feed fans out waits in ``pending``; then only what the snapshot lacks follows it, in order."""

    def __init__(self, conn: "Connection", run: str) -> None:
        self.conn, self.run = conn, run
        self.pending: Optional[List[Tuple[str, str, List[Tuple[Tuple[int, int], Any]]]]] = []

    def deliver(self, kind: str, text: str, items: List[Tuple[Tuple[int, int], Any]]) -> None:
        """A fanned-out frame: ``kind`` 'curve' / 'move' / 'status', its ``text``, its stream entries [(id, x)]."""
        if self.pending is not None:
            self.pending.append((kind, text, items))
        else:
            self.conn.send_nowait(text)

    def caught_up(self, seen: Dict[str, Optional[Tuple[int, int]]]) -> None:
        """The snapshot is sent, holding stream entries up to ``seen[kind]``: send what waited and is newer."""
        pending, self.pending = self.pending or [], None
        for kind, text, items in pending:
            last = seen.get(kind)
            newer = [x for entry_id, x in items if last is None or entry_id > last]
            if not items or len(newer) == len(items):
                self.conn.send_nowait(text)
            elif newer and kind == "curve":
                self.conn.send_nowait(_encode(dict(type="curve", run=self.run, points=newer)))
            elif newer:
                for event in newer:
                    self.conn.send_nowait(_encode(dict(type="move", run=self.run, event=event)))


class RunFeed:
    """Follows one run's curve and games streams and its status; fans frames out to its subscribers."""

    def __init__(self, hub: "Hub", run: str) -> None:
        self.hub, self.run = hub, run
        self.subscribers: Set[Subscriber] = set()
        self.task: Optional[asyncio.Task] = None
        self.status_text: Optional[str] = None
        self.ready = asyncio.Event()  # set once the feed knows where the streams end

    def start(self) -> None:
        if self.task is None or self.task.done():
            self.ready = asyncio.Event()
            self.task = asyncio.create_task(self.follow())

    async def follow(self) -> None:
        r = self.hub.redis
        curve, status_key = run_key(self.run, "curve"), run_key(self.run, "status")
        cursors: Dict[str, str] = {}
        while not self.ready.is_set():  # follow from the streams' current ends, so a snapshot read after has no gap
            try:
                for key in (curve, run_key(self.run, "games")):
                    last = await r.xrevrange(key, count=1)
                    cursors[key] = last[0][0] if last else "0-0"
                self.ready.set()
            except asyncio.CancelledError:
                raise
            except Exception:  # Redis gone: try again
                await asyncio.sleep(1.0)
        last_poll = 0.0
        loop = asyncio.get_running_loop()
        while self.subscribers:
            try:
                reply = await r.xread(cursors, count=1000, block=int(STATUS_POLL_S * 1000))
                for stream, entries in reply or []:
                    if not entries:
                        continue
                    cursors[stream] = entries[-1][0]
                    if stream == curve:
                        points = [(_stream_id(e_id), p) for e_id, p in ((e_id, _point(f)) for e_id, f in entries)
                                  if p is not None]
                        if points:
                            self._fan("curve", dict(type="curve", run=self.run, points=[p for _, p in points]), points)
                        continue
                    for entry_id, fields in entries:
                        event = _event(fields)
                        if event is not None:
                            self._fan("move", dict(type="move", run=self.run, event=event),
                                      [(_stream_id(entry_id), event)])
                if loop.time() - last_poll >= STATUS_POLL_S:
                    last_poll = loop.time()
                    text = await r.get(status_key)
                    if text is not None and text != self.status_text:
                        self.status_text = text
                        frame = _status_frame(self.run, text)
                        if frame is not None:
                            for sub in list(self.subscribers):
                                sub.deliver("status", frame, [])
            except asyncio.CancelledError:
                raise
            except Exception:  # Redis gone: the feed waits and tries again; clients keep their connections
                await asyncio.sleep(1.0)

    def _fan(self, kind: str, frame: Dict[str, Any], items: List[Tuple[Tuple[int, int], Any]]) -> None:
        text = _encode(frame)  # once, for every subscriber
        for sub in list(self.subscribers):
            sub.deliver(kind, text, items)


def _json_object(text: Optional[str]) -> Optional[Dict[str, Any]]:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _status_frame(run: str, text: str) -> Optional[str]:
    status = _json_object(text)
    return None if status is None else _encode(dict(type="status", run=run, status=status))


class Hub:
    """What every connection shares: the Redis client, the run feeds and the play agents."""

    def __init__(self, redis_url: str, agents: AgentCache) -> None:
        self.redis_url = redis_url
        self.redis = None
        self.feeds: Dict[str, RunFeed] = {}
        self.agents = agents

    async def start(self) -> None:
        import redis.asyncio  # the bridge's dependency (`pip install lzlite[webui]`)

        self.redis = redis.asyncio.Redis.from_url(self.redis_url, decode_responses=True, socket_connect_timeout=2.0)

    async def stop(self) -> None:
        for feed in self.feeds.values():
            if feed.task is not None:
                feed.task.cancel()
        if self.redis is not None:
            await self.redis.aclose()

    async def known_run(self, run: Any) -> bool:
        """Whether ``run`` is a run id listed in ``lzlite:runs`` (the one gate to a run's keys)."""
        return isinstance(run, str) and 0 < len(run) <= 256 and await self.redis.zscore(RUNS_KEY, run) is not None

    async def runs(self) -> List[Dict[str, Any]]:
        listed = await self.redis.zrevrange(RUNS_KEY, 0, MAX_RUNS_LISTED - 1, withscores=True)
        if not listed:
            return []
        texts = await self.redis.mget([run_key(run, what) for run, _ in listed for what in ("status", "info")])
        out = []
        for k, (run, score) in enumerate(listed):
            status = _json_object(texts[2 * k])
            if status is None:  # its status expired: the run has ended (or is stuck); what it was, and when last seen
                status = dict(_json_object(texts[2 * k + 1]) or {}, run=run, updated_at=score)
            out.append(status)
        return out

    async def run_dir(self, run: str) -> str:
        """The directory of a listed run (its ``info``), for the play endpoint."""
        info = _json_object(await self.redis.get(run_key(run, "info")))
        if info is None or not isinstance(info.get("run_dir"), str):
            raise PlayError(f"run {run!r} did not publish its run directory, so its checkpoint is unknown")
        return info["run_dir"]

    async def subscribe(self, sub: Subscriber) -> None:
        """Join ``sub`` to its run's feed, then send it the status, the curve's history and the recent games."""
        feed = self.feeds.get(sub.run)
        if feed is None:
            feed = self.feeds[sub.run] = RunFeed(self, sub.run)
        feed.subscribers.add(sub)  # first: what arrives while the snapshot is read waits in sub.pending
        r = self.redis
        seen: Dict[str, Optional[Tuple[int, int]]] = dict(curve=None, move=None)
        try:
            feed.start()
            await asyncio.wait_for(feed.ready.wait(), timeout=5.0)
            text = await r.get(run_key(sub.run, "status"))
            if text is not None:
                frame = _status_frame(sub.run, text)
                if frame is not None:
                    sub.conn.send_nowait(frame)
            history = await r.xrange(run_key(sub.run, "curve"))
            if history:
                seen["curve"] = _stream_id(history[-1][0])
            points = [p for p in (_point(f) for _, f in history) if p is not None]
            for i in range(0, max(len(points), 1), HISTORY_CHUNK):  # (an empty history is one empty frame)
                sub.conn.send_nowait(_encode(dict(type="curve", run=sub.run, points=points[i:i + HISTORY_CHUNK])))
            recent = list(reversed(await r.xrevrange(run_key(sub.run, "games"), count=RECENT_EVENTS)))
            if recent:
                seen["move"] = _stream_id(recent[-1][0])
            for _, fields in recent:
                event = _event(fields)
                if event is not None:
                    sub.conn.send_nowait(_encode(dict(type="move", run=sub.run, event=event)))
        finally:
            sub.caught_up(seen)

    def unsubscribe(self, sub: Subscriber) -> None:
        feed = self.feeds.get(sub.run)
        if feed is None:
            return
        feed.subscribers.discard(sub)
        if not feed.subscribers:
            if feed.task is not None:
                feed.task.cancel()
            del self.feeds[sub.run]


class Connection:
    """One WebSocket client: its subscriptions, its play games, and a sender task draining its frame queue."""

    def __init__(self, ws: WebSocket, hub: Hub) -> None:
        self.ws, self.hub = ws, hub
        self.queue: "asyncio.Queue[str]" = asyncio.Queue(maxsize=OUT_QUEUE)
        self.subs: Dict[str, Subscriber] = {}
        self.games: Dict[str, PlayGame] = {}
        self.dropped = 0

    def send_nowait(self, text: str) -> None:
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.dropped += 1

    def error(self, message: str, op: Optional[str] = None) -> None:
        self.send_nowait(_encode(dict(type="error", message=message, op=op)))

    async def sender(self) -> None:
        while True:
            await self.ws.send_text(await self.queue.get())

    async def handle(self, text: str) -> None:
        """Answer one client frame; a bad one gets an error frame and the connection stays."""
        if len(text) > MAX_FRAME_CHARS:
            return self.error(f"frame of {len(text)} characters; at most {MAX_FRAME_CHARS}")
        try:
            msg = json.loads(text)
        except ValueError:
            return self.error(f"frame is not JSON: {text[:60]!r}")
        if not isinstance(msg, dict):
            return self.error("frame must be a JSON object with an 'op'")
        op = msg.get("op")
        handler = _OPS.get(op) if isinstance(op, str) else None
        if handler is None:
            return self.error(f"unknown op {op!r}; ops are {', '.join(sorted(_OPS))}", op if isinstance(op, str) else None)
        try:
            await handler(self, msg)
        except PlayError as e:
            self.error(str(e), op)
        except (ConnectionError, OSError, TimeoutError) as e:
            self.error(f"Redis is not answering ({type(e).__name__}); try again", op)
        except Exception as e:  # redis-py's own errors, or a bug: the client hears of it, the connection stays
            if type(e).__module__.startswith("redis"):
                self.error(f"Redis is not answering ({type(e).__name__}); try again", op)
            else:
                self.error(f"the bridge failed on this request ({type(e).__name__}: {str(e)[:120]})", op)

    async def op_runs(self, msg: Dict[str, Any]) -> None:
        self.send_nowait(_encode(dict(type="runs", runs=await self.hub.runs())))

    async def _run_field(self, msg: Dict[str, Any]) -> Optional[str]:
        run = msg.get("run")
        if not isinstance(run, str):
            self.error("'run' must be a run id (a string from the runs list)", msg["op"])
            return None
        if not await self.hub.known_run(run):
            self.error(f"unknown run {run[:80]!r}", msg["op"])
            return None
        return run

    async def op_subscribe(self, msg: Dict[str, Any]) -> None:
        run = await self._run_field(msg)
        if run is None or run in self.subs:
            return
        sub = self.subs[run] = Subscriber(self, run)
        try:
            await self.hub.subscribe(sub)
        except Exception:
            self.hub.unsubscribe(self.subs.pop(run))
            raise

    async def op_unsubscribe(self, msg: Dict[str, Any]) -> None:
        run = msg.get("run")
        if not isinstance(run, str) or run not in self.subs:
            return self.error(f"not subscribed to {str(run)[:80]!r}", "unsubscribe")
        self.hub.unsubscribe(self.subs.pop(run))

    async def op_play_new(self, msg: Dict[str, Any]) -> None:
        side = msg.get("agent_side")
        if side not in (0, 1) or isinstance(side, bool):
            return self.error("'agent_side' must be 0 (the agent moves first) or 1", "play_new")
        run = await self._run_field(msg)
        if run is None:
            return
        if len(self.games) >= MAX_PLAY_GAMES:  # the oldest game goes
            self.games.pop(next(iter(self.games)))
        run_dir = await self.hub.run_dir(run)
        game, frame = await asyncio.to_thread(play_new, self.hub.agents, run, run_dir, side)
        self.games[game.game] = game
        self.send_nowait(_encode(frame))

    async def op_play_move(self, msg: Dict[str, Any]) -> None:
        game, action = msg.get("game"), msg.get("action")
        if not isinstance(game, str) or game not in self.games:
            return self.error(f"unknown game {str(game)[:40]!r}; start one with play_new", "play_move")
        if isinstance(action, bool) or not isinstance(action, int):
            return self.error(f"'action' must be an int action index, got {json.dumps(action)[:40]}", "play_move")
        frame = await asyncio.to_thread(play_move, self.games[game], action)
        self.send_nowait(_encode(frame))

    def close(self) -> None:
        for sub in self.subs.values():
            self.hub.unsubscribe(sub)
        self.subs.clear()


_OPS = {"runs": Connection.op_runs, "subscribe": Connection.op_subscribe, "unsubscribe": Connection.op_unsubscribe,
        "play_new": Connection.op_play_new, "play_move": Connection.op_play_move}


def create_app(redis_url: str = "redis://127.0.0.1:6379/0", ui_dir: Optional[str] = None,
               agents: Optional[AgentCache] = None) -> Starlette:
    """The bridge's ASGI app.

    Args:
        redis_url: the Redis that training runs publish to (``logger.redis_url``).
        ui_dir: the built UI (default ``webui/dist`` of the source tree); absent: ``/`` says how to build it.
        agents: the play endpoint's agent cache (default: ``lzlite.load_agent`` on each run's directory).
    """
    hub = Hub(redis_url, agents or AgentCache(load_agent))
    ui_dir = ui_dir or default_ui_dir()

    async def websocket(ws: WebSocket) -> None:
        await ws.accept()
        conn = Connection(ws, hub)
        sender = asyncio.create_task(conn.sender())
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:
                    conn.error("frames must be JSON text, not binary")
                    continue
                await conn.handle(text)
        except WebSocketDisconnect:
            pass
        finally:
            conn.close()
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        await hub.start()
        yield
        await hub.stop()

    routes: List[Any] = [WebSocketRoute("/ws", websocket)]
    if os.path.isfile(os.path.join(ui_dir, "index.html")):
        routes.append(Mount("/", StaticFiles(directory=ui_dir, html=True)))
    else:
        routes.append(Route("/", lambda request: _missing_ui_page(ui_dir)))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.hub = hub
    return app
