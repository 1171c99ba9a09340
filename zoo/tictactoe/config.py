"""Tic-tac-toe default experiment: AlphaZero, trained to perfect play on a laptop CPU in minutes.

    python -m lzlite.entry --cfg zoo/tictactoe/config.py
"""
from zoo.tictactoe.alphazero_config import create_config, main_config  # noqa: F401
