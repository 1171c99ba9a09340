"""Generate the Connect Four positions the evaluator grades moves on (zoo/connect4/eval_positions.json).

Positions come from uniformly random play (10 to 26 plies, seeded), skipping finished games and
positions where every legal move is equally good (they grade nothing). Each is stored in text
notation with the moves that keep its exact win/draw/loss value, per the bitboard solver.

    python zoo/connect4/gen_eval_positions.py [--n 400] [--seed 0]
"""
import argparse
import json
import os

import numpy as np

import zoo
from zoo.bots import Connect4Solver


def generate(n: int, seed: int) -> list:
    game = zoo.make_batch_game("connect4")
    solver = Connect4Solver()
    rng = np.random.default_rng(seed)
    out, seen = [], set()
    while len(out) < n:
        row = game.new_states(1)
        plies = int(rng.integers(10, 27))
        for _ in range(plies):
            legal = np.flatnonzero(game.legal_mask(row)[0])
            _, done = game.step(row, np.array([rng.choice(legal)], np.int32))
            if done[0]:
                break
        if game.is_terminal(row)[0]:
            continue
        h = int(game.hash(row)[0])
        if h in seen:
            continue
        seen.add(h)
        legal = np.flatnonzero(game.legal_mask(row)[0])
        optimal = solver.value_preserving_moves(row[0])
        if len(optimal) == len(legal):
            continue
        out.append(dict(position=game.render(row[0]), optimal=[int(a) for a in optimal],
                        score=int(solver.score(row[0]))))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    positions = generate(args.n, args.seed)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_positions.json")
    with open(path, "w") as f:  # one position per line: readable diffs
        f.write('{"seed": %d, "positions": [\n' % args.seed)
        f.write(",\n".join(json.dumps(x) for x in positions))
        f.write("\n]}\n")
    print(f"wrote {len(positions)} positions to {path}")


if __name__ == "__main__":
    main()
