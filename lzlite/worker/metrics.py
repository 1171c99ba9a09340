"""Play-quality metrics graded by exact solvers: the optimal-move rate over a set of positions."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from lzlite.envs.vector import BoardVectorEnv

__all__ = ["reachable_positions", "optimal_move_mask", "optimal_move_rate", "graded_positions",
           "losing_positions_vs_any_opponent"]


def reachable_positions(game: Any, max_plies: Optional[int] = None) -> np.ndarray:
    """Every distinct non-terminal position reachable from the start (breadth-first, deduplicated by hash).

    Args:
        game: a zoo BatchGame.
        max_plies: stop expanding after this many plies (None: the whole game; only small games).

    Returns:
        uint8 [M, state_bytes] state rows (tic-tac-toe: 4520 positions).
    """
    frontier = game.new_states(1)
    found = [frontier]
    seen = set(game.hash(frontier).tolist())
    ply = 0
    while len(frontier) and (max_plies is None or ply < max_plies):
        parent, action = np.nonzero(game.legal_mask(frontier))
        children = np.ascontiguousarray(frontier[parent])
        game.step(children, action.astype(np.int32))
        keep = ~game.is_terminal(children)
        hashes = game.hash(children)
        _, first = np.unique(hashes, return_index=True)
        unique = np.zeros(len(children), dtype=bool)
        unique[first] = True
        new = np.array([h not in seen for h in hashes.tolist()], dtype=bool)
        frontier = np.ascontiguousarray(children[keep & unique & new])
        seen.update(game.hash(frontier).tolist())
        found.append(frontier)
        ply += 1
    return np.concatenate(found)


def optimal_move_mask(game_name: str, states: np.ndarray) -> np.ndarray:
    """bool [M, A]: the moves that keep the game-theoretic value, per the game's exact solver."""
    from zoo.bots import optimal_moves

    mask = np.zeros((len(states), _num_actions(game_name)), dtype=bool)
    for i, row in enumerate(states):
        mask[i, list(optimal_moves(game_name, row))] = True
    return mask


def _num_actions(game_name: str) -> int:
    import zoo

    return int(zoo.make_batch_game(game_name).num_actions)


def graded_positions(game_name: str) -> Tuple[np.ndarray, np.ndarray]:
    """The positions a game's optimal-move rate is measured on, and their optimal moves.

    Each game that supports the metric provides ``zoo/<game>/eval_positions.py`` with a
    ``graded_positions()`` function (tic-tac-toe: every reachable position; Connect Four: a solved set).

    Returns:
        (states uint8 [M, state_bytes], optimal bool [M, A]).
    """
    import importlib

    try:
        module = importlib.import_module(f"zoo.{game_name}.eval_positions")
    except ModuleNotFoundError:
        raise ValueError(f"game '{game_name}' has no graded positions (zoo/{game_name}/eval_positions.py); "
                         f"set eval_optimal_move_rate=False") from None
    return module.graded_positions()


def optimal_move_rate(policy: Any, game_name: str, states: np.ndarray, optimal: np.ndarray,
                      batch_size: int = 512, seed: int = 0) -> float:
    """Fraction of ``states`` where the greedy policy (eval-mode search) plays a move in ``optimal``."""
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, len(states), batch_size):
        chunk = states[start:start + batch_size]
        venv = BoardVectorEnv(game_name, len(chunk))
        venv.states[:] = chunk
        out = policy.act(venv, np.arange(len(chunk)), rng, mode="eval")
        hits += int(optimal[start + np.arange(len(chunk)), out.action].sum())
    return hits / max(1, len(states))


def losing_positions_vs_any_opponent(policy: Any, game_name: str, agent_player: int, seed: int = 0) -> int:
    """Terminal positions the greedy policy loses, over EVERY line of opponent play (small games only).

    Walks the game tree level by level: where the agent is to move it plays its eval-mode search move,
    where the opponent is to move every legal move is followed. Returns the number of distinct terminal
    positions the opponent has won; 0 means no opponent, perfect or not, can beat the agent from this side.
    """
    import zoo

    game = zoo.make_batch_game(game_name)
    rng = np.random.default_rng(seed)
    frontier = game.new_states(1)
    lost, seen = 0, set()
    while len(frontier):
        to_play = game.to_play(frontier)
        mine = np.flatnonzero(to_play == agent_player)
        theirs = np.flatnonzero(to_play != agent_player)
        parts = []
        if len(mine):
            venv = BoardVectorEnv(game_name, len(mine))
            venv.states[:] = frontier[mine]
            out = policy.act(venv, np.arange(len(mine)), rng, mode="eval")
            ch = np.ascontiguousarray(frontier[mine])
            game.step(ch, out.action.astype(np.int32))
            parts.append(ch)
        if len(theirs):
            parent, action = np.nonzero(game.legal_mask(frontier[theirs]))
            ch = np.ascontiguousarray(frontier[theirs][parent])
            game.step(ch, action.astype(np.int32))
            parts.append(ch)
        children = np.concatenate(parts)
        hashes = game.hash(children).tolist()
        keep = np.zeros(len(children), dtype=bool)
        for i, h in enumerate(hashes):
            if h not in seen:
                seen.add(h)
                keep[i] = True
        children = children[keep]
        done = game.is_terminal(children)
        lost += int(np.count_nonzero(done & (game.winner(children) == 1 - agent_player)))
        frontier = np.ascontiguousarray(children[~done])
    return lost
