"""Gomoku 9x9 default experiment: AlphaZero (see alphazero_config.py).

    python -m lzlite.entry --cfg zoo/gomoku/config.py
"""
from zoo.gomoku.alphazero_config import create_config, main_config  # noqa: F401
