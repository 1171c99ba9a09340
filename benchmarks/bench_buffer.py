"""Replay sampling + target building throughput (minibatches per second).

Fills a buffer with ~100k transitions of synthetic games shaped like tic-tac-toe (obs [3,3,3], 9
actions, 5-9 moves) and Connect Four (obs [3,6,7], 7 actions, 7-42 moves), then times
``sample(256, rng)`` with K = 5 unroll steps for uniform and prioritized sampling.

    python benchmarks/bench_buffer.py [--transitions 100000] [--repeats 200]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from lzlite.buffer import GameSegment, PrioritizedReplayBuffer, ReplayBuffer

GAMES = {"tictactoe": ((3, 3, 3), 9, 5, 9), "connect4": ((3, 6, 7), 7, 7, 42)}


def make_segments(obs_shape, A, lo, hi, transitions, rng):
    segs, n = [], 0
    while n < transitions:
        L = int(rng.integers(lo, hi + 1))
        seg = GameSegment(A)
        obs = (rng.random((L,) + obs_shape) < 0.3).astype(np.float32)
        pi = rng.dirichlet(np.ones(A), size=L).astype(np.float32)
        legal = np.ones(A, bool)
        for t in range(L):
            seg.append(obs[t], int(rng.integers(A)), float(t == L - 1), 1 + t % 2, legal, float(rng.normal()), pi[t])
        seg.close(done=True)
        segs.append(seg)
        n += L
    return segs


def bench(buf, batch, repeats, rng, update_priorities):
    times = []
    for i in range(repeats + 5):
        t0 = time.perf_counter()
        b = buf.sample(batch, rng)
        if update_priorities:
            buf.update_priorities(b.indices, np.abs(b.target_value[:, 0]) + 0.1)
        if i >= 5:  # warm-up
            times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--transitions", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'game':10s} {'buffer':16s} {'td':>3s} {'ms/batch':>9s} {'batches/s':>10s}")
    for game, (obs_shape, A, lo, hi) in GAMES.items():
        segs = make_segments(obs_shape, A, lo, hi, args.transitions, rng)
        for td in (5, 9):
            for name, cls in (("uniform", ReplayBuffer), ("prioritized", PrioritizedReplayBuffer)):
                cfg = dict(replay_buffer_size=args.transitions + len(segs), num_unroll_steps=5, td_steps=td,
                           discount_factor=0.997, value_sign=-1)
                buf = cls(cfg)
                buf.push_segments(segs)
                med = bench(buf, args.batch, args.repeats, np.random.default_rng(1), cls is PrioritizedReplayBuffer)
                label = name + ("+upd" if cls is PrioritizedReplayBuffer else "")
                print(f"{game:10s} {label:16s} {td:3d} {med * 1e3:9.3f} {1.0 / med:10.0f}")


if __name__ == "__main__":
    main()
