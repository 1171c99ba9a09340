"""Connect Four, AlphaZero: self-play over the C++ bitboard core; evaluated against alpha-beta.

    python -m lzlite.entry --cfg zoo/connect4/alphazero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "alphazero",
    dict(
        exp_name="connect4_alphazero",
        max_env_step=200000,  # ~77 minutes on one core; the cosine LR schedule spans it
        env=dict(battle_mode="self_play_mode"),
        policy=dict(
            model=dict(observation_shape=[3, 6, 7], action_space_size=7, num_res_blocks=2, num_channels=64,
                       fc_value_layers=[64], fc_policy_layers=[64]),
            num_simulations=100,
            root_dirichlet_alpha=1.0,
            td_steps=4,  # bootstrap from the search value four plies on (tic-tac-toe: two)
            random_opening_plies=4,  # start games from random openings so odd positions are learnt too
            temperature_moves=8,  # sample moves for the first 8 plies, then play the most visited one
            lr_schedule="cosine",
            symmetry_augmentation=True,  # train on the left-right mirror of half the sampled positions
            collector_env_num=128,
            n_episode=128,
            batch_size=256,
            replay_ratio=0.1,  # a learner step costs ~0.11 s here: 0.1 per env step keeps self-play ~half
            replay_buffer_size=50000,
            eval_freq=1000,
            eval_episodes=40,
            eval_bots=["rule", "alpha_beta"],
            eval_bot_depth=4,
            eval_optimal_move_rate=True,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="connect4")),
)
