"""The single-game env for connect4 (see lzlite/envs/board_game.py for the observation and reward)."""
from lzlite.envs.board_game import BoardGameEnv
from lzlite.registry import ENV_REGISTRY

__all__ = ["Connect4Env"]


@ENV_REGISTRY.register("connect4")
class Connect4Env(BoardGameEnv):
    """connect4 as a LightZero-style env: `Connect4Env().reset()` -> {'observation', 'action_mask', 'to_play'}."""

    game_name = "connect4"
    symmetry = "mirror"
