"""Gumbel AlphaZero base config: AlphaZero's (configs/alphazero.py) with the Gumbel root.

zoo/<game>/gumbel_alphazero_config.py files derive from the game's alphazero_config.py the same way.
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "alphazero",
    dict(
        policy=dict(
            search_rule="gumbel",
            num_simulations=16,
            max_num_considered_actions=16,
            c_visit=50.0,
            c_scale=0.1,
        ),
    ),
    dict(policy=dict(type="gumbel_alphazero")),
)
