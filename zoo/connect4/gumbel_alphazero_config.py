"""Connect Four, Gumbel AlphaZero: the AlphaZero recipe with Gumbel MuZero's root over the real game.

    python -m lzlite.entry --cfg zoo/connect4/gumbel_alphazero_config.py
"""
from lzlite.config import deep_update
from zoo.connect4 import alphazero_config as _alphazero

main_config = deep_update(_alphazero.main_config, dict(
    exp_name="connect4_gumbel_alphazero",
    # all 7 moves considered, sequential halving over the 100 simulations; c_scale as in Gumbel MuZero
    policy=dict(search_rule="gumbel", max_num_considered_actions=7, c_scale=0.1),
))
create_config = deep_update(_alphazero.create_config, dict(policy=dict(type="gumbel_alphazero")))
