"""UniZero base config: zoo/<game>/unizero_config.py extends it (lzlite.config.extend_base).

The policy module is named in ``import_names`` so its registrations (policy 'unizero', collector
'segment_collector', buffer 'unizero_buffer') run before the config is compiled.
"""
main_config = dict(
    policy=dict(
        search_rule="puct",
        num_simulations=25,
        num_unroll_steps=10,  # training segment length K (>= the expected search depth)
        td_steps=5,
        game_segment_length=50,
        num_segments=8,
        optim_type="AdamW",
        learning_rate=0.001,  # transformers want a smaller step than MuZero's conv nets
        weight_decay=0.0001,
        grad_clip_value=5.0,
        batch_size=64,
        replay_ratio=0.25,
        replay_buffer_size=20000,
        target_update_freq=100,
        fixed_temperature_value=1.0,
        use_kv_cache=True,
        reanalyze_interval=100,  # scheduled reanalyze of the stalest segments (0: off)
        reanalyze_num_segments=64,
        reanalyze_batch_size=256,
        reanalyze_weight_decay=0.5,
        reanalyze_ratio=0.0,  # no per-minibatch reanalyze: segments are refreshed on the schedule instead
    ),
)
create_config = dict(
    policy=dict(type="unizero", import_names=["lzlite.policy.unizero"]),
    replay_buffer=dict(type="unizero_buffer"),  # also the policy's default (buffer_type); explicit for clarity
)
