"""Connect Four, Gumbel MuZero: few simulations suffice thanks to sequential halving.

    python -m lzlite.entry --cfg zoo/connect4/gumbel_muzero_config.py
"""
from lzlite.config import deep_update
from zoo.connect4 import muzero_config as _muzero

main_config = deep_update(_muzero.main_config, dict(
    exp_name="connect4_gumbel_muzero",
    policy=dict(search_rule="gumbel", num_simulations=16, max_num_considered_actions=7),
))
create_config = deep_update(_muzero.create_config, dict(policy=dict(type="gumbel_muzero")))
