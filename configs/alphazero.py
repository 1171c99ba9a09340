"""AlphaZero base config: zoo/<game>/alphazero_config.py extends it (lzlite.config.extend_base).

Only AlphaZero's deviations from the components' defaults (see configs/muzero.py).
"""
main_config = dict(
    policy=dict(
        discount_factor=1.0,  # board games are undiscounted
        td_steps=1000,  # longer than any game: the value target is the final outcome
        grad_clip_value=1.0,
    ),
)
create_config = dict(policy=dict(type="alphazero"))
