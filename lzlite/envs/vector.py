"""Vector envs: many games stepped at once, the collector's and evaluator's view of an environment.

``BoardVectorEnv`` holds n board games as rows of one uint8 state array and steps them all with one
call into the zoo's C++ binding. ``GymVectorEnv`` wraps n single-player gymnasium envs (CartPole).
Both expose the same small API, so workers never branch on the kind of game.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from lzlite.envs.games import make_batch_game
from lzlite.registry import ENV_REGISTRY

__all__ = ["VectorEnv", "BoardVectorEnv", "GymVectorEnv", "make_vector_env"]


class VectorEnv:
    """The shared API (documented here; see the two implementations).

    Attributes:
        num_envs: n.
        num_actions: A (full action space).
        obs_shape: shape of one observation.
        value_sign: -1.0 for two-player alternating zero-sum games, +1.0 for single-player.
        done: bool [n], True for finished games until they are reset.
    """

    num_envs: int
    num_actions: int
    obs_shape: Tuple[int, ...]
    value_sign: float
    two_player: bool

    def reset(self, idx: Optional[np.ndarray] = None) -> None: ...
    def observe(self) -> np.ndarray: ...  # float32 [n, *obs_shape]
    def legal_mask(self) -> np.ndarray: ...  # bool [n, A]
    def to_play(self) -> np.ndarray: ...  # int [n] (0/1; -1 for single-player)
    def step(self, actions: np.ndarray, idx: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]: ...


class BoardVectorEnv(VectorEnv):
    """n board games of one zoo game, held in a uint8 state array [n, state_bytes]."""

    two_player = True
    value_sign = -1.0

    def __init__(self, game_name: str, num_envs: int) -> None:
        self.game = make_batch_game(game_name)
        self.game_name = game_name
        self.num_envs = int(num_envs)
        self.num_actions = int(self.game.num_actions)
        self.obs_shape = tuple(int(x) for x in self.game.obs_shape)
        self.states = self.game.new_states(self.num_envs)
        self.done = np.zeros(self.num_envs, dtype=bool)

    def reset(self, idx: Optional[np.ndarray] = None) -> None:
        if idx is None:
            self.game.reset(self.states)
            self.done[:] = False
        else:
            idx = np.asarray(idx, dtype=np.int64)
            self.game.reset(self.states, idx)
            self.done[idx] = False

    def observe(self) -> np.ndarray:
        return self.game.observe(self.states)

    def legal_mask(self) -> np.ndarray:
        return self.game.legal_mask(self.states)

    def to_play(self) -> np.ndarray:
        return self.game.to_play(self.states).astype(np.int64)

    def step(self, actions: np.ndarray, idx: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
        """Play ``actions`` in games ``idx`` (all when None); returns (reward for the mover, done) for them."""
        if idx is None:
            rewards, done = self.game.step(self.states, np.asarray(actions, dtype=np.int32))
            self.done |= done
            return rewards, done
        idx = np.asarray(idx, dtype=np.int64)
        sub = np.ascontiguousarray(self.states[idx])
        rewards, done = self.game.step(sub, np.asarray(actions, dtype=np.int32))
        self.states[idx] = sub
        self.done[idx] |= done
        return rewards, done

    def winner(self) -> np.ndarray:
        return self.game.winner(self.states).astype(np.int64)


class GymVectorEnv(VectorEnv):
    """n single-player gymnasium envs with discrete actions (e.g. CartPole-v1), stepped in a loop."""

    two_player = False
    value_sign = 1.0

    def __init__(self, env_id: str, num_envs: int, seed: int = 0, max_episode_steps: Optional[int] = None) -> None:
        try:
            import gymnasium as gym  # an optional dependency (lzlite[gym]): imported only for gym envs
        except ImportError as e:
            raise ImportError("gymnasium is needed for gym envs: pip install 'lzlite[gym]'") from e
        kwargs = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
        self.envs: List[Any] = [gym.make(env_id, **kwargs) for _ in range(num_envs)]
        space = self.envs[0].action_space
        if not hasattr(space, "n"):
            raise ValueError(f"{env_id}: only discrete action spaces are supported, got {space}")
        self.num_envs = int(num_envs)
        self.num_actions = int(space.n)
        self.obs_shape = tuple(self.envs[0].observation_space.shape)
        self._obs = np.zeros((self.num_envs, *self.obs_shape), dtype=np.float32)
        self.done = np.zeros(self.num_envs, dtype=bool)
        self._seed = int(seed)
        self._episodes = 0

    def reset(self, idx: Optional[np.ndarray] = None) -> None:
        for i in (range(self.num_envs) if idx is None else np.asarray(idx).tolist()):
            obs, _ = self.envs[i].reset(seed=self._seed * 100003 + self._episodes)
            self._episodes += 1
            self._obs[i] = obs
            self.done[i] = False

    def observe(self) -> np.ndarray:
        return self._obs.copy()

    def legal_mask(self) -> np.ndarray:
        return np.ones((self.num_envs, self.num_actions), dtype=bool)

    def to_play(self) -> np.ndarray:
        return np.full(self.num_envs, -1, dtype=np.int64)

    def step(self, actions: np.ndarray, idx: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
        idx = np.arange(self.num_envs) if idx is None else np.asarray(idx, dtype=np.int64)
        actions = np.asarray(actions, dtype=np.int64)
        rewards = np.zeros(len(idx), dtype=np.float32)
        done = np.zeros(len(idx), dtype=bool)
        for j, i in enumerate(idx.tolist()):
            if not 0 <= actions[j] < self.num_actions:
                raise ValueError(f"env {i}: illegal action {int(actions[j])}; legal actions are 0..{self.num_actions - 1}")
            if self.done[i]:
                raise RuntimeError(f"env {i} is done; reset it before stepping")
            obs, r, terminated, truncated, _ = self.envs[i].step(int(actions[j]))
            self._obs[i] = obs
            rewards[j] = r
            done[j] = terminated or truncated
        self.done[idx] |= done
        return rewards, done


def make_vector_env(env_cfg: Any, env_type: str, num_envs: int, seed: int = 0) -> VectorEnv:
    """Build the vector env for a compiled ``env`` config section and its registered type name."""
    env_cls = ENV_REGISTRY.get(env_type)
    game_name = getattr(env_cls, "game_name", None)
    if game_name is not None:
        return BoardVectorEnv(game_name, num_envs)
    env_id = getattr(env_cls, "gym_env_id", None) or env_cfg.get("env_id")
    if env_id is None:
        raise ValueError(f"env '{env_type}' is neither a zoo board game nor a gymnasium env (no env_id)")
    return GymVectorEnv(env_id, num_envs, seed=seed, max_episode_steps=env_cfg.get("max_episode_steps"))
