"""Generate tests/zoo/solver_positions.json: Connect Four positions solved by a slow pure-Python search.

This is the independent reference for zoo/connect4/solver.h: plain lists instead of bitboards, a line
scan instead of shift tricks, a dict as the transposition table, no threat ordering. It is only fast
enough for late positions (20+ stones), which is what it generates: random seeded games stopped at a
given stone count.

Score convention (same as the solver): from the view of the player to move, 0 for a draw; +k when
the mover wins with best play, k = 22 - the number of stones the mover has on the board after its
winning move; -k when it loses, k counted for the opponent.

Run: python zoo/connect4/gen_solver_positions.py [--out tests/zoo/solver_positions.json]
"""
from __future__ import annotations

import argparse
import json
import random
import time

ROWS, COLS = 6, 7
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)


class Board:
    """Columns of player ids (0 moved first), bottom first."""

    def __init__(self) -> None:
        self.cols: list[list[int]] = [[] for _ in range(COLS)]
        self.n = 0

    def mover(self) -> int:
        return self.n % 2

    def legal(self) -> list[int]:
        return [c for c in CENTRE_FIRST if len(self.cols[c]) < ROWS]

    def cell(self, r: int, c: int) -> int:
        if 0 <= c < COLS and 0 <= r < len(self.cols[c]):
            return self.cols[c][r]
        return -1

    def wins_at(self, c: int, p: int) -> bool:
        """Would p dropping a stone in column c make four (or more) in a row?"""
        r = len(self.cols[c])
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                rr, cc = r + sign * dr, c + sign * dc
                while self.cell(rr, cc) == p:
                    run += 1
                    rr, cc = rr + sign * dr, cc + sign * dc
            if run >= 4:
                return True
        return False

    def play(self, c: int) -> None:
        self.cols[c].append(self.mover())
        self.n += 1

    def undo(self, c: int) -> None:
        self.cols[c].pop()
        self.n -= 1

    def key(self) -> tuple:
        return tuple(tuple(col) for col in self.cols)

    def text(self) -> str:
        """Top row first: 'X' first player, 'O' second, '.' empty (zoo's text notation)."""
        lines = []
        for r in range(ROWS - 1, -1, -1):
            lines.append("".join("XO"[self.cell(r, c)] if self.cell(r, c) >= 0 else "." for c in range(COLS)))
        return "\n".join(lines)


def win_score(board: Board) -> int:
    """Score for the mover of winning with its next stone."""
    return 22 - (board.n + 2) // 2


def negamax(board: Board, alpha: int, beta: int, table: dict) -> int:
    """Exact score within (alpha, beta): fail-soft alpha-beta with a bound-storing table."""
    moves = board.legal()
    if not moves:
        return 0
    p = board.mover()
    for c in moves:
        if board.wins_at(c, p):
            return win_score(board)
    key = board.key()
    entry = table.get(key)
    if entry is not None:
        lo, hi = entry
        if lo >= beta:
            return lo
        if hi <= alpha:
            return hi
        if lo == hi:
            return lo
        # Strictly inside now: a zero-width window would cut after one child and store a false bound.
        alpha, beta = max(alpha, lo), min(beta, hi)
    alpha0, best = alpha, -100
    for c in moves:
        board.play(c)
        v = -negamax(board, -beta, -alpha, table)
        board.undo(c)
        best = max(best, v)
        alpha = max(alpha, v)
        if alpha >= beta:
            break
    lo, hi = table.get(key, (-100, 100))
    if best <= alpha0:
        hi = min(hi, best)
    elif best >= beta:
        lo = max(lo, best)
    else:
        lo = hi = best
    table[key] = (lo, hi)
    return best


def move_scores(board: Board, table: dict) -> list[int | None]:
    """Score of each column for the player to move now (None for a full column)."""
    out: list[int | None] = [None] * COLS
    for c in range(COLS):
        if len(board.cols[c]) == ROWS:
            continue
        if board.wins_at(c, board.mover()):
            out[c] = win_score(board)
            continue
        board.play(c)
        out[c] = -negamax(board, -100, 100, table)
        board.undo(c)
    return out


def random_position(rng: random.Random, stones: int) -> tuple[Board, str] | None:
    """A random game stopped at `stones` stones, or None if someone won on the way."""
    board, seq = Board(), ""
    for _ in range(stones):
        c = rng.choice(board.legal())
        if board.wins_at(c, board.mover()):
            return None
        board.play(c)
        seq += str(c + 1)
    return board, seq


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tests/zoo/solver_positions.json")
    parser.add_argument("--count", type=int, default=40, help="positions to generate")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    positions = []
    t0 = time.time()
    while len(positions) < args.count:
        stones = rng.choice(range(16, 33))
        made = random_position(rng, stones)
        if made is None:
            continue
        board, seq = made
        table: dict = {}
        scores = move_scores(board, table)
        best = max(s for s in scores if s is not None)
        positions.append({
            "moves": seq,
            "text": board.text(),
            "stones": board.n,
            "score": best,
            "move_scores": scores,
            "optimal_moves": [c for c, s in enumerate(scores) if s == best],
        })
        print(f"{len(positions):3d} {seq:34s} score {best:+d} ({time.time() - t0:.1f}s)", flush=True)
    with open(args.out, "w") as f:
        json.dump({"generator": "zoo/connect4/gen_solver_positions.py", "seed": args.seed,
                   "score_convention": "mover's view; +k: win, k = 22 - mover's stones after its winning "
                                       "move; -k: loss; 0: draw",
                   "positions": positions}, f, indent=1)


if __name__ == "__main__":
    main()
