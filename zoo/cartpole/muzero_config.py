"""CartPole-v1, MuZero with an MLP model (single-player: rewards, discounting, value_sign +1).

    pip install gymnasium && python -m lzlite.entry --cfg zoo/cartpole/muzero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "muzero",
    dict(
        exp_name="cartpole_muzero",
        max_env_step=15000,
        env=dict(env_id="CartPole-v1", max_episode_steps=500),
        policy=dict(
            model=dict(model_type="mlp", observation_shape=[4], action_space_size=2, latent_state_dim=64,
                       support_scale=50, norm_type="LN"),
            env_type="not_board_games",
            num_simulations=25,
            discount_factor=0.997,
            td_steps=10,
            num_unroll_steps=5,
            collector_env_num=8,
            n_episode=8,
            batch_size=256,
            replay_ratio=0.25,
            replay_buffer_size=50000,
            game_segment_length=500,
            eval_freq=500,
            eval_episodes=8,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="cartpole")),
)
