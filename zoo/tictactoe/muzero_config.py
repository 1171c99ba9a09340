"""Tic-tac-toe, MuZero: a learned model searched in latent space (self-play).

    python -m lzlite.entry --cfg zoo/tictactoe/muzero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "muzero",
    dict(
        exp_name="tictactoe_muzero",
        max_env_step=60000,
        env=dict(battle_mode="self_play_mode"),
        policy=dict(
            model=dict(model_type="conv", observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1,
                       num_channels=32, support_scale=10,
                       norm_type="LN"),  # BatchNorm's running statistics mix root and unrolled latents
            num_simulations=25,
            discount_factor=1.0,
            td_steps=3,  # bootstrap from the search value three plies on
            random_opening_plies=4,  # start games from random openings so odd positions are learnt too
            symmetry_augmentation=True,  # train on a random rotation/reflection of each sampled position
            num_unroll_steps=3,
            collector_env_num=32,
            n_episode=32,
            batch_size=256,
            replay_ratio=0.25,
            replay_buffer_size=20000,
            eval_freq=500,
            eval_episodes=20,
            eval_bots=["rule", "perfect"],
            eval_optimal_move_rate=True,
            eval_never_lose_check=True,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="tictactoe")),
)
