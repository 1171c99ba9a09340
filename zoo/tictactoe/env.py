"""The single-game env for tictactoe (see lzlite/envs/board_game.py for the observation and reward)."""
from lzlite.envs.board_game import BoardGameEnv
from lzlite.registry import ENV_REGISTRY

__all__ = ["TicTacToeEnv"]


@ENV_REGISTRY.register("tictactoe")
class TicTacToeEnv(BoardGameEnv):
    """tictactoe as a LightZero-style env: `TicTacToeEnv().reset()` -> {'observation', 'action_mask', 'to_play'}."""

    game_name = "tictactoe"
    symmetry = "dihedral"
