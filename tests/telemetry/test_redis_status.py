"""Redis telemetry against a real redis-server: a tiny run's status, curve and spectated games; actor keys; Redis
absent, or dying mid-run and coming back, costs one warning and no training."""
import json
import os
import sys
import time
import warnings

import numpy as np
import pytest
import torch

from lzlite.entry import train_alphazero
from lzlite.telemetry.events import MoveEvent
from lzlite.telemetry.logger import RunLogger
from lzlite.telemetry.redis_status import RUNS_KEY, RedisPublisher, run_key

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "entry"))
from tiny_configs import tiny_config  # noqa: E402

import zoo  # noqa: E402


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(tmp_path, name, logger=None, max_env_step=120):
    cfg = tiny_config("alphazero")
    if logger is not None:
        cfg[0]["logger"] = logger
    policy = train_alphazero(cfg, seed=0, max_env_step=max_env_step, run_dir=str(tmp_path / name), progress=False)
    return policy


def _wait(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def test_a_tiny_run_publishes_its_status_curve_and_games(redis_server, tmp_path):
    _run(tmp_path, "live", dict(redis_url=redis_server.url, spectate_games=2))
    r = redis_server.client()
    runs = r.zrange(RUNS_KEY, 0, -1)
    assert len(runs) == 1 and runs[0].startswith("live-")
    run = runs[0]
    status = json.loads(r.get(run_key(run, "status")))
    assert 0 < r.ttl(run_key(run, "status")) <= 60
    assert status["run"] == run and status["algorithm"] == "alphazero" and status["game"] == "tictactoe"
    assert status["role"] == "learner" and status["run_dir"] == str(tmp_path / "live")
    assert status["env_steps"] >= 120 and status["train_iter"] > 0 and status["buffer_size"] > 0
    assert set(status["losses"]) >= {"loss", "policy_loss", "value_loss"} and "random" in status["win_rates"]
    assert status["env_steps_per_s"] > 0 and abs(status["updated_at"] - time.time()) < 60

    points = [f for _, f in r.xrange(run_key(run, "curve"))]
    losses = [(int(p["step"]), float(p["value"])) for p in points if p["tag"] == "learn/loss"]
    assert len(losses) >= 2 and [s for s, _ in losses] == sorted(s for s, _ in losses)
    assert {"collect/env_steps", "eval/random/win"} <= {p["tag"] for p in points}

    events = [json.loads(f["event"]) for _, f in r.xrange(run_key(run, "games"))]
    assert events and {e["game_id"] for e in events} <= {str(k) for k in range(0, 200)}
    game = zoo.make_batch_game("tictactoe")
    by_game = {}
    for e in events:
        assert set(e) == {f.name for f in MoveEvent.__dataclass_fields__.values()}
        assert len(e["visits"]) == len(e["q"]) == len(e["prior"]) == len(e["legal"]) and sum(e["visits"]) == 8
        by_game.setdefault(e["game_id"], []).append(e)
    # each collect reports its first two games; every reported game is whole and replays to its boards
    assert len(by_game) % 2 == 0
    for moves in by_game.values():
        state = game.new_states(1)
        for ply, e in enumerate(moves):
            assert e["ply"] == ply and e["cells"] == _cells(game, state) and e["action"] in e["legal"]
            game.step(state, np.array([e["action"]], dtype=np.int32))
        assert moves[-1]["done"] and not any(e["done"] for e in moves[:-1])
        assert moves[-1]["winner"] == int(game.winner(state)[0])


def _cells(game, state):
    from lzlite.entry.agent import board_cells

    return board_cells(game, state)[0].tolist()


def test_an_actor_writes_its_own_key_and_nothing_else(redis_server, tmp_path):
    cfg = dict(exp_name="x", create=dict(policy=dict(type="alphazero"), env=dict(type="tictactoe")),
               logger=dict(redis_url=redis_server.url, spectate_games=1))
    log = RunLogger(str(tmp_path / "run"), progress=False, cfg=cfg, role="actor", actor_id=3, run_id="run-1")
    log.status(env_steps=42, weights_version=7)
    log.move_hook(MoveEvent("5", "tictactoe", 0, 3, 3, [-1] * 9, 0, 4, list(range(9)), [1] * 9, [0.0] * 9,
                            [1 / 9] * 9, 0.0, False, -1))
    log.close()
    r = redis_server.client()
    actor = json.loads(r.get("lzlite:run:run-1:actor:3"))
    assert actor["actor"] == 3 and actor["env_steps"] == 42 and actor["weights_version"] == 7
    assert 0 < r.ttl("lzlite:run:run-1:actor:3") <= 30
    assert json.loads(r.xrange("lzlite:run:run-1:games")[0][1]["event"])["game_id"] == "actor3-5"
    assert r.get("lzlite:run:run-1:status") is None and not os.path.exists(tmp_path / "run" / "tb")


def test_redis_absent_is_one_warning_and_nothing_waits():
    url = f"redis://127.0.0.1:{_free_port()}/0"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pub = RedisPublisher(url, "r-1")
        t0 = time.perf_counter()
        for k in range(20000):
            pub.curve("learn/loss", k, 1.0)
        per_call = (time.perf_counter() - t0) / 20000
        pub.set_status(dict(env_steps=1))
        assert _wait(lambda: pub.warned is not None)
        t0 = time.perf_counter()
        pub.close()
        assert time.perf_counter() - t0 < 3.5
    assert per_call < 100e-6  # a queue put, whatever Redis does (a connection attempt alone takes milliseconds)
    assert pub.dropped > 0 and pub.sent == 0 and not pub.connected
    ours = [w for w in caught if "Redis at" in str(w.message)]
    assert len(ours) == 1 and "cannot connect" in str(ours[0].message)


def test_redis_dying_mid_run_and_coming_back(own_redis_server):
    server = own_redis_server.start()
    pub = RedisPublisher(server.url, "r-2")
    pub.curve("a", 1, 1.0)
    r = server.client()
    assert _wait(lambda: r.xlen(run_key("r-2", "curve")) == 1)
    server.stop()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        for k in range(50):
            pub.curve("a", 2, 2.0)
            time.sleep(0.01)
        assert _wait(lambda: pub.warned is not None and not pub.connected)
        assert "lost the connection" in pub.warned or "cannot connect" in pub.warned
        server.start()
        pub.curve("b", 3, 3.0)
        assert _wait(lambda: pub.connected, timeout=15.0)  # backoff: 0.5, 1, 2 ... s
        for _ in range(3):
            pub.curve("b", 3, 3.0)
        r = server.client()
        assert _wait(lambda: any(f["tag"] == "b" for _, f in r.xrange(run_key("r-2", "curve"))))
        pub.close()
    assert pub.dropped > 0


def test_training_with_redis_down_trains_the_same_weights(tmp_path):
    url = f"redis://127.0.0.1:{_free_port()}/0"
    plain = _run(tmp_path, "plain", max_env_step=60)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        down = _run(tmp_path, "down", dict(redis_url=url), max_env_step=60)
    assert len([w for w in caught if "Redis at" in str(w.message)]) == 1
    for (name, a), (_, b) in zip(plain.model.state_dict().items(), down.model.state_dict().items()):
        assert torch.equal(a, b), name
