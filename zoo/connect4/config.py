"""Connect Four default experiment: AlphaZero (see alphazero_config.py).

    python -m lzlite.entry --cfg zoo/connect4/config.py
"""
from zoo.connect4.alphazero_config import create_config, main_config  # noqa: F401
