"""Tic-tac-toe, UniZero: a transformer world model over (observation, action) tokens (self-play).

    python -m lzlite.entry --cfg zoo/tictactoe/unizero_config.py

A game has at most 9 moves, so one segment of 9 moves holds a whole game and the training unroll
(num_unroll_steps=9) covers every depth a game can reach.
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "unizero",
    dict(
        exp_name="tictactoe_unizero",
        max_env_step=170000,  # 99% optimal moves first at 131k env steps, 0.988-0.992 from there (docs/results.md)
        env=dict(battle_mode="self_play_mode"),
        policy=dict(
            model=dict(model_type="conv", observation_shape=[3, 3, 3], action_space_size=9, embed_dim=64,
                       num_layers=2, num_heads=2, max_tokens=64, support_scale=10),
            num_simulations=25,
            discount_factor=1.0,
            td_steps=9,  # >= the game length: Monte-Carlo outcome
            random_opening_plies=4,  # start games from random openings so odd positions are learnt too
            symmetry_augmentation=True,  # train on a random rotation/reflection of each sampled segment
            num_unroll_steps=9,
            game_segment_length=9,
            num_segments=32,
            collector_env_num=32,
            batch_size=128,
            learning_rate=0.001,
            replay_ratio=0.25,
            replay_buffer_size=20000,
            reanalyze_interval=200,
            reanalyze_num_segments=128,
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
