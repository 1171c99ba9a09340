"""Connect Four, MuZero (PUCT search over the learned model).

    python -m lzlite.entry --cfg zoo/connect4/muzero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "muzero",
    dict(
        exp_name="connect4_muzero",
        max_env_step=400000,
        env=dict(battle_mode="self_play_mode"),
        policy=dict(
            model=dict(model_type="conv", observation_shape=[3, 6, 7], action_space_size=7, num_res_blocks=2,
                       num_channels=32, support_scale=10, fc_reward_layers=[32], fc_value_layers=[64],
                       fc_policy_layers=[64],
                       norm_type="LN",  # BatchNorm's running statistics mix root and unrolled latents
                       # the action as a plane marking its column (MuZero's encoding for board games): constant
                       # one-hot planes say which action but not where on the board it acts
                       discrete_action_encoding_type="spatial"),
            num_simulations=50,
            discount_factor=1.0,
            td_steps=5,  # bootstrap from the search value five plies on
            # a win is one transition in ~15-30: with weight 1 the learned model missed most immediate wins
            # (docs/results.md); 4 lifted the Gumbel agent's optimal-move rate from 0.59 to 0.67 at 10k env steps
            reward_loss_weight=4.0,
            num_unroll_steps=5,
            random_opening_plies=4,  # start games from random openings so odd positions are learnt too
            symmetry_augmentation=True,  # train on the left-right mirror of half the sampled positions
            collector_env_num=64,
            n_episode=64,
            batch_size=256,
            # a learner step unrolls K=5 dynamics steps (~6 network passes): 32 channels and 0.1 updates
            # per env step keep the learner CPU-sized (64 channels at 0.25 took ~1.5 s per update)
            replay_ratio=0.1,
            replay_buffer_size=100000,
            eval_freq=500,
            eval_episodes=20,
            eval_bots=["rule", "alpha_beta"],
            eval_bot_depth=4,
            eval_optimal_move_rate=True,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="connect4")),
)
