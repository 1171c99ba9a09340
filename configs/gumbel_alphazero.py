"""Gumbel AlphaZero base config: AlphaZero's (configs/alphazero.py) with the Gumbel root (the policy's default).

zoo/<game>/gumbel_alphazero_config.py files derive from the game's alphazero_config.py the same way.
"""
from lzlite.config import extend_base

main_config, create_config = extend_base("alphazero", dict(), dict(policy=dict(type="gumbel_alphazero")))
