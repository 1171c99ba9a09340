"""Board games by name: the batched binding and the bots that a game package registers.

lzlite never imports a game package. The package (the zoo, or your own) imports lzlite and registers,
per game name:

- ``GAME_REGISTRY``: ``factory(game_name) -> BatchGame``, the batched binding (zoo/__init__.py);
- ``BOT_REGISTRY``: ``make_bot(game_name, kind, **kwargs) -> bot`` (zoo/bots.py);
- ``GRADED_POSITIONS_REGISTRY``: ``() -> (states, optimal)`` where the game has an optimal-move rate
  (zoo/<game>/eval_positions.py; read by lzlite/worker/metrics.py).

An unknown name makes the registry import lzlite's builtin components, the zoo among them
(lzlite/registry.py), so ``make_batch_game('connect4')`` works without an ``import zoo`` first.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from lzlite.registry import BOT_REGISTRY, GAME_REGISTRY

__all__ = ["make_batch_game", "make_bot", "reachable_positions"]


def make_batch_game(game_name: str) -> Any:
    """The batched binding of a registered game (a zoo ``BatchGame``: new_states, step, legal_mask, ...)."""
    return GAME_REGISTRY.get(game_name)(game_name)


def make_bot(game_name: str, kind: str, **kwargs: Any) -> Any:
    """A bot of ``kind`` (zoo: 'random', 'rule', 'alpha_beta', 'perfect') for ``game_name``.

    The bot acts on rows of the game's binding: ``act_batch(states uint8 [N, S]) -> int32 [N]`` (-1 for
    finished games) and ``act(state_row) -> int``. ``kwargs`` go to the game's bot factory (seed; depth
    for 'alpha_beta'); an unknown kind is the factory's error.
    """
    return BOT_REGISTRY.get(game_name)(game_name, kind, **kwargs)


def reachable_positions(game: Any, max_plies: Optional[int] = None) -> np.ndarray:
    """Every distinct non-terminal position reachable from the start (breadth-first, deduplicated by hash).

    Args:
        game: a batched binding (``make_batch_game``).
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
