"""Gomoku 9x9, AlphaZero (five or more in a row wins): a learner and one actor playing through the C++ engine.

Evaluated against the rule bot and depth-2 alpha-beta (the zoo's strongest gomoku bot at its default depth).
On a 2-core CPU with bfloat16 it beats the rule bot in every one of 40 games from about 16 minutes; it has not
yet won a game against depth-2 alpha-beta (docs/results.md, "Gomoku"):

    python -m lzlite.entry --cfg zoo/gomoku/alphazero_config.py
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "alphazero",
    dict(
        exp_name="gomoku_alphazero",
        max_env_step=170000,  # the cosine LR schedule spans it (~60 minutes on 2 cores)
        env=dict(battle_mode="self_play_mode", board_size=9),
        policy=dict(
            model=dict(observation_shape=[3, 9, 9], action_space_size=81, num_res_blocks=2, num_channels=64,
                       fc_value_layers=[64], fc_policy_layers=[128]),
            num_simulations=100,
            root_dirichlet_alpha=0.3,
            td_steps=4,  # bootstrap from the search value four plies on, as Connect Four's recipe
            random_opening_plies=2,  # start games after up to two random stones
            temperature_moves=8,  # sample moves for the first 8 plies, then play the most visited one
            lr_schedule="cosine",
            symmetry_augmentation=True,  # train on a random rotation/reflection of each sampled position
            learner_dtype="auto",  # bfloat16 where the hardware has it
            search_dtype="auto",
            channels_last=True,
            num_actors=1,  # one actor process plays while the learner trains (--actors 0: one process)
            engine_infer_cache=1 << 16,
            collector_env_num=128,
            n_episode=128,
            batch_size=256,
            # at 0.15 the learner (~7 steps/s) sets the pace: the actor (~50 env steps/s) waits about half the time
            replay_ratio=0.15,
            replay_buffer_size=100000,
            eval_freq=2000,
            eval_episodes=40,
            eval_num_simulations=200,
            eval_bots=["rule", "alpha_beta"],
            eval_bot_depth=2,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="gomoku"), collector=dict(type="engine_collector")),
)
