"""Live telemetry's cost and latency: Redis on / off / configured but down, 0 vs 50 WebSocket clients, and the time
from a self-play move to its frame at a WebSocket client through the bridge.

Every training run is a separate process (``python -m lzlite.entry`` semantics, through ``train``) of the tic-tac-toe
AlphaZero default config for ``--env-steps`` env steps (with one 4-game evaluation, at the end); its env steps/s is env
steps over the wall time of ``train`` (collect, learn, that evaluation). The bridge is ``python -m lzlite.webui`` in its own process; the clients are
``websockets`` connections in this one, each subscribed to the run.

    python benchmarks/bench_telemetry.py [--env-steps 1500] [--repeats 2] [--clients 50]

Needs redis-server on the PATH and the webui extra (pip install -e '.[webui]').
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CFG = os.path.join(REPO, "zoo", "tictactoe", "config.py")
_CHILDREN: List[subprocess.Popen] = []  # training runs started, stopped on the way out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


# ------------------------------------------------------------------------------------------- the training process
def train_child(args: argparse.Namespace) -> None:
    """Run in a child process: train, then print one JSON line with the run's env steps/s."""
    import lzlite.telemetry.logger as logger_module
    from lzlite.config import load_config_file
    from lzlite.entry.loop import train
    from lzlite.telemetry.events import MoveHook

    class StampedHook(MoveHook):  # the move's time rides in its game id, so a client can measure the latency
        def __call__(self, event):
            event.game_id = f"{event.game_id}@{time.time():.6f}"
            super().__call__(event)

    logger_module.MoveHook = StampedHook
    main, create = load_config_file(CFG)
    # one short evaluation, at the end: the figure is the cost of telemetry on self-play and learning
    main["policy"].update(eval_freq=10**6, eval_episodes=4, eval_bots=["random"], eval_optimal_move_rate=False,
                          eval_never_lose_check=False)
    if args.redis_url:
        main["logger"] = dict(redis_url=args.redis_url, spectate_games=2)
    t0, c0 = time.perf_counter(), time.process_time()
    train([main, create], seed=0, max_env_step=args.env_steps, run_dir=args.run_dir, progress=False, force=True)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0  # cpu: all the process's threads
    print("RESULT " + json.dumps(dict(env_steps_per_s=args.env_steps / elapsed, env_steps_per_cpu_s=args.env_steps / cpu,
                                      seconds=elapsed)), flush=True)


def run_training(env_steps: int, redis_url: Optional[str], run_dir: str) -> subprocess.Popen:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--env-steps", str(env_steps), "--run-dir", run_dir]
    if redis_url:
        cmd += ["--redis-url", redis_url]
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=REPO)
    _CHILDREN.append(proc)
    return proc


def result_of(proc: subprocess.Popen) -> Dict[str, float]:
    out, _ = proc.communicate()
    for line in out.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"training failed (exit {proc.returncode})")


# --------------------------------------------------------------------------------------------- the clients
async def clients(port: int, redis_url: str, n: int, proc: subprocess.Popen, latencies: Optional[List[float]]) -> int:
    """``n`` WebSocket clients subscribed to the newest run until ``proc`` ends; returns the frames they received.
    Client 0 records each move frame's latency (arrival - the move's time) into ``latencies``."""
    import redis
    import websockets

    r = redis.Redis.from_url(redis_url, decode_responses=True)
    before = set(r.zrange("lzlite:runs", 0, -1))
    while True:
        new = set(r.zrange("lzlite:runs", 0, -1)) - before
        if new or proc.poll() is not None:
            break
        await asyncio.sleep(0.05)
    if not new:
        return 0
    run = new.pop()
    received = [0] * n

    async def one(k: int) -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
            await ws.send(json.dumps({"op": "subscribe", "run": run}))
            live = False
            while True:
                text = await ws.recv()
                now = time.time()
                received[k] += 1
                if k == 0 and latencies is not None and '"type":"move"' in text[:20]:
                    stamp = json.loads(text)["event"]["game_id"].partition("@")[2]
                    if live and stamp:  # (the first frames are the snapshot of earlier moves)
                        latencies.append(now - float(stamp))
                if '"type":"curve"' in text[:20]:
                    live = True  # after the history: what follows is live

    tasks = [asyncio.create_task(one(k)) for k in range(n)]
    while proc.poll() is None:
        await asyncio.sleep(0.1)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return sum(received)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env-steps", type=int, default=1500)
    p.add_argument("--repeats", type=int, default=2, help="runs per setting (their median is reported)")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--run-dir", default=None, help=argparse.SUPPRESS)
    p.add_argument("--redis-url", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return train_child(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill still stops the server, bridge and runs
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("bench_telemetry: redis-server is not installed (apt-get install redis-server)")
    tmp = tempfile.mkdtemp(prefix="lzlite-bench-telemetry-")
    rport, bport = _free_port(), _free_port()
    url = f"redis://127.0.0.1:{rport}/0"
    down_url = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    server = subprocess.Popen([exe, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                               "--dir", tmp], stdout=subprocess.DEVNULL)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    bridge = subprocess.Popen([sys.executable, "-m", "lzlite.webui", "--redis", url, "--port", str(bport),
                               "--ui-dir", os.path.join(tmp, "no-ui")], stdout=subprocess.DEVNULL, env=env, cwd=REPO)
    try:
        _wait_port(rport)
        _wait_port(bport)
        names = ["Redis off", "Redis on", "Redis configured, down", f"Redis on, {args.clients} WebSocket clients"]
        speed: Dict[str, List[Dict[str, float]]] = {name: [] for name in names}
        latencies: List[float] = []
        frames = 0
        for rep in range(args.repeats):
            for name, redis_url in (("Redis off", None), ("Redis on", url), ("Redis configured, down", down_url)):
                speed[name].append(result_of(run_training(args.env_steps, redis_url, os.path.join(tmp, "run"))))
            proc = run_training(args.env_steps, url, os.path.join(tmp, "run"))
            frames += asyncio.run(clients(bport, url, args.clients, proc, latencies))
            speed[names[-1]].append(result_of(proc))
        print(f"tic-tac-toe AlphaZero ({os.path.relpath(CFG, REPO)}), {args.env_steps} env steps per run, median of "
              f"{args.repeats} (wall: env steps per second; CPU: per second of the training process's CPU time):")
        base = {key: statistics.median(r[key] for r in speed["Redis off"])
                for key in ("env_steps_per_s", "env_steps_per_cpu_s")}
        for name, runs in speed.items():
            wall, cpu = (statistics.median(r[key] for r in runs) for key in ("env_steps_per_s", "env_steps_per_cpu_s"))
            print(f"  {name:<36} wall {wall:7.1f} /s ({wall / base['env_steps_per_s']:4.2f} x off)   CPU "
                  f"{cpu:7.1f} /s ({cpu / base['env_steps_per_cpu_s']:4.2f} x off)   wall per run: "
                  + ", ".join(f"{r['env_steps_per_s']:.1f}" for r in runs))
        print(f"  frames received by the {args.clients} clients: {frames}")
        if latencies:
            lat = sorted(latencies)
            p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
            print(f"move -> WebSocket client latency over {len(lat)} moves: median {1000 * statistics.median(lat):.1f} "
                  f"ms, p95 {1000 * p95:.1f} ms, max {1000 * lat[-1]:.1f} ms")
    finally:
        for proc in [*_CHILDREN, bridge, server]:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
