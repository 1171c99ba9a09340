"""The single-game environment protocol (a readable, LightZero-compatible view of one game).

Workers use the batched vector envs (lzlite/envs/vector.py); this protocol is for humans, tests, the
play CLI and LightZero-style code that expects one env object per game.
"""
from __future__ import annotations

import abc
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

__all__ = ["BaseEnv", "EnvError", "IllegalActionError"]


class EnvError(RuntimeError):
    """Misuse of an env: stepping a finished game, or stepping before reset()."""


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in the game it was given to.

    Defined here, with the env contract, and raised by the game bindings (zoo/_zoo.pyx re-exports it as
    ``zoo.IllegalActionError``), so lzlite can catch it without importing a game package.
    """


class BaseEnv(abc.ABC):
    """One game, stepped one action at a time.

    Observations are dicts (LightZero style) so algorithms find the legal mask and the player to
    move beside the planes. Rewards are from the view of the player who just moved.
    """

    @abc.abstractmethod
    def reset(self, seed: Optional[int] = None) -> Dict[str, Any]:
        """Start a new game; ``seed`` (if given) reseeds the env's generator. Returns the observation."""

    @abc.abstractmethod
    def step(self, action: int) -> Tuple[Dict[str, Any], float, bool, Dict[str, Any]]:
        """Play ``action``; returns (observation, reward, done, info)."""

    @abc.abstractmethod
    def legal_actions(self) -> List[int]:
        """The legal actions of the player to move (empty once the game is over)."""

    @abc.abstractmethod
    def clone(self) -> "BaseEnv":
        """An independent copy of this env (same position, same generator state)."""

    @abc.abstractmethod
    def render(self) -> str:
        """The position as text."""

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed the env's generator (LightZero's signature; ``dynamic_seed`` is accepted and unused:
        the generator advances on its own between episodes)."""
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)

    def close(self) -> None:
        """Release resources (none by default)."""
