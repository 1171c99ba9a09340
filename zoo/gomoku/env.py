"""The single-game env for gomoku (see lzlite/envs/board_game.py for the observation and reward)."""
from lzlite.envs.board_game import BoardGameEnv
from lzlite.registry import ENV_REGISTRY

__all__ = ["GomokuEnv"]


@ENV_REGISTRY.register("gomoku")
class GomokuEnv(BoardGameEnv):
    """gomoku as a LightZero-style env: `GomokuEnv().reset()` -> {'observation', 'action_mask', 'to_play'}."""

    game_name = "gomoku"
    symmetry = "dihedral"
