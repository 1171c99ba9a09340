"""A slow, obvious pure-Python Connect Four (7 columns x 6 rows), independent of the C++ core.

``board[r][c]`` with row 0 at the TOP (as drawn): 0 = X (moves first), 1 = O, None = empty.
Actions are columns 0..6; a stone falls to the lowest empty row of its column.
"""
from __future__ import annotations

from typing import List, Optional

ROWS, COLS, CONNECT = 6, 7, 4
DIRECTIONS = [(0, 1), (1, 0), (1, 1), (1, -1)]  # horizontal, vertical, both diagonals


class Connect4Reference:
    """One game of Connect Four."""

    rows, cols, num_actions = ROWS, COLS, COLS

    def __init__(self) -> None:
        self.board: List[List[Optional[int]]] = [[None] * COLS for _ in range(ROWS)]
        self.moves = 0

    def copy(self) -> "Connect4Reference":
        other = Connect4Reference()
        other.board = [list(row) for row in self.board]
        other.moves = self.moves
        return other

    def to_play(self) -> int:
        return self.moves % 2

    def winner(self) -> int:
        for r in range(ROWS):
            for c in range(COLS):
                player = self.board[r][c]
                if player is None:
                    continue
                for dr, dc in DIRECTIONS:
                    cells = [(r + k * dr, c + k * dc) for k in range(CONNECT)]
                    if all(0 <= rr < ROWS and 0 <= cc < COLS and self.board[rr][cc] == player
                           for rr, cc in cells):
                        return player
        return -1

    def is_terminal(self) -> bool:
        return self.winner() >= 0 or self.moves == ROWS * COLS

    def legal_actions(self) -> List[int]:
        if self.is_terminal():
            return []
        return [c for c in range(COLS) if self.board[0][c] is None]

    def play(self, action: int) -> None:
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action}; legal: {self.legal_actions()}")
        row = max(r for r in range(ROWS) if self.board[r][action] is None)
        self.board[row][action] = self.to_play()
        self.moves += 1

    def to_text(self) -> str:
        symbol = {0: "X", 1: "O", None: "."}
        return "\n".join(" ".join(symbol[v] for v in row) for row in self.board)


def perft(game: Connect4Reference, depth: int) -> int:
    """Number of move sequences of length ``depth`` (finished games stop early and count 0)."""
    if depth == 0:
        return 1
    total = 0
    for action in game.legal_actions():
        child = game.copy()
        child.play(action)
        total += perft(child, depth - 1)
    return total
