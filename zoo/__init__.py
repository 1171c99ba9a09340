"""The game zoo: bitboard C++ cores, one batched binding, single-game envs and pure-Python references.

``import zoo`` registers every game's env in ``ENV_REGISTRY``. The batched API::

    g = zoo.make_batch_game('connect4')
    states = g.new_states(1024)                     # uint8 [1024, g.state_bytes]
    rewards, done = g.step(states, actions)         # actions int [1024], in place

Games: tictactoe (3x3), connect4 (7 columns x 6 rows), gomoku (9x9, freestyle: five or more wins).
"""
from zoo._zoo import GAME_NAMES, BatchGame, IllegalActionError, make_batch_game
from zoo.connect4.env import Connect4Env
from zoo.gomoku.env import GomokuEnv
from zoo.tictactoe.env import TicTacToeEnv

__all__ = [
    "GAME_NAMES",
    "BatchGame",
    "IllegalActionError",
    "make_batch_game",
    "TicTacToeEnv",
    "Connect4Env",
    "GomokuEnv",
]
