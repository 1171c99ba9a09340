"""Gumbel MuZero base config: MuZero's (configs/muzero.py) with the Gumbel root (the policy's default).

zoo/<game>/gumbel_muzero_config.py files derive from the game's muzero_config.py the same way.
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "muzero",
    dict(policy=dict(num_simulations=16)),  # sequential halving needs fewer simulations than PUCT
    dict(policy=dict(type="gumbel_muzero")),
)
