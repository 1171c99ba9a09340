"""The web bridge over a real Redis and a real WebSocket client: the run list, a subscription's snapshot and live
frames, error frames that keep the connection, a whole game against the agent, and the served UI."""
import json
import os
import socket
import sys
import threading
import time
import urllib.request

import pytest

pytest.importorskip("starlette", reason="the web bridge's extra is not installed (pip install -e '.[webui]')")
pytest.importorskip("uvicorn", reason="the web bridge's extra is not installed (pip install -e '.[webui]')")
pytest.importorskip("websockets", reason="the websockets package is not installed (pip install -e '.[test]')")

import uvicorn  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from lzlite.entry import train_alphazero  # noqa: E402
from lzlite.telemetry.events import MoveEvent  # noqa: E402
from lzlite.telemetry.redis_status import RUNS_KEY, RedisPublisher, run_key  # noqa: E402
from lzlite.webui.app import BUILD_COMMAND, MAX_FRAME_CHARS, create_app  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "entry"))
from tiny_configs import tiny_config  # noqa: E402

EVAL_SIMS = 16


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bridge:
    """``create_app`` served by uvicorn on a free port, in a thread."""

    def __init__(self, redis_url, ui_dir):
        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(create_app(redis_url, ui_dir), host="127.0.0.1", port=self.port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the bridge did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)

    def ws(self):
        return connect(f"ws://127.0.0.1:{self.port}/ws", open_timeout=10)


def _until(ws, pred, timeout=10.0):
    """Frames until one satisfies ``pred`` (returned with the ones before it)."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"no matching frame in {timeout} s; got {[f.get('type') for f in seen]}"
        frame = json.loads(ws.recv(timeout=left))
        seen.append(frame)
        if pred(frame):
            return frame, seen


@pytest.fixture(scope="module")
def live(redis_shared, tmp_path_factory):
    """A tiny AlphaZero run that published to Redis; the bridge serving it (and a built-UI folder)."""
    redis_shared.client().flushdb()
    run_dir = tmp_path_factory.mktemp("bridge") / "run"
    cfg = tiny_config("alphazero", eval_num_simulations=EVAL_SIMS)
    cfg[0]["logger"] = dict(redis_url=redis_shared.url, spectate_games=2)
    train_alphazero(cfg, seed=0, max_env_step=120, run_dir=str(run_dir), progress=False)
    ui_dir = tmp_path_factory.mktemp("dist")
    (ui_dir / "index.html").write_text("<!doctype html><title>lzlite test UI</title>")
    with Bridge(redis_shared.url, str(ui_dir)) as bridge:
        yield dict(redis=redis_shared, run=redis_shared.client().zrange(RUNS_KEY, 0, -1)[0], run_dir=str(run_dir),
                   bridge=bridge)


def test_runs_lists_the_run_with_its_status(live):
    with live["bridge"].ws() as ws:
        ws.send(json.dumps({"op": "runs"}))
        frame, _ = _until(ws, lambda f: f["type"] == "runs")
    (status,) = frame["runs"]
    assert status["run"] == live["run"] and status["algorithm"] == "alphazero" and status["game"] == "tictactoe"
    assert status["run_dir"] == live["run_dir"] and status["env_steps"] >= 120


def test_subscribe_sends_status_history_recent_games_then_live_frames(live):
    r, run = live["redis"].client(), live["run"]
    history = [f for _, f in r.xrange(run_key(run, "curve"))]
    with live["bridge"].ws() as ws:
        ws.send(json.dumps({"op": "subscribe", "run": run}))
        _, seen = _until(ws, lambda f: f["type"] == "move")
        assert seen[0]["type"] == "status" and seen[0]["status"]["run"] == run
        points = [p for f in seen if f["type"] == "curve" for p in f["points"]]
        assert [(p["tag"], p["step"]) for p in points] == [(f["tag"], int(f["step"])) for f in history]
        # the live part: what a run writes now arrives, once
        pub = RedisPublisher(live["redis"].url, run)
        pub.curve("learn/loss", 10**6, 0.25)
        event = MoveEvent("999", "tictactoe", 0, 3, 3, [-1] * 9, 0, 4, list(range(9)), [1] * 9, [0.0] * 9,
                          [1 / 9] * 9, 0.0, False, -1)
        pub.move(event)
        pub.close()
        frame, _ = _until(ws, lambda f: f["type"] == "curve" and f["points"] and f["points"][-1]["step"] == 10**6)
        assert frame["points"][-1] == dict(frame["points"][-1], tag="learn/loss", value=0.25)
        frame, _ = _until(ws, lambda f: f["type"] == "move" and f["event"]["game_id"] == "999")
        assert frame["run"] == run and frame["event"]["action"] == 4
        ws.send(json.dumps({"op": "unsubscribe", "run": run}))
        time.sleep(0.3)
        pub = RedisPublisher(live["redis"].url, run)
        pub.curve("learn/loss", 10**6 + 1, 0.5)
        pub.close()
        ws.send(json.dumps({"op": "runs"}))
        _, seen = _until(ws, lambda f: f["type"] == "runs", timeout=3.0)
        assert not [f for f in seen if f["type"] == "curve"]


@pytest.mark.parametrize("text, op, message", [
    ("not json", None, "not JSON"),
    ("[1, 2]", None, "JSON object"),
    ('{"op": "drop_all"}', "drop_all", "unknown op"),
    ('{"op": 5}', None, "unknown op"),
    ('{"op": "subscribe"}', "subscribe", "'run' must be a run id"),
    ('{"op": "subscribe", "run": "lzlite:runs"}', "subscribe", "unknown run"),
    ('{"op": "unsubscribe", "run": "nope"}', "unsubscribe", "not subscribed"),
    ('{"op": "play_new", "run": "nope", "agent_side": 0}', "play_new", "unknown run"),
    ('{"op": "play_new", "agent_side": 2}', "play_new", "'agent_side' must be 0"),
    ('{"op": "play_move", "game": "abc", "action": 1}', "play_move", "unknown game"),
    ("x" * (MAX_FRAME_CHARS + 1), None, "at most"),
])
def test_a_bad_frame_gets_an_error_frame_and_the_connection_stays(live, text, op, message):
    with live["bridge"].ws() as ws:
        ws.send(text)
        frame, _ = _until(ws, lambda f: f["type"] == "error")
        assert frame["op"] == op and message in frame["message"]
        ws.send(b"\x00binary")
        frame, _ = _until(ws, lambda f: f["type"] == "error")
        assert "not binary" in frame["message"]
        ws.send(json.dumps({"op": "runs"}))
        _until(ws, lambda f: f["type"] == "runs")


def test_no_key_outside_the_runs_list_is_reachable(live):
    r = live["redis"].client()
    r.set(run_key("secret", "status"), json.dumps(dict(run="secret")))
    with live["bridge"].ws() as ws:
        ws.send(json.dumps({"op": "subscribe", "run": "secret"}))
        frame, _ = _until(ws, lambda f: f["type"] in ("error", "status"))
    assert frame["type"] == "error" and "unknown run" in frame["message"]


def test_a_whole_game_against_the_agent(live):
    with live["bridge"].ws() as ws:
        ws.send(json.dumps({"op": "play_new", "run": live["run"], "agent_side": 0}))
        state, _ = _until(ws, lambda f: f["type"] in ("play", "error"), timeout=60)
        assert state["type"] == "play", state
        assert state["agent_side"] == 0 and state["game_name"] == "tictactoe" and state["rows"] == state["cols"] == 3
        first = state["last_move"]
        assert state["cells"][first] == 0 and state["cells"].count(-1) == 8 and state["to_play"] == 1
        assert sum(state["analysis"]["visits"]) == EVAL_SIMS and len(state["analysis"]["legal"]) == 9
        game = state["game"]
        ws.send(json.dumps({"op": "play_move", "game": game, "action": first}))  # taken: answered, game unchanged
        frame, _ = _until(ws, lambda f: f["type"] == "error")
        assert frame["op"] == "play_move" and "not a legal move" in frame["message"]
        ws.send(json.dumps({"op": "play_move", "game": game, "action": True}))
        frame, _ = _until(ws, lambda f: f["type"] == "error")
        assert "must be an int" in frame["message"]
        moves = 1
        while not state["done"]:
            action = state["legal"][0]
            ws.send(json.dumps({"op": "play_move", "game": game, "action": action}))
            state, _ = _until(ws, lambda f: f["type"] in ("play", "error"), timeout=60)
            assert state["type"] == "play", state
            assert state["cells"][action] == 1
            moves += 1 if state["done"] and state["last_move"] == action else 2
        assert state["winner"] in (-1, 0, 1) and state["legal"] == []
        assert 5 <= moves <= 9 and state["cells"].count(-1) == 9 - moves
        ws.send(json.dumps({"op": "play_move", "game": game, "action": 0}))
        frame, _ = _until(ws, lambda f: f["type"] == "error")
        assert "over" in frame["message"] or "not a legal move" in frame["message"]


def test_the_built_ui_is_served_and_a_missing_one_says_how_to_build_it(live, tmp_path):
    page = urllib.request.urlopen(f"http://127.0.0.1:{live['bridge'].port}/", timeout=10).read().decode()
    assert "lzlite test UI" in page
    with Bridge(live["redis"].url, str(tmp_path / "absent")) as bare:
        page = urllib.request.urlopen(f"http://127.0.0.1:{bare.port}/", timeout=10).read().decode()
    assert BUILD_COMMAND in page and "npm ci" in page
