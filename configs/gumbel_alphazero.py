"""Gumbel AlphaZero base config: AlphaZero's (configs/alphazero.py) with the Gumbel root.

The Gumbel keys (max_num_considered_actions, c_visit, c_scale) keep the policy defaults, which are
configs/gumbel_muzero.py's values. zoo/<game>/gumbel_alphazero_config.py files derive from the game's
alphazero_config.py the same way.
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "alphazero",
    dict(policy=dict(search_rule="gumbel")),
    dict(policy=dict(type="gumbel_alphazero")),
)
