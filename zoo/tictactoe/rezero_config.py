"""Tic-tac-toe, ReZero: MuZero with scheduled whole-buffer backward-view reanalyze (self-play).

    python -m lzlite.entry --cfg zoo/tictactoe/rezero_config.py

Same game settings as muzero_config.py, so the two can be compared run for run.
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "rezero",
    dict(
        exp_name="tictactoe_rezero",
        max_env_step=60000,
        env=dict(battle_mode="self_play_mode"),
        policy=dict(
            model=dict(model_type="conv", observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1,
                       num_channels=32, support_scale=10),
            num_simulations=25,
            discount_factor=1.0,
            td_steps=9,
            num_unroll_steps=3,
            collector_env_num=32,
            n_episode=32,
            batch_size=256,
            replay_ratio=0.25,
            replay_buffer_size=20000,
            reanalyze_interval=100,  # = target_update_freq: each new target network refreshes the buffer once
            reanalyze_batch_size=256,
            use_backward_view=True,
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
