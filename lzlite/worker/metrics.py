"""Play-quality metrics graded by exact solvers: the optimal-move rate over a set of positions."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from lzlite.envs.games import make_batch_game
from lzlite.envs.vector import BoardVectorEnv
from lzlite.registry import GRADED_POSITIONS_REGISTRY

__all__ = ["optimal_move_rate", "graded_positions", "losing_positions_vs_any_opponent"]


def graded_positions(game_name: str) -> Tuple[np.ndarray, np.ndarray]:
    """The positions a game's optimal-move rate is measured on, and their optimal moves.

    Each game that supports the metric registers a ``graded_positions()`` function under its name in
    ``GRADED_POSITIONS_REGISTRY`` (zoo/<game>/eval_positions.py; tic-tac-toe: every reachable position;
    Connect Four: a solved set).

    Returns:
        (states uint8 [M, state_bytes], optimal bool [M, A]).
    """
    if game_name not in GRADED_POSITIONS_REGISTRY.names():
        raise ValueError(f"game '{game_name}' has no graded positions (registered: "
                         f"{GRADED_POSITIONS_REGISTRY.names()}); set eval_optimal_move_rate=False")
    return GRADED_POSITIONS_REGISTRY.get(game_name)()


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
    game = make_batch_game(game_name)
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
