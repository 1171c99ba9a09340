"""A slow, obvious pure-Python 9x9 Gomoku (freestyle: five OR MORE in a row wins), independent of C++.

``board[r][c]`` with row 0 at the top: 0 = X (moves first), 1 = O, None = empty. Action = r * 9 + c.
A full board without five in a row is a draw.
"""
from __future__ import annotations

from typing import List, Optional

SIZE, CONNECT = 9, 5
DIRECTIONS = [(0, 1), (1, 0), (1, 1), (1, -1)]  # horizontal, vertical, both diagonals


class GomokuReference:
    """One game of 9x9 freestyle Gomoku."""

    rows, cols, num_actions = SIZE, SIZE, SIZE * SIZE

    def __init__(self) -> None:
        self.board: List[List[Optional[int]]] = [[None] * SIZE for _ in range(SIZE)]
        self.moves = 0

    def copy(self) -> "GomokuReference":
        other = GomokuReference()
        other.board = [list(row) for row in self.board]
        other.moves = self.moves
        return other

    def to_play(self) -> int:
        return self.moves % 2

    def winner(self) -> int:
        # A run of six or more also contains five in a row starting at its first stone.
        for r in range(SIZE):
            for c in range(SIZE):
                player = self.board[r][c]
                if player is None:
                    continue
                for dr, dc in DIRECTIONS:
                    cells = [(r + k * dr, c + k * dc) for k in range(CONNECT)]
                    if all(0 <= rr < SIZE and 0 <= cc < SIZE and self.board[rr][cc] == player
                           for rr, cc in cells):
                        return player
        return -1

    def is_terminal(self) -> bool:
        return self.winner() >= 0 or self.moves == SIZE * SIZE

    def legal_actions(self) -> List[int]:
        if self.is_terminal():
            return []
        return [r * SIZE + c for r in range(SIZE) for c in range(SIZE) if self.board[r][c] is None]

    def play(self, action: int) -> None:
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action}; legal: {self.legal_actions()}")
        self.board[action // SIZE][action % SIZE] = self.to_play()
        self.moves += 1

    def to_text(self) -> str:
        symbol = {0: "X", 1: "O", None: "."}
        return "\n".join(" ".join(symbol[v] for v in row) for row in self.board)


def perft(game: GomokuReference, depth: int) -> int:
    """Number of move sequences of length ``depth`` (finished games stop early and count 0)."""
    if depth == 0:
        return 1
    total = 0
    for action in game.legal_actions():
        child = game.copy()
        child.play(action)
        total += perft(child, depth - 1)
    return total
