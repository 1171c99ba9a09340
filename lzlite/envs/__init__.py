"""Environments: the single-game protocol, the board-game adapter, vector envs and games by name."""
from lzlite.envs.base import BaseEnv, EnvError, IllegalActionError
from lzlite.envs.board_game import BoardGameEnv

__all__ = ["BaseEnv", "EnvError", "IllegalActionError", "BoardGameEnv"]
