"""End to end in a real browser: a short tic-tac-toe training run writes its status, curves and spectated games
to a real Redis; the bridge (`python -m lzlite.webui`) serves the built UI and its WebSocket API; headless
Chromium (Debian's, driven by playwright-core from webui/e2e/run.mjs) opens the run list, watches a curve gain
points and a live board change, plays one full game of tic-tac-toe against the run's agent, and checks the run
and play pages at phone width (375 px).

It also measures how long a self-play decision takes from Redis to the page: the stream entry's id is Redis's
clock when the writer added it, and the page notes the wall clock when the decision first shows on a board
(same machine, same clock).

    python -m pytest -q -s tests/webui/test_e2e.py                      # prints the latency figures
    LZLITE_WEBUI_SHOTS=docs/img python -m pytest -q tests/webui/test_e2e.py   # refreshes docs/img/webui_*.png

Skipped, with the reason, without redis-server, node / npm or chromium (.ci/run installs all three).
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from node_tools import WEBUI, ensure_node_modules, node_env, node_missing, npm

ROOT = WEBUI.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _skip_reason():
    if node_missing():
        return node_missing()
    if CHROMIUM is None:
        return "chromium is not installed (apt-get install chromium; .ci/run installs it)"
    if importlib.util.find_spec("lzlite.webui") is None:
        return "the bridge (lzlite.webui) is not in this tree"
    for pkg in ("starlette", "uvicorn", "redis"):
        if importlib.util.find_spec(pkg) is None:
            return f"the web bridge's extra is not installed ({pkg} is missing: pip install -e '.[webui]')"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

# A run that keeps collecting until the test stops it: small searches and games, a checkpoint every 20 learner
# steps (the play page loads the run's latest), an evaluation every 100 (win-rate points), two spectated games
# per collect.
CONFIG = """
import copy
from zoo.tictactoe.alphazero_config import create_config, main_config

main_config = copy.deepcopy(main_config)
main_config["exp_name"] = "e2e_tictactoe"
main_config["policy"].update(
    num_simulations=8, collector_env_num=4, n_episode=4, batch_size=16, replay_buffer_size=2000,
    eval_freq=100, eval_episodes=2, eval_bots=["rule"], eval_optimal_move_rate=False, eval_never_lose_check=False,
    keep_eval_ckpts=False, save_ckpt_freq=20, random_opening_plies=0,
)
main_config["logger"] = dict(redis_url={url!r}, spectate_games=2)
"""

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what: str, ok, timeout: float, procs=()):
    """Polls ``ok()`` until it returns something truthy; fails naming ``what`` (and a process that died)."""
    deadline = time.monotonic() + timeout
    while True:
        got = ok()
        if got:
            return got
        for name, p in procs:
            assert p.poll() is None, f"{name} exited with {p.returncode} while waiting for {what}"
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(0.2)


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def _stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _latencies_ms(seen, stream, since_ms: float) -> np.ndarray:
    """Per decision shown on the page after ``since_ms``: page time minus its stream entry's time (ms)."""
    added = {}
    for entry_id, fields in stream:
        ev = json.loads(fields["event"])
        added.setdefault((ev["game_id"], ev["ply"]), int(entry_id.split("-")[0]))
    return np.array([t - added[(g, ply)] for g, ply, t in seen
                     if (g, ply) in added and added[(g, ply)] >= since_ms], dtype=float)


def test_watch_and_play_in_the_browser(own_redis_server, tmp_path):
    ensure_node_modules()
    # The bundle only: test_frontend.py type-checks the sources.
    build = npm("exec", "--", "vite", "build")
    assert build.returncode == 0, f"vite build failed:\n{build.stdout[-3000:]}{build.stderr[-3000:]}"

    redis_server = own_redis_server.start()
    r = redis_server.client()
    cfg_file = tmp_path / "e2e_config.py"
    cfg_file.write_text(CONFIG.format(url=redis_server.url))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = []
    logs = {name: open(tmp_path / f"{name}.log", "w") for name in ("train", "bridge")}
    try:
        train = subprocess.Popen([sys.executable, "-m", "lzlite.entry", "--cfg", str(cfg_file), "--run-dir",
                                  str(tmp_path / "e2e_tictactoe"), "--max-env-step", "1000000"],
                                 cwd=ROOT, env=env, stdout=logs["train"], stderr=subprocess.STDOUT)
        procs.append(("training run", train))
        port = _free_port()
        bridge = subprocess.Popen([sys.executable, "-m", "lzlite.webui", "--redis", redis_server.url,
                                   "--port", str(port)],
                                  cwd=ROOT, env=env, stdout=logs["bridge"], stderr=subprocess.STDOUT)
        procs.append(("bridge", bridge))
        url = f"http://127.0.0.1:{port}/"
        _wait("the bridge to serve the UI", lambda: _http_ok(url), 60, procs)
        run = _wait("the run in lzlite:runs", lambda: r.zrange("lzlite:runs", 0, -1), 120, procs)[0]
        # The play page needs a checkpoint; the curve and boards need a collect and a few learner steps.
        _wait("the run's first checkpoint", lambda: (tmp_path / "e2e_tictactoe" / "ckpt" / "last.pt").exists(),
              120, procs)

        shots = Path(os.environ.get("LZLITE_WEBUI_SHOTS") or tmp_path)
        shots = shots if shots.is_absolute() else ROOT / shots
        shots.mkdir(parents=True, exist_ok=True)
        out = tmp_path / "e2e.json"
        browser = subprocess.run(
            ["node", "e2e/run.mjs", json.dumps(dict(url=url, run=run, shots=str(shots), out=str(out),
                                                    chromium=CHROMIUM, timeout_ms=90_000, watch_ms=4000))],
            cwd=WEBUI, env=node_env(), capture_output=True, text=True, timeout=400, check=False)
        result = json.loads(out.read_text()) if out.exists() else {}
        assert browser.returncode == 0 and result.get("ok"), (
            f"browser script failed:\n{browser.stdout[-3000:]}\n{browser.stderr[-3000:]}")
        for name, p in procs:
            assert p.poll() is None, f"{name} exited with {p.returncode} during the browser checks"
        stream = r.xrange(f"lzlite:run:{run}:games")
    finally:
        for _, p in reversed(procs):
            _stop(p)
        for f in logs.values():
            f.close()

    # The run page: a curve gained points, a live board moved on, the search's numbers were drawn.
    assert result["points_later"] > result["points_first"] > 0
    assert result["boards_later"] != result["boards_first"]
    assert result["overlay_cells"] > 0
    assert "tictactoe" in result["status_text"]

    # The game: we played X (first) until it ended; the final board is a legal end of tic-tac-toe.
    game = result["game"]
    cells = game["cells"]
    xs, os_ = cells.count(0), cells.count(1)
    assert xs - os_ in (0, 1) and len(game["moves"]) == xs
    lines = {p for p in (0, 1) if any(all(cells[i] == p for i in ln) for ln in LINES)}
    if game["winner"] == -1:
        assert not lines and -1 not in cells, cells
    else:
        assert lines == {game["winner"]}, cells
    assert game["line"] in ("You win!", "The agent wins.", "Draw.")

    # Phone width: nothing wider than the screen.
    assert result["phone_run_width"] <= 375 and result["phone_play_width"] <= 375
    for page in ("runs", "run", "play", "run_phone", "play_phone"):
        assert (shots / f"webui_{page}.png").stat().st_size > 5000

    lat = _latencies_ms(result["seen"], stream, result["watch_start_ms"])
    assert len(lat) >= 5, f"only {len(lat)} decisions matched between Redis and the page"
    median, p95 = float(np.median(lat)), float(np.percentile(lat, 95))
    print(f"\nRedis -> page latency over {len(lat)} decisions: median {median:.0f} ms, p95 {p95:.0f} ms "
          f"(max {lat.max():.0f} ms)")
    assert median < 1000, f"median Redis -> page latency {median:.0f} ms (target under 1 s)"
