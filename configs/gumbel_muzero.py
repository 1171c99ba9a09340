"""Gumbel MuZero base config: zoo/<game>/gumbel_muzero_config.py extends it (lzlite.config.extend_base)."""
main_config = dict(
    policy=dict(
        search_rule="gumbel",
        num_simulations=16,
        max_num_considered_actions=16,
        c_visit=50.0,
        c_scale=1.0,
        num_unroll_steps=5,
        td_steps=9,
        optim_type="AdamW",
        learning_rate=0.003,
        weight_decay=0.0001,
        grad_clip_value=0.5,
        batch_size=256,
        replay_ratio=0.25,
        replay_buffer_size=20000,
        value_loss_weight=0.25,
        target_update_freq=100,
    ),
)
create_config = dict(policy=dict(type="gumbel_muzero"))
