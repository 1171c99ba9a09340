"""The game zoo: bitboard C++ cores, one batched binding, single-game envs and pure-Python references.

``import zoo`` registers, for every game, its binding in ``GAME_REGISTRY``, its env in ``ENV_REGISTRY``,
its bots in ``BOT_REGISTRY`` and, where it has them, its graded positions in ``GRADED_POSITIONS_REGISTRY``
(lzlite/registry.py). lzlite finds them there by game name and never imports the zoo itself. The
batched API::

    g = zoo.make_batch_game('connect4')
    states = g.new_states(1024)                     # uint8 [1024, g.state_bytes]
    rewards, done = g.step(states, actions)         # actions int [1024], in place

Games: tictactoe (3x3), connect4 (7 columns x 6 rows), gomoku (9x9, freestyle: five or more wins).
"""
from lzlite.registry import GAME_REGISTRY
from zoo import bots  # noqa: F401  (registers every game's bots)
from zoo._zoo import GAME_NAMES, BatchGame, IllegalActionError, make_batch_game
from zoo.connect4 import eval_positions as _connect4_positions  # noqa: F401  (registers graded positions)
from zoo.connect4.env import Connect4Env
from zoo.gomoku.env import GomokuEnv
from zoo.tictactoe import eval_positions as _tictactoe_positions  # noqa: F401  (registers graded positions)
from zoo.tictactoe.env import TicTacToeEnv

for _name in GAME_NAMES:
    GAME_REGISTRY.register(_name)(make_batch_game)  # called as make_batch_game(name)

__all__ = [
    "GAME_NAMES",
    "BatchGame",
    "IllegalActionError",
    "make_batch_game",
    "TicTacToeEnv",
    "Connect4Env",
    "GomokuEnv",
]
