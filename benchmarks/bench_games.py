"""Random-playout throughput per game, three ways side by side, on one thread.

    python benchmarks/bench_games.py            # full run
    python benchmarks/bench_games.py --quick    # < 30 s

For each game it measures moves per second of uniformly random play:
  cpp     the C++ core alone: BatchGame.random_playouts (whole games in one C++ call, GIL released);
  batch   the batched step API driven from Python: a batch of games, random legal actions sampled
          in numpy from legal_mask, finished games reset (what a Python collector pays per move);
  python  the pure-Python reference (zoo/<game>/reference.py).
Each number is the median of several repeats; ratios compare the medians.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, List

import numpy as np

import zoo
from zoo.connect4.reference import Connect4Reference
from zoo.gomoku.reference import GomokuReference
from zoo.tictactoe.reference import TicTacToeReference

REFERENCES = {"tictactoe": TicTacToeReference, "connect4": Connect4Reference, "gomoku": GomokuReference}


def median_rate(run: Callable[[int], int], repeats: int) -> float:
    """Median of ``repeats`` measurements of moves/second; ``run(i)`` returns the moves it made."""
    rates: List[float] = []
    for i in range(repeats):
        start = time.perf_counter()
        moves = run(i)
        rates.append(moves / (time.perf_counter() - start))
    return statistics.median(rates)


def cpp_rate(game, n_games: int, repeats: int) -> float:
    return median_rate(lambda i: game.random_playouts(n_games, 1000 + i), repeats)


def batch_rate(game, batch: int, steps: int, repeats: int) -> float:
    rng = np.random.default_rng(0)
    states = game.new_states(batch)
    mask = np.zeros((batch, game.num_actions), dtype=np.bool_)

    def run(_: int) -> int:
        moves = 0
        for _ in range(steps):
            game.legal_mask(states, out=mask)
            # A random legal action per game: the argmax of uniform noise over the legal entries.
            actions = np.where(mask, rng.random(mask.shape, dtype=np.float32), -1.0).argmax(axis=1)
            _, done = game.step(states, actions)
            moves += batch
            finished = np.flatnonzero(done)
            if finished.size:
                game.reset(states, finished)
        return moves

    return median_rate(run, repeats)


def python_rate(name: str, n_games: int, repeats: int) -> float:
    reference = REFERENCES[name]

    def run(i: int) -> int:
        rng = np.random.default_rng(i)
        moves = 0
        for _ in range(n_games):
            game = reference()
            while not game.is_terminal():
                legal = game.legal_actions()
                game.play(legal[int(rng.integers(len(legal)))])
                moves += 1
        return moves

    return median_rate(run, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer games and repeats (< 30 s)")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per measurement (median)")
    parser.add_argument("--batch", type=int, default=1024, help="games per batch for the batched step API")
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 7)
    scale = 1 if args.quick else 5

    print(f"random-playout moves/s, one thread, median of {repeats} repeats")
    print(f"{'game':<10} {'cpp':>12} {'batch':>12} {'python':>10} {'cpp/batch':>10} {'batch/py':>9} {'cpp/py':>9}")
    for name in zoo.GAME_NAMES:
        game = zoo.make_batch_game(name)
        cpp = cpp_rate(game, {"tictactoe": 200000, "connect4": 100000, "gomoku": 20000}[name] * scale, repeats)
        batch = batch_rate(game, args.batch, 20 * scale, repeats)
        python = python_rate(name, {"tictactoe": 400, "connect4": 20, "gomoku": 4}[name] * scale, repeats)
        print(f"{name:<10} {cpp:>12,.0f} {batch:>12,.0f} {python:>10,.0f} {cpp / batch:>10.1f} "
              f"{batch / python:>9.1f} {cpp / python:>9.0f}")


if __name__ == "__main__":
    main()
