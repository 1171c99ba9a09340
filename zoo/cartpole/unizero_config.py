"""CartPole-v1, UniZero with an MLP encoder (single-player: rewards, discounting, value_sign +1).

    pip install gymnasium && python -m lzlite.entry --cfg zoo/cartpole/unizero_config.py

Episodes last up to 500 moves; the segment collector cuts them into segments of 50 moves (padded
with the next num_unroll_steps + td_steps moves) and trains on them long before the episode ends.
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "unizero",
    dict(
        exp_name="cartpole_unizero",
        max_env_step=100000,
        env=dict(env_id="CartPole-v1", max_episode_steps=500),
        policy=dict(
            model=dict(model_type="mlp", observation_shape=[4], action_space_size=2, embed_dim=64, num_layers=2,
                       num_heads=2, max_tokens=64, encoder_hidden=64, support_scale=50),
            env_type="not_board_games",
            num_simulations=25,
            discount_factor=0.997,
            td_steps=10,
            num_unroll_steps=10,
            game_segment_length=50,
            num_segments=8,
            collector_env_num=8,
            batch_size=128,
            learning_rate=0.001,
            replay_ratio=0.25,
            replay_buffer_size=50000,
            reanalyze_interval=200,
            reanalyze_num_segments=64,
            eval_freq=500,
            eval_episodes=8,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="cartpole")),
)
