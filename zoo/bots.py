"""Bots for every zoo game, and the exact Connect Four solver.

Every bot acts on rows of the batched game binding (``zoo.make_batch_game(name)``): ``act(state_row)``
takes one ``uint8 [state_bytes]`` row and returns an action; ``act_batch(states)`` takes
``uint8 [N, state_bytes]`` and returns ``int32 [N]`` with -1 for finished games. Bots own a seeded
generator that every call advances, so a fixed seed and call sequence replays exactly.

    g = zoo.make_batch_game('connect4')
    bot = make_bot('connect4', 'alpha_beta', depth=4, seed=0)
    actions = bot.act_batch(g.new_states(8))          # int32 [8]

Kinds: 'random' (uniform legal), 'rule' (win now, else block, else centre/adjacency), 'alpha_beta'
(depth-limited negamax with a line-count heuristic; depth=-1 searches to the end) and 'perfect'
(tictactoe: full search; connect4: the exact solver; gomoku: not available).
"""
from __future__ import annotations

import difflib
from typing import Protocol

import numpy as np

from lzlite.registry import BOT_REGISTRY
from zoo import _bots
from zoo._zoo import make_batch_game

__all__ = [
    "Bot",
    "RandomBot",
    "RuleBot",
    "AlphaBetaBot",
    "PerfectBot",
    "Connect4Solver",
    "optimal_moves",
    "optimal_move_mask",
    "make_bot",
    "BOT_KINDS",
]

BOT_KINDS = ("random", "rule", "alpha_beta", "perfect")


class Bot(Protocol):
    """What evaluators need from a bot."""

    game_name: str

    def act(self, state_row: np.ndarray) -> int:
        """Action for one live state row uint8 [state_bytes]."""

    def act_batch(self, states: np.ndarray) -> np.ndarray:
        """int32 [N] actions for uint8 [N, state_bytes]; -1 for finished games."""


def _live_row(game_name: str, state_row: np.ndarray) -> np.ndarray:
    """One validated row as uint8 [1, state_bytes]; a finished game is an error."""
    rows = _bots.as_rows(game_name, state_row, "state_row")
    if rows.shape[0] != 1:
        raise ValueError(f"state_row must be a single {game_name} row, got {rows.shape[0]} rows; "
                         f"use act_batch for several")
    if _bots.is_terminal_rows(game_name, rows)[0]:
        raise ValueError(f"the {game_name} game in state_row is already finished; there is no move to "
                         f"make (act_batch returns -1 for such rows)")
    return rows


class _NativeBotBase:
    """A bot run by the C++ batch loop (common/bots.h)."""

    def __init__(self, game_name: str, kind: str, depth: int, seed: int):
        self._native = _bots.NativeBot(game_name, kind, depth, seed)
        self.game_name = game_name

    def act(self, state_row: np.ndarray) -> int:
        return int(self._native.act_batch(_live_row(self.game_name, state_row))[0])

    def act_batch(self, states: np.ndarray) -> np.ndarray:
        return self._native.act_batch(states)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game_name!r})"


class RandomBot(_NativeBotBase):
    """Uniform over legal moves.

    Args:
        game_name: 'tictactoe', 'connect4' or 'gomoku'.
        seed: generator seed.
    """

    def __init__(self, game_name: str, seed: int = 0):
        super().__init__(game_name, "random", 0, seed)


class RuleBot(_NativeBotBase):
    """Takes an immediate win, else blocks the opponent's immediate win, else prefers cells next to
    stones (own more than the opponent's) and near the centre; ties broken at random.

    Args:
        game_name: 'tictactoe', 'connect4' or 'gomoku'.
        seed: generator seed for tie-breaks.
    """

    def __init__(self, game_name: str, seed: int = 0):
        super().__init__(game_name, "rule", 0, seed)


class AlphaBetaBot(_NativeBotBase):
    """Negamax with alpha-beta to a fixed depth; leaves scored by open-line counts; the faster win
    (slower loss) preferred; equal best moves broken at random. Gomoku only considers cells within
    distance 2 of a stone.

    Args:
        game_name: 'tictactoe', 'connect4' or 'gomoku'.
        depth: plies to search, >= 1; -1 searches to the end of the game (only tictactoe is small
            enough for that).
        seed: generator seed for tie-breaks.
    """

    def __init__(self, game_name: str, depth: int = 2, seed: int = 0):
        if depth == 0 or depth < -1:
            raise ValueError(f"depth must be >= 1, or -1 for a full search; got {depth}")
        super().__init__(game_name, "alpha_beta", depth, seed)
        self.depth = depth

    def __repr__(self) -> str:
        return f"AlphaBetaBot({self.game_name!r}, depth={self.depth})"


class Connect4Solver:
    """Exact Connect Four solver (zoo/connect4/solver.h); the transposition table persists across calls.

    Score, from the view of the player to move: 0 draw; +k a win where k = 22 - the number of stones
    the mover has on the board after its winning move (18: wins with its 4th stone, 1: with its 21st);
    -k a loss, k counted for the opponent. Positions with 10-12 stones or more take milliseconds to a
    fraction of a second; the first few plies of the game can take minutes.

    Args:
        tt_log2: log2 of the transposition-table entries (8 bytes each; 22 -> 32 MiB).
    """

    num_actions = 7

    def __init__(self, tt_log2: int = 22):
        self._solver = _bots.C4Solver(tt_log2)

    def score(self, state_row: np.ndarray) -> int:
        """Exact score of a live position for the player to move (positive: the mover wins)."""
        return int(self._solver.score(state_row))

    def move_scores(self, state_row: np.ndarray) -> np.ndarray:
        """float64 [7]: the score for the player to move of each column played now; nan if illegal."""
        scores, legal = self._solver.move_scores(state_row)
        return np.where(legal, scores.astype(np.float64), np.nan)

    def optimal_moves(self, state_row: np.ndarray) -> list[int]:
        """Columns with the best exact score (the fastest win / slowest loss), ascending."""
        scores = self.move_scores(state_row)
        return [int(c) for c in np.flatnonzero(scores == np.nanmax(scores))]

    def move_values(self, state_row: np.ndarray) -> np.ndarray:
        """float64 [7]: each column's value for the player to move, +1 win / 0 draw / -1 loss under perfect
        play (speed ignored, so faster than ``move_scores``); nan if illegal."""
        signs, legal = self._solver.move_scores(state_row, weak=True)
        return np.where(legal, np.sign(signs).astype(np.float64), np.nan)

    def value_preserving_moves(self, state_row: np.ndarray) -> list[int]:
        """Columns that keep the position's win / draw / loss value (speed ignored), ascending."""
        signs, legal = self._solver.move_scores(state_row, weak=True)
        best = signs[legal].max()
        return [int(c) for c in np.flatnonzero(legal & (signs == best))]

    @property
    def nodes(self) -> int:
        """Positions searched so far (a speed counter)."""
        return self._solver.nodes


class PerfectBot:
    """Plays a best move by the game-theoretic value, the fastest win (slowest loss) first; random
    tie-break among equals. tictactoe: full-depth alpha-beta; connect4: the exact solver (slow in the
    first few plies); gomoku: not available.

    Args:
        game_name: 'tictactoe' or 'connect4'.
        seed: generator seed for tie-breaks.
        tt_log2: connect4 solver table size (see Connect4Solver).
    """

    def __init__(self, game_name: str, seed: int = 0, tt_log2: int = 22):
        self.game_name = game_name
        if game_name == "tictactoe":
            self._native = _bots.NativeBot(game_name, "alpha_beta", -1, seed)
        elif game_name == "connect4":
            self._solver = Connect4Solver(tt_log2)
            self._rng = np.random.default_rng(seed)
        elif game_name == "gomoku":
            raise ValueError("no perfect bot for gomoku (9x9 is not solved here); use "
                             "AlphaBetaBot('gomoku', depth=2 or 3) instead")
        else:
            raise ValueError(f"unknown game {game_name!r}; PerfectBot supports ['tictactoe', 'connect4']")

    def act(self, state_row: np.ndarray) -> int:
        rows = _live_row(self.game_name, state_row)
        if self.game_name == "tictactoe":
            return int(self._native.act_batch(rows)[0])
        return int(self._rng.choice(self._solver.optimal_moves(rows)))

    def act_batch(self, states: np.ndarray) -> np.ndarray:
        if self.game_name == "tictactoe":
            return self._native.act_batch(states)
        rows = _bots.as_rows(self.game_name, states)
        done = _bots.is_terminal_rows(self.game_name, rows)
        return np.array([-1 if d else self.act(r) for r, d in zip(rows, done)], dtype=np.int32)

    def __repr__(self) -> str:
        return f"PerfectBot({self.game_name!r})"


def optimal_moves(game_name: str, state_row: np.ndarray) -> list[int]:
    """Moves that keep the game-theoretic value (win / draw / loss) of a live position, ascending.

    tictactoe: full-depth search; connect4: the exact solver (a fresh one per call, so build a
    Connect4Solver yourself when calling this many times); gomoku: not available. This is the
    reference of the "optimal move rate" metric: any move in the list counts as optimal.
    """
    if game_name == "tictactoe":
        _live_row(game_name, state_row)
        return [int(a) for a in np.flatnonzero(_bots.full_search_optimal_mask(game_name, state_row))]
    if game_name == "connect4":
        return Connect4Solver(tt_log2=20).value_preserving_moves(state_row)
    if game_name == "gomoku":
        raise ValueError("optimal moves are not available for gomoku (unsolved at this size); use "
                         "'tictactoe' or 'connect4'")
    raise ValueError(f"unknown game {game_name!r}; optimal_moves supports ['tictactoe', 'connect4']")


def optimal_move_mask(game_name: str, states: np.ndarray) -> np.ndarray:
    """bool [M, A]: ``optimal_moves`` of each live row of ``states`` uint8 [M, state_bytes]."""
    mask = np.zeros((len(states), make_batch_game(game_name).num_actions), dtype=bool)
    for i, row in enumerate(states):
        mask[i, optimal_moves(game_name, row)] = True
    return mask


def make_bot(game_name: str, kind: str, **kwargs) -> Bot:
    """Build a bot by kind name.

    Args:
        game_name: 'tictactoe', 'connect4' or 'gomoku'.
        kind: one of BOT_KINDS ('random', 'rule', 'alpha_beta', 'perfect').
        **kwargs: passed to the class (seed; depth for 'alpha_beta').
    """
    classes = {"random": RandomBot, "rule": RuleBot, "alpha_beta": AlphaBetaBot, "perfect": PerfectBot}
    if kind not in classes:
        close = difflib.get_close_matches(str(kind), BOT_KINDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown bot kind {kind!r}; expected one of {list(BOT_KINDS)}{hint}")
    return classes[kind](game_name, **kwargs)


for _game in _bots.GAMES:
    BOT_REGISTRY.register(_game)(make_bot)  # lzlite.envs.games.make_bot looks it up by game name
