"""Whole-buffer reanalyze on tic-tac-toe: plain versus ReZero backward-view reuse, same buffer, same network.

Builds the tic-tac-toe ReZero policy (zoo/tictactoe/rezero_config.py: 25 simulations, 1 x 32 conv net),
optionally trains it briefly with ``train_rezero`` (``--train-env-steps``), fills a replay buffer with
self-play games from that network, then reanalyzes the whole buffer ``--repeats`` times in each mode
with the target network (= online network here) without writing. It prints, per mode, network rows
per reanalyzed position (the initial inference of each root plus one recurrent row per simulation that
did not end on the reused child) and the median wall time, then the ratios, and how far the backward
view's root values are from plain reanalyze's (they are different estimates: the reused Q comes from
the next position's search instead of the dynamics model).

Torch runs on one intra-op thread (the shared CPU of the dev machine).

    python benchmarks/bench_rezero.py --quick     # random-init network, ~1000 positions, < 60 s
    python benchmarks/bench_rezero.py             # trained for 3000 env steps first, ~4000 positions
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import io
import statistics
import tempfile
import time
from typing import Any, Dict, List

import numpy as np
import torch

from lzlite.config import compile_config, load_config_file
from lzlite.entry import train_rezero
from lzlite.entry.loop import build_components


def make_config(num_simulations: int) -> list:
    main, create = load_config_file("zoo/tictactoe/rezero_config.py")
    main = copy.deepcopy(main)
    main["exp_name"] = "bench_rezero"
    main["policy"].update(num_simulations=num_simulations, num_threads=1, device="cpu", eval_freq=10 ** 9,
                          save_ckpt_freq=10 ** 9, eval_bots=["random"], eval_episodes=2,
                          eval_optimal_move_rate=False, reanalyze_interval=0)
    return [main, create]


def fill_buffer(cfg: list, policy: Any, positions: int) -> Any:
    """A fresh buffer holding at least ``positions`` self-play positions played by ``policy``."""
    parts = build_components(compile_config(*cfg, seed=0))
    collector, buffer = parts["collector"], parts["buffer"]
    collector.policy = policy
    while buffer.num_transitions < positions:
        segments, _ = collector.collect(train_iter=0)
        buffer.push_segments(segments)
    return buffer


def measure(policy: Any, buffer: Any, backward: bool, repeats: int) -> Dict[str, Any]:
    walls: List[float] = []
    values: Dict[int, float] = {}

    def record(pos: np.ndarray, out: Any, *_: Any) -> None:
        values.update(zip(pos.tolist(), out.root_value.tolist()))

    for r in range(repeats):
        stats = policy.reanalyze_buffer(buffer, backward_view=backward, write=False,
                                        on_search=record if r == 0 else None)
        walls.append(stats.wall_s)
    return dict(stats=stats, wall=statistics.median(walls), values=values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="random-init network, small buffer, 3 repeats (< 60 s)")
    ap.add_argument("--positions", type=int, default=None, help="buffer size in positions")
    ap.add_argument("--train-env-steps", type=int, default=None, help="train_rezero this many env steps first")
    ap.add_argument("--num-simulations", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=None)
    args = ap.parse_args()
    positions = args.positions or (1000 if args.quick else 4000)
    train_steps = args.train_env_steps if args.train_env_steps is not None else (0 if args.quick else 3000)
    repeats = args.repeats or (3 if args.quick else 5)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = make_config(args.num_simulations)

    t0 = time.perf_counter()
    if train_steps > 0:
        with tempfile.TemporaryDirectory() as run_dir, contextlib.redirect_stdout(io.StringIO()):
            policy = train_rezero(cfg, seed=0, max_env_step=train_steps, run_dir=run_dir, progress=False)
        what = f"trained {train_steps} env steps ({time.perf_counter() - t0:.0f} s)"
    else:
        policy = build_components(compile_config(*cfg, seed=0))["policy"]
        what = "random init"
    policy.update_target()  # reanalyze with the network that is being benchmarked
    buffer = fill_buffer(cfg, policy, positions)
    print(f"tic-tac-toe ReZero reanalyze: network {what}; buffer {buffer.num_transitions} positions in "
          f"{buffer.num_episodes} games; {args.num_simulations} simulations; batch "
          f"{policy.cfg.reanalyze_batch_size}; median of {repeats}; torch threads 1")

    measure(policy, buffer, False, 1)  # warm-up (allocations, first-call costs)
    plain = measure(policy, buffer, False, repeats)
    back = measure(policy, buffer, True, repeats)
    print(f"{'mode':<16}{'rows/position':>15}{'wall s':>10}{'positions/s':>13}{'searches':>10}{'reused sims':>13}")
    for name, m in (("plain", plain), ("backward-view", back)):
        s = m["stats"]
        print(f"{name:<16}{s.rows_per_position:>15.2f}{m['wall']:>10.3f}{s.positions / m['wall']:>13.0f}"
              f"{s.searches:>10}{s.reused_visits / max(s.positions, 1):>13.2f}")
    rows_ratio = plain["stats"].rows_per_position / back["stats"].rows_per_position
    print(f"ratio plain/backward: network rows {rows_ratio:.2f}x, wall time {plain['wall'] / back['wall']:.2f}x")
    keys = sorted(plain["values"])
    diff = np.abs(np.array([plain["values"][k] - back["values"][k] for k in keys]))
    print(f"root values backward vs plain: mean |diff| {diff.mean():.3f}, max {diff.max():.3f} "
          f"(each in [-1, 1])")


if __name__ == "__main__":
    main()
