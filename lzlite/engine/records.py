"""Records: what one engine window returns, the moves of its finished games, ready for GameSegments.

Row i is the position before move i of the window (games back to back, in the order they started):

    obs             [R, P, Rows, Cols] float32  player-to-move view
    action          [R] int64                   the move played
    reward          [R] float32                 of that move, mover's view
    to_play         [R] int64                   player to move
    legal_mask      [R, A] bool
    root_value      [R] float32                 search value, player-to-move view
    predicted_value [R] float32                 the network's value of the root
    visit_counts    [R, A] int32                root children visits
    improved_policy [R, A] float32              PUCT: visit distribution; Gumbel: softmax(logits + sigma(completed Q))
    qvalues         [R, A] float32              root Q from the root's view; 0 where unvisited
    root_prior      [R, A] float32              the root prior the search used (after the Dirichlet noise)
    generation      [R] int32                   weights generation when the move's search began

and per game g (G games): ``game_start`` [G + 1] int64 row offsets (game g is rows game_start[g] ..
game_start[g + 1] - 1), ``game_id`` [G] int64 (unique in the engine, increasing), ``game_done`` [G] bool (always True: only finished games
are returned), ``game_winner`` [G] int8 (0 / 1, or -1 for a draw).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

__all__ = ["Records"]


@dataclass(frozen=True)
class Records:
    """The moves of one window's finished games (see the module docstring for the fields)."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    to_play: np.ndarray
    legal_mask: np.ndarray
    root_value: np.ndarray
    predicted_value: np.ndarray
    visit_counts: np.ndarray
    improved_policy: np.ndarray
    qvalues: np.ndarray
    root_prior: np.ndarray
    generation: np.ndarray
    game_start: np.ndarray
    game_id: np.ndarray
    game_done: np.ndarray
    game_winner: np.ndarray

    def __len__(self) -> int:
        return int(self.action.shape[0])

    @property
    def num_games(self) -> int:
        return int(self.game_id.shape[0])

    def games(self) -> Iterator[slice]:
        """The row slice of each game, in order."""
        for g in range(self.num_games):
            yield slice(int(self.game_start[g]), int(self.game_start[g + 1]))
