"""What a collector reports of the games it plays: one ``MoveEvent`` per decision, given to a ``MoveHook``.

The seam (docs/architecture.md, "Collectors <-> telemetry"): ``collect(..., on_move=hook)`` calls ``hook(event)`` at
every decision of the first ``hook.games`` games of each collect (board games only). Without a hook a collector
builds nothing. The run logger's hook queues the event for Redis (``lzlite:run:<run>:games``), where the web UI
reads it.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Callable, List

import numpy as np

__all__ = ["MoveEvent", "MoveHook", "cells_from_observation"]


@dataclasses.dataclass
class MoveEvent:
    """One decision of a game: the position searched, the search's view of each legal move, the move played.

    Attributes:
        game_id: unique in the run.
        game: the game's registry name ('tictactoe', 'connect4', 'gomoku').
        ply: the decision's index in the game (0: the first recorded move).
        rows, cols: the board's shape.
        cells: [rows * cols] the position searched (before ``action``), row-major, top row first: -1 empty,
            0 / 1 a stone of player 0 / 1.
        to_play: the player to move (0 / 1).
        action: the move played (a bot's, in a game against a collect bot).
        legal: the legal actions, ascending; ``visits``, ``q`` and ``prior`` hold one entry per legal action.
        visits: search visits per legal action.
        q: each action's value after the search, from the view of the player to move (0 where unvisited).
        prior: the root prior per legal action (after any root noise).
        root_value: the search's value of the position for the player to move.
        done: whether ``action`` ended the game.
        winner: 0 / 1 once ``action`` won the game, else -1.
    """

    game_id: str
    game: str
    ply: int
    rows: int
    cols: int
    cells: List[int]
    to_play: int
    action: int
    legal: List[int]
    visits: List[int]
    q: List[float]
    prior: List[float]
    root_value: float
    done: bool
    winner: int

    def to_json(self) -> str:
        """The event as one JSON object (the Redis stream's ``event`` field and the bridge's ``move`` frame)."""
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))


class MoveHook:
    """A collector's ``on_move``: called with each ``MoveEvent`` of the first ``games`` games of every collect.

    Args:
        games: how many games of each collect to report (``logger.spectate_games``).
        sink: what receives each event (must return at once: it runs inside the collect loop).
        prefix: put before every ``game_id`` (an actor's id, so ids stay unique across actors).
    """

    def __init__(self, games: int, sink: Callable[[MoveEvent], None], prefix: str = "") -> None:
        if games < 0:
            raise ValueError(f"games must be >= 0, got {games}")
        self.games = int(games)
        self.sink = sink
        self.prefix = prefix

    def __call__(self, event: MoveEvent) -> None:
        if self.prefix:
            event.game_id = self.prefix + event.game_id
        self.sink(event)


def cells_from_observation(obs: np.ndarray, to_play: np.ndarray) -> np.ndarray:
    """Boards as cells from board-game observations.

    Args:
        obs: float [N, P, R, C]; plane 0 holds the stones of the player to move, plane 1 the opponent's (the zoo
            games' observation, zoo/common/game.h).
        to_play: int [N], the player to move (0 / 1).
    Returns:
        int8 [N, R * C]: -1 empty, 0 / 1 a stone of player 0 / 1, row-major from the top row.
    """
    n = len(obs)
    mover = np.asarray(to_play, dtype=np.int8)[:, None]
    own = obs[:, 0].reshape(n, -1) > 0.5
    opp = obs[:, 1].reshape(n, -1) > 0.5
    cells = np.where(own, mover, np.int8(-1))
    return np.where(opp, 1 - mover, cells).astype(np.int8)
