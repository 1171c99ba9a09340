"""Single-player gymnasium environments (optional dependency: pip install 'lzlite[gym]')."""
from __future__ import annotations

from typing import Dict

from easydict import EasyDict

from lzlite.config import Range, at_least
from lzlite.registry import ENV_REGISTRY

__all__ = ["CartPoleEnv"]


@ENV_REGISTRY.register("cartpole")
class CartPoleEnv:
    """CartPole-v1 through gymnasium; stepped in batches by ``lzlite.envs.vector.GymVectorEnv``.

    The training workers only use the vector form; this class names the env and holds its defaults.
    """

    gym_env_id = "CartPole-v1"

    @staticmethod
    def default_config() -> EasyDict:
        return EasyDict(dict(
            env_id="CartPole-v1",  # gymnasium id
            max_episode_steps=500,  # episode cap (CartPole-v1's own limit is 500)
            continuous=False,  # LightZero compatibility; only discrete actions are supported
            collector_env_num=8,  # LightZero compatibility: the policy's collector_env_num is what is used
            evaluator_env_num=8,  # LightZero compatibility: see collector_env_num
            n_evaluator_episode=8,  # LightZero compatibility: the policy's eval_episodes is what is used
            stop_value=500.0,  # return at which an experiment counts as solved
            manager=dict(shared_memory=False),  # LightZero compatibility (env manager settings), ignored
        ))

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(max_episode_steps=at_least(1))


# LightZero's name for the same env, so its configs load unchanged.
ENV_REGISTRY.register("cartpole_lightzero")(CartPoleEnv)
