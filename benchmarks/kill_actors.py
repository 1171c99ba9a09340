"""SIGKILL actors of a running learner + actors run again and again; print how soon each is back, and the run's end.

    python benchmarks/kill_actors.py                 # 10 kills, tiny tic-tac-toe AlphaZero, 2 actors
    python benchmarks/kill_actors.py --kills 20 --actors 3

A kill takes actor k (k = kill number mod actors) a moment after it is playing; "back" is the time from the kill
to its replacement's first "playing" line (weights loaded, games started). The learner must go on and finish
with exit code 0 and no dropped frame (each episode is one frame: a killed actor delivers whole episodes only).
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests", "entry"))

from lzlite.config import compile_config, save_config  # noqa: E402
from tiny_configs import tiny_config  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--port", type=int, default=47601)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = compile_config(*tiny_config("alphazero", exp_name="kill_actors", cluster_port=args.port), seed=0)
        cfg_path = os.path.join(tmp, "tiny.py")
        save_config(cfg, cfg_path)
        run_dir = os.path.join(tmp, "run")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (REPO, os.environ.get("PYTHONPATH", "")) if x))
        proc = subprocess.Popen([sys.executable, "-m", "lzlite.entry", "--cfg", cfg_path, "--actors", str(args.actors),
                                 "--max-env-step", "100000000", "--run-dir", run_dir], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env, cwd=REPO)
        logs = os.path.join(run_dir, "actors")
        back = []

        def playing(k: int) -> int:
            path = os.path.join(logs, f"actor_{k}.log")
            return open(path).read().count("playing") if os.path.exists(path) else 0

        def wait(cond, timeout: float) -> bool:
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                if cond():
                    return True
                time.sleep(0.02)
            return False

        try:
            for kill in range(args.kills):
                k = kill % args.actors
                if not wait(lambda: playing(k) >= 1 + kill // args.actors, 60):
                    raise RuntimeError(f"actor {k} never started playing")
                time.sleep(1.0)
                sup_log = open(os.path.join(logs, "supervisor.log")).read()
                pid = int(re.findall(rf"actor {k} started pid (\d+)", sup_log)[-1])
                before = playing(k)
                os.kill(pid, signal.SIGKILL)
                t0 = time.monotonic()
                if not wait(lambda: playing(k) > before, 60):
                    raise RuntimeError(f"actor {k} not back within 60 s")
                back.append(time.monotonic() - t0)
                print(f"kill {kill + 1}: actor {k} back and playing after {back[-1]:.2f} s", flush=True)
            proc.send_signal(signal.SIGINT)  # the learner saves and stops its actors
            proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # (a benchmark's reader)

        acc = EventAccumulator(os.path.join(run_dir, "tb"))
        acc.Reload()
        last = {tag: acc.Scalars(tag)[-1].value for tag in ("cluster/dropped", "cluster/episodes",
                                                             "cluster/achieved_replay_ratio")}
        print(f"\n{args.kills} kills: back after {min(back):.2f} / {sum(back) / len(back):.2f} / {max(back):.2f} s "
              f"(min / mean / max); the learner ran throughout and stopped on SIGINT with exit code "
              f"{proc.returncode} (130 expected); its last log: {last['cluster/episodes']:.0f} episodes, "
              f"{last['cluster/dropped']:.0f} dropped frames, achieved replay ratio "
              f"{last['cluster/achieved_replay_ratio']:.3f}")


if __name__ == "__main__":
    main()
