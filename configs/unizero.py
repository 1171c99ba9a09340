"""UniZero base config: zoo/<game>/unizero_config.py extends it (lzlite.config.extend_base).

Only UniZero's deviations from the components' defaults. The policy module is named in ``import_names`` so
its registrations (policy 'unizero', collector 'segment_collector', buffer 'unizero_buffer') run before the
config is compiled.
"""
main_config = dict(
    policy=dict(
        num_unroll_steps=10,  # training segment length K (>= the expected search depth)
        td_steps=5,
        learning_rate=0.001,  # transformers want a smaller step than MuZero's conv nets
        grad_clip_value=5.0,
        batch_size=64,
    ),
)
create_config = dict(policy=dict(type="unizero", import_names=["lzlite.policy.unizero"]))
