"""Tic-tac-toe, Gumbel MuZero: Gumbel root sampling, sequential halving, improved-policy targets.

    python -m lzlite.entry --cfg zoo/tictactoe/gumbel_muzero_config.py
"""
from lzlite.config import deep_update
from zoo.tictactoe import muzero_config as _muzero

main_config = deep_update(_muzero.main_config, dict(
    exp_name="tictactoe_gumbel_muzero",
    policy=dict(search_rule="gumbel", num_simulations=16, max_num_considered_actions=9,
                # the learner is ~90% of the time (K=3 unrolls): batch 128 halves it per env step, and met
                # the bar at 41.8k env steps (batch 256: 51.8k)
                batch_size=128),
))
create_config = deep_update(_muzero.create_config, dict(policy=dict(type="gumbel_muzero")))
