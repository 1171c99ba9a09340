"""Helpers shared by the zoo tests (a uniquely named module: tests/ has no packages)."""
from __future__ import annotations

from typing import Iterable

import numpy as np
from zoo.connect4.reference import Connect4Reference
from zoo.gomoku.reference import GomokuReference
from zoo.tictactoe.reference import TicTacToeReference

REFERENCES = {
    "tictactoe": TicTacToeReference,
    "connect4": Connect4Reference,
    "gomoku": GomokuReference,
}

# Two move orders reaching the same position (X's first and third moves swapped), per game.
TRANSPOSITIONS = {
    "tictactoe": ([0, 4, 8, 2], [8, 4, 0, 2]),
    "connect4": ([0, 3, 6, 3], [6, 3, 0, 3]),
    "gomoku": ([0, 40, 80, 64], [80, 40, 0, 64]),
}


def play(game, moves: Iterable[int]) -> np.ndarray:
    """A single state row [1, state_bytes] after ``moves`` from the start."""
    states = game.new_states(1)
    for a in moves:
        game.step(states, np.array([a]))
    return states


def random_actions(game, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per running row (0 for finished rows), int64 [N]."""
    mask = game.legal_mask(states)
    scores = np.where(mask, rng.random(mask.shape), -1.0)
    return scores.argmax(axis=1).astype(np.int64)


def reference_from_text(reference_cls, text: str):
    """A reference game holding the board drawn in ``text`` (the zoo's notation, top row first)."""
    ref = reference_cls()
    cells = [c for c in text if c in "XO."]
    assert len(cells) == ref.rows * ref.cols, "board text has the wrong number of cells"
    board = [[{"X": 0, "O": 1, ".": None}[cells[r * ref.cols + c]] for c in range(ref.cols)]
             for r in range(ref.rows)]
    ref.board = board if ref.rows > 3 else [v for row in board for v in row]
    ref.moves = len(cells) - cells.count(".")
    return ref
