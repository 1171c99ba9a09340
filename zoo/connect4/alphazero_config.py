"""Connect Four, AlphaZero from pure self-play: a learner and one actor playing through the C++ self-play engine.

Evaluated against depth-4 alpha-beta (bots never play in collection). On a 2-core CPU with bfloat16
(docs/results.md has the runs, minutes and curves):

    python -m lzlite.entry --cfg zoo/connect4/alphazero_config.py
    python -m lzlite.entry --cfg zoo/connect4/alphazero_config.py --actors 0   # the same recipe in one process
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "alphazero",
    dict(
        exp_name="connect4_alphazero",
        max_env_step=240000,  # the cosine LR schedule spans it
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
            learner_dtype="auto",  # bfloat16 where the CPU has it: a learner step 2.1x faster
            search_dtype="auto",
            channels_last=True,
            num_actors=1,  # one actor process plays while the learner trains (--actors 0: one process)
            engine_infer_cache=1 << 16,  # positions; the cache answers about half of the engine's lookups
            collector_env_num=128,
            n_episode=128,
            batch_size=256,
            replay_ratio=0.06,  # the learner is the limit: 0.1 over 140k env steps (same minutes) won 47% as first
            replay_buffer_size=50000,
            eval_freq=2000,
            eval_episodes=40,
            eval_num_simulations=400,  # a wider evaluation search: optimal-move rate 0.91 -> 0.92 (100 -> 400)
            eval_bots=["alpha_beta"],
            eval_bot_depth=4,
            eval_optimal_move_rate=True,
            save_ckpt_freq=1000,
        ),
    ),
    dict(env=dict(type="connect4"), collector=dict(type="engine_collector")),
)
