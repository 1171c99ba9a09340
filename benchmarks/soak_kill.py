"""kill -9 soak: a tiny tic-tac-toe run killed with SIGKILL again and again, each time continued with --resume.

Each round starts ``python -m lzlite.entry`` on one run dir (the first fresh, the others with ``--resume`` once a
``last.pt`` exists) and SIGKILLs it, half the time at a random moment (startup included) and half the time the
instant a checkpoint write is under way (a ``*.pt.tmp.<pid>`` file of the live process is seen; the config
writes ``last.pt`` every ``--save-ckpt-freq`` learner steps, so writes are frequent). After every kill it counts:

* **corrupt**: checkpoints in ``ckpt/`` (``last.pt``, ``best.pt``, ``iteration_<N>.pt``) that do not load;
* **torn writes**: kills that left a temporary file behind (the kill landed inside a write);
* **failed starts**: a (resumed) process that exited by itself before it was killed;
* **leftover .tmp**: temporary files of an earlier process still there once the next one shows its progress
  bar (by then it has removed them);
* **backwards**: ``env_steps`` or ``train_iter`` in ``last.pt`` below what an earlier round saw.

A last round resumes and runs to a limit, which must end with exit code 0. Prints one row per round and the
totals; the exit code is 1 when any count above is not zero.

    nice -n 19 python benchmarks/soak_kill.py                # 20 kills, a few minutes
    nice -n 19 python benchmarks/soak_kill.py --kills 100 --seed 3
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from lzlite.worker.checkpoint import CheckpointError, load_checkpoint  # noqa: E402

# A tiny AlphaZero tic-tac-toe run that would not end by itself: the soak ends it.
CONFIG = """
from lzlite.config import extend_base

policy = dict(
    num_simulations=8, collector_env_num=8, n_episode=8, batch_size=32, replay_ratio=0.25, replay_buffer_size=2000,
    eval_freq={eval_freq}, eval_episodes=4, eval_bots=["random"], eval_optimal_move_rate=False,
    save_ckpt_freq={save_ckpt_freq},
    model=dict(observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1, num_channels=8,
               value_head_channels=4, policy_head_channels=4, fc_value_layers=[8], fc_policy_layers=[8]),
)
main_config, create_config = extend_base("alphazero", dict(exp_name="soak", policy=policy),
                                         dict(env=dict(type="tictactoe")))
main_config["max_env_step"] = 10**8
"""

BAR_STARTED = "/100000000"  # the progress bar's total: drawn once the run has removed stale temp files


def _tmp_files(ckpt_dir: str, exclude_pid: Optional[int] = None) -> List[str]:
    if not os.path.isdir(ckpt_dir):
        return []
    names = [n for n in os.listdir(ckpt_dir) if ".pt.tmp." in n]
    return [n for n in names if exclude_pid is None or not n.endswith(f".tmp.{exclude_pid}")]


def _check_checkpoints(ckpt_dir: str) -> Dict[str, object]:
    """Load every checkpoint in ckpt_dir: the corrupt ones' names and last.pt's counters (None without one)."""
    corrupt, counters = [], None
    if os.path.isdir(ckpt_dir):
        for name in sorted(os.listdir(ckpt_dir)):
            if not name.endswith(".pt"):
                continue
            try:
                state = load_checkpoint(os.path.join(ckpt_dir, name))
            except CheckpointError:
                corrupt.append(name)
                continue
            if name == "last.pt":
                counters = state["counters"]
    return dict(corrupt=corrupt, counters=counters)


def _start(cfg: str, run_dir: str, log, resume: bool, extra: List[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, "-m", "lzlite.entry", "--cfg", cfg, "--run-dir", run_dir, *extra]
    if resume:
        args.append("--resume")
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log, env=env, cwd=REPO)


def _read(path: str) -> str:
    with open(path, errors="replace") as f:
        return f.read()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kills", type=int, default=20, help="SIGKILLs (rounds) before the final resume")
    p.add_argument("--seed", type=int, default=0, help="seed of the kill schedule")
    p.add_argument("--min-delay", type=float, default=1.0, help="earliest random kill, seconds after the start")
    p.add_argument("--max-delay", type=float, default=10.0, help="latest random kill, seconds after the start")
    p.add_argument("--write-fraction", type=float, default=0.5, help="share of kills timed into a checkpoint write")
    p.add_argument("--save-ckpt-freq", type=int, default=2, help="learner steps between last.pt writes")
    p.add_argument("--eval-freq", type=int, default=40, help="learner steps between evaluations (best.pt, iteration_N.pt)")
    p.add_argument("--work-dir", default=None, help="where the config, run dir and logs go (default: a new temp dir)")
    args = p.parse_args()

    rng = random.Random(args.seed)
    work = args.work_dir or tempfile.mkdtemp(prefix="lzlite_soak_")
    run_dir = os.path.join(work, "run")
    ckpt_dir = os.path.join(run_dir, "ckpt")
    cfg = os.path.join(work, "soak_config.py")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(save_ckpt_freq=args.save_ckpt_freq, eval_freq=args.eval_freq))
    print(f"run dir {run_dir}; {args.kills} kills, {args.write_fraction:.0%} timed into checkpoint writes", flush=True)

    rows, seen = [], dict(env_steps=0, train_iter=0)
    totals = dict(corrupt=0, torn=0, failed=0, leftover=0, backwards=0)
    header = (f"{'#':>3} {'kill':<6} {'start':<7} {'at s':>5} {'torn':>4} {'left':>4} {'corrupt':<8} "
              f"{'env_steps':>9} {'iter':>5}  note")
    print(header + "\n" + "-" * len(header), flush=True)
    for k in range(args.kills + 1):
        final = k == args.kills
        resume = os.path.isfile(os.path.join(ckpt_dir, "last.pt"))
        mode = "end" if final else ("write" if rng.random() < args.write_fraction else "random")
        extra = ["--max-train-iter", str(seen["train_iter"] + 20)] if final else []
        log = os.path.join(work, f"stderr_{k}.txt")
        log_file = open(log, "w")
        proc = _start(cfg, run_dir, log_file, resume, extra)
        t0 = time.monotonic()
        kill_at = t0 + rng.uniform(args.min_delay, args.max_delay)
        leftover: Optional[int] = None  # unknown until the process shows its bar
        note, last_read = "", 0.0
        while True:
            now = time.monotonic()
            if leftover is None and now - last_read > 0.05:
                last_read = now
                if BAR_STARTED in _read(log):
                    leftover = len(_tmp_files(ckpt_dir, exclude_pid=proc.pid))
            rc = proc.poll()
            if rc is not None:
                if not final or rc != 0:
                    note = f"exited by itself, code {rc}: {_read(log).strip().splitlines()[-1:]}"
                    totals["failed"] += 1
                break
            if final and now - t0 > 600:
                proc.kill()
                note = "final run did not end in 600 s"
                totals["failed"] += 1
                break
            if mode == "random" and now >= kill_at:
                break
            writing = leftover is not None and any(n.endswith(f".tmp.{proc.pid}") for n in _tmp_files(ckpt_dir))
            if mode == "write" and (writing or now - t0 > 60):
                break
            time.sleep(0.0005 if mode == "write" and leftover is not None else 0.01)
        at = time.monotonic() - t0
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        log_file.close()
        torn = sum(n.endswith(f".tmp.{proc.pid}") for n in _tmp_files(ckpt_dir))  # this kill's, not older ones
        check = _check_checkpoints(ckpt_dir)
        counters = check["counters"] or {}
        backwards = any(int(counters.get(key, 0)) < seen[key] for key in seen) if counters else False
        if check["counters"] is None and resume:
            note += " last.pt missing after a resume"
            backwards = True
        for key in seen:
            seen[key] = max(seen[key], int(counters.get(key, 0)))
        totals["corrupt"] += len(check["corrupt"])
        totals["torn"] += torn > 0
        totals["leftover"] += leftover or 0
        totals["backwards"] += backwards
        row = (f"{k:>3} {mode:<6} {'resume' if resume else 'fresh':<7} {at:>5.1f} {torn:>4} "
               f"{'-' if leftover is None else leftover:>4} {','.join(check['corrupt']) or 'none':<8} "
               f"{counters.get('env_steps', '-'):>9} {counters.get('train_iter', '-'):>5}  "
               f"{'BACKWARDS ' if backwards else ''}{note}".rstrip())
        rows.append(row)
        print(row, flush=True)
    print("-" * len(header))
    print(f"kills {args.kills}: torn writes (a .tmp left by the kill) {totals['torn']}; corrupt checkpoints "
          f"{totals['corrupt']}; failed starts / resumes {totals['failed']}; leftover .tmp after the next start "
          f"{totals['leftover']}; counters going backwards {totals['backwards']}; final run to "
          f"train_iter {seen['train_iter']}, env_steps {seen['env_steps']}")
    bad = totals["corrupt"] + totals["failed"] + totals["leftover"] + totals["backwards"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
