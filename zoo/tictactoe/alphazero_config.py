"""Tic-tac-toe, AlphaZero: self-play with search over real game states.

    python -m lzlite.entry --cfg zoo/tictactoe/alphazero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "alphazero",
    dict(
        exp_name="tictactoe_alphazero",
        max_env_step=30000,
        env=dict(battle_mode="self_play_mode"),
        policy=dict(
            model=dict(observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1, num_channels=32),
            num_simulations=25,
            collector_env_num=32,
            n_episode=32,
            batch_size=128,
            replay_ratio=0.25,
            replay_buffer_size=10000,
            eval_freq=100,
            eval_episodes=20,
            eval_bots=["rule", "perfect"],
            eval_optimal_move_rate=True,
            save_ckpt_freq=500,
        ),
    ),
    dict(env=dict(type="tictactoe")),
)
