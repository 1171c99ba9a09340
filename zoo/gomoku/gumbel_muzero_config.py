"""Gomoku 9x9, Gumbel MuZero (five or more in a row wins); evaluated against depth-2 alpha-beta.

    python -m lzlite.entry --cfg zoo/gomoku/gumbel_muzero_config.py
"""
from lzlite.config import deep_update
from zoo.gomoku import muzero_config as _muzero

main_config = deep_update(_muzero.main_config, dict(
    exp_name="gomoku_gumbel_muzero",
    policy=dict(search_rule="gumbel", num_simulations=32, max_num_considered_actions=16),
))
create_config = deep_update(_muzero.create_config, dict(policy=dict(type="gumbel_muzero")))
