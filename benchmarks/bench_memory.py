"""Memory over a long run: does the process grow once the replay buffer is full?

Trains with a small replay buffer (so it fills early) and samples the process's resident set size (RSS)
after every collect through a registered collector subclass (``create_config.collector``: the same seam a
user swaps a collector through). Once the buffer is full nothing should grow: the script prints the RSS when
the buffer filled, at the end, and the growth per 10k env steps after the buffer filled (a least-squares
slope over the samples), against a target of under 1 MB per 10k env steps.

    python benchmarks/bench_memory.py                       # tic-tac-toe MuZero and Connect Four AlphaZero
    python benchmarks/bench_memory.py --games tictactoe --env-steps 20000 --buffer 2000
    python benchmarks/bench_memory.py --games connect4 --env-steps 100000 --png docs/img/memory_connect4.png

``--png`` also draws each game's RSS against env steps (needs matplotlib: ``pip install -e ".[plot]"``).
"""
from __future__ import annotations

import argparse
import os
import tempfile
from typing import Dict, List, Tuple

import numpy as np

from lzlite.config import deep_update, load_config_file
from lzlite.entry import train_alphazero, train_muzero
from lzlite.registry import COLLECTOR_REGISTRY
from lzlite.worker.collector import Collector

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_MB_PER_10K = 1.0
SAMPLES: List[Tuple[int, float, int]] = []  # (env steps so far, RSS in MB, buffer-full flag) after each collect

# per game: the shipped config it runs, the entry, and what shrinks it to a few minutes on one core
GAMES = {
    "tictactoe": ("zoo/tictactoe/muzero_config.py", train_muzero, dict()),
    "connect4": ("zoo/connect4/alphazero_config.py", train_alphazero,
                 dict(num_simulations=25, collector_env_num=32, n_episode=32, lr_schedule="constant",
                      num_actors=0, engine_infer_cache=0)),  # one process: its own collector samples the RSS
}


def rss_mb() -> float:
    """The process's resident set size in MB (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@COLLECTOR_REGISTRY.register("rss_episode_collector")
class RSSCollector(Collector):
    """The episode collector, sampling RSS after every collect."""

    def collect(self, *args, **kwargs):
        segments, stats = super().collect(*args, **kwargs)
        SAMPLES.append((self.env_steps, rss_mb(), 0))
        return segments, stats


def measure(game: str, env_steps: int, buffer: int, seed: int) -> Dict[str, float]:
    path, entry, shrink = GAMES[game]
    main, create = load_config_file(os.path.join(REPO, path))
    policy = dict(shrink, replay_buffer_size=buffer, eval_freq=10**9, save_ckpt_freq=10**9)
    main = deep_update(main, dict(policy=policy, max_env_step=env_steps))
    create = deep_update(create, dict(collector=dict(type="rss_episode_collector", import_names=["__main__"])))
    SAMPLES.clear()
    with tempfile.TemporaryDirectory() as run_dir:
        entry([main, create], seed=seed, run_dir=run_dir, progress=False)
    steps = np.array([s for s, _, _ in SAMPLES], dtype=np.float64)
    rss = np.array([r for _, r, _ in SAMPLES])
    full = steps >= buffer  # the buffer holds at most `buffer` rows: full once that many moves were played
    if full.sum() < 3:
        raise SystemExit(f"{game}: the buffer of {buffer} filled too late for a slope; raise --env-steps")
    slope = np.polyfit(steps[full], rss[full], 1)[0] * 10_000
    return dict(samples=float(len(rss)), full_at=float(steps[full][0]), rss_full=float(rss[full][0]),
                rss_end=float(rss[-1]), mb_per_10k=float(slope), env_steps=float(steps[-1]), steps=steps, rss=rss)


def plot(results: Dict[str, Dict], buffer: int, path: str) -> None:
    """RSS against env steps, one line per game, with where the buffer filled."""
    import matplotlib  # optional: only --png needs it
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for game, r in results.items():
        ax.plot(r["steps"], r["rss"], label=f"{game}: {r['mb_per_10k']:+.2f} MB / 10k env steps once full")
        ax.axvline(r["full_at"], color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("env steps")
    ax.set_ylabel("RSS (MB)")
    ax.set_title(f"process memory, replay buffer of {buffer} rows (dotted: buffer full)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    p.add_argument("--env-steps", type=int, default=30000, help="env steps per game (default 30000)")
    p.add_argument("--buffer", type=int, default=2000, help="replay buffer size, in transitions (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--png", help="also draw RSS against env steps into this PNG")
    args = p.parse_args()
    print(f"{'game':<10} {'env steps':>9} {'full at':>8} {'RSS full (MB)':>13} {'RSS end (MB)':>12} "
          f"{'MB / 10k env steps':>18}  target < {TARGET_MB_PER_10K:g}")
    results = {}
    for game in args.games:
        r = results[game] = measure(game, args.env_steps, args.buffer, args.seed)
        verdict = "ok" if r["mb_per_10k"] < TARGET_MB_PER_10K else "OVER"
        print(f"{game:<10} {r['env_steps']:>9.0f} {r['full_at']:>8.0f} {r['rss_full']:>13.1f} {r['rss_end']:>12.1f} "
              f"{r['mb_per_10k']:>18.2f}  {verdict}")
    if args.png:
        plot(results, args.buffer, args.png)


if __name__ == "__main__":
    main()
