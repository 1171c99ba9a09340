"""Connect Four, Gumbel MuZero: few simulations suffice thanks to sequential halving.

    python -m lzlite.entry --cfg zoo/connect4/gumbel_muzero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "gumbel_muzero",
    dict(
        exp_name="connect4_gumbel_muzero",
        max_env_step=400000,
        env=dict(battle_mode="self_play_mode"),
        policy=dict(
            model=dict(model_type="conv", observation_shape=[3, 6, 7], action_space_size=7, num_res_blocks=2,
                       num_channels=64, support_scale=10, fc_reward_layers=[32], fc_value_layers=[64],
                       fc_policy_layers=[64]),
            num_simulations=16,
            max_num_considered_actions=7,
            discount_factor=1.0,
            td_steps=42,
            num_unroll_steps=5,
            collector_env_num=64,
            n_episode=64,
            batch_size=256,
            replay_ratio=0.1,
            replay_buffer_size=100000,
            eval_freq=1000,
            eval_episodes=20,
            eval_bots=["rule", "alpha_beta"],
            eval_bot_depth=4,
            eval_optimal_move_rate=True,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="connect4")),
)
