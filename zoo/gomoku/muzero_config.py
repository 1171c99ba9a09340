"""Gomoku 9x9, MuZero (five or more in a row wins); evaluated against depth-2 alpha-beta.

    python -m lzlite.entry --cfg zoo/gomoku/muzero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "muzero",
    dict(
        exp_name="gomoku_muzero",
        max_env_step=1000000,
        env=dict(battle_mode="self_play_mode", board_size=9),
        policy=dict(
            model=dict(model_type="conv", support_scale=10, observation_shape=[3, 9, 9], action_space_size=81,
                       num_res_blocks=2, num_channels=64, fc_value_layers=[64], fc_policy_layers=[128],
                       norm_type="LN"),  # BatchNorm's running statistics mix root and unrolled latents
            num_simulations=50,
            discount_factor=1.0,
            td_steps=81,
            symmetry_augmentation=True,  # train on a random rotation/reflection of each sampled position
            collector_env_num=64,
            n_episode=64,
            batch_size=256,
            replay_ratio=0.1,
            replay_buffer_size=200000,
            eval_freq=1000,
            eval_episodes=20,
            eval_bots=["rule", "alpha_beta"],
            eval_bot_depth=2,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="gomoku")),
)
