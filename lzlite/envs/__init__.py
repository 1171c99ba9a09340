"""Environments: the single-game protocol, the board-game adapter and vector envs."""
from lzlite.envs.base import BaseEnv, EnvError
from lzlite.envs.board_game import BoardGameEnv

__all__ = ["BaseEnv", "EnvError", "BoardGameEnv"]
