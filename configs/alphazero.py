"""AlphaZero base config: zoo/<game>/alphazero_config.py extends it (lzlite.config.extend_base)."""
main_config = dict(
    policy=dict(
        model=dict(model_type="conv"),
        search_rule="puct",
        num_simulations=25,
        root_dirichlet_alpha=0.3,
        root_noise_weight=0.25,
        pb_c_init=1.25,
        discount_factor=1.0,
        td_steps=1000,
        num_unroll_steps=0,
        optim_type="AdamW",
        learning_rate=0.003,
        weight_decay=0.0001,
        grad_clip_value=1.0,
        batch_size=256,
        replay_ratio=0.25,
        replay_buffer_size=20000,
        value_loss_weight=1.0,
        fixed_temperature_value=1.0,
    ),
)
create_config = dict(policy=dict(type="alphazero"))
