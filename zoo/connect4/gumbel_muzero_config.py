"""Connect Four, Gumbel MuZero: sequential halving at the root, policy trained on the improved policy.

    python -m lzlite.entry --cfg zoo/connect4/gumbel_muzero_config.py
"""
from lzlite.config import deep_update
from zoo.connect4 import muzero_config as _muzero

main_config = deep_update(_muzero.main_config, dict(
    exp_name="connect4_gumbel_muzero",
    # c_scale 0.1 (mctx's value_scale): sigma(q) = (50 + max N) * c_scale * q. At 1.0 a Q gap of 0.1 outweighs
    # any prior or Gumbel-noise gap, so a weak model's Q alone picked moves and targets; at 0.1 they share
    policy=dict(search_rule="gumbel", max_num_considered_actions=7, c_scale=0.1,
                # bfloat16 learner steps where the hardware has it (AMX CPUs, bf16 GPUs), NHWC conv weights:
                # 1.95x faster learner steps here; per env step 0.02-0.08 lower to 50k, level after (docs/results.md)
                learner_dtype="auto", channels_last=True,
                # AlphaZero's self-play settings, then a longer bootstrap (docs/results.md, session 7): the best
                # move after ply 8, a 50k buffer, cosine LR over the hour's 95k env steps, 64 collect simulations
                # (~20% slower per env step than 16) and values bootstrapped 12 plies on (5: 0-35% against
                # alpha-beta; 12: 51% of 200 at 60 minutes with seed 0, 70% as first player; 5% with seed 1)
                num_simulations=64, temperature_moves=8, replay_buffer_size=50000, lr_schedule="cosine",
                td_steps=12),
    max_env_step=95000,
))
create_config = deep_update(_muzero.create_config, dict(policy=dict(type="gumbel_muzero")))
