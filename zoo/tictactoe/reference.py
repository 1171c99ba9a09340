"""A slow, obvious pure-Python tic-tac-toe, independent of the C++ core, used to cross-check it.

The board is a list of 9 cells (row-major, top row first): 0 = X (moves first), 1 = O, None = empty.
"""
from __future__ import annotations

from typing import List, Optional

LINES = [
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
]


class TicTacToeReference:
    """One game of tic-tac-toe. Actions are cells 0..8."""

    rows, cols, num_actions = 3, 3, 9

    def __init__(self) -> None:
        self.board: List[Optional[int]] = [None] * 9
        self.moves = 0

    def copy(self) -> "TicTacToeReference":
        other = TicTacToeReference()
        other.board = list(self.board)
        other.moves = self.moves
        return other

    def to_play(self) -> int:
        return self.moves % 2

    def winner(self) -> int:
        for a, b, c in LINES:
            if self.board[a] is not None and self.board[a] == self.board[b] == self.board[c]:
                return self.board[a]
        return -1

    def is_terminal(self) -> bool:
        return self.winner() >= 0 or self.moves == 9

    def legal_actions(self) -> List[int]:
        if self.is_terminal():
            return []
        return [i for i in range(9) if self.board[i] is None]

    def play(self, action: int) -> None:
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action}; legal: {self.legal_actions()}")
        self.board[action] = self.to_play()
        self.moves += 1

    def to_text(self) -> str:
        symbol = {0: "X", 1: "O", None: "."}
        return "\n".join(" ".join(symbol[self.board[r * 3 + c]] for c in range(3)) for r in range(3))


def perft(game: TicTacToeReference, depth: int) -> int:
    """Number of move sequences of length ``depth`` (finished games stop early and count 0)."""
    if depth == 0:
        return 1
    total = 0
    for action in game.legal_actions():
        child = game.copy()
        child.play(action)
        total += perft(child, depth - 1)
    return total
