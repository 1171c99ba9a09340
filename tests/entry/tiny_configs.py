"""Tiny tic-tac-toe configs for quick end-to-end runs (a few hundred env steps)."""
import copy

from lzlite.config import extend_base

_TINY_POLICY = dict(
    num_simulations=8,
    collector_env_num=8,
    n_episode=8,
    batch_size=32,
    replay_ratio=0.25,
    replay_buffer_size=2000,
    eval_freq=1000,
    eval_episodes=4,
    eval_bots=["random"],
    save_ckpt_freq=1000,
    mcts_ctree=True,
)

_MODELS = {
    "alphazero": dict(observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1, num_channels=8,
                      value_head_channels=4, policy_head_channels=4, fc_value_layers=[8], fc_policy_layers=[8]),
    "muzero": dict(observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1, num_channels=8,
                   support_scale=5, reward_head_channels=4, value_head_channels=4, policy_head_channels=4,
                   fc_reward_layers=[8], fc_value_layers=[8], fc_policy_layers=[8]),
}


def tiny_config(algo: str, exp_name: str = "tiny", **policy_overrides):
    """[main_config, create_config] for ``algo`` in {'alphazero', 'muzero', 'gumbel_muzero'}."""
    model = _MODELS["alphazero" if algo == "alphazero" else "muzero"]
    policy = dict(copy.deepcopy(_TINY_POLICY), model=copy.deepcopy(model), **policy_overrides)
    if algo != "alphazero":
        policy.update(num_unroll_steps=3, td_steps=5, discount_factor=1.0)
    main, create = extend_base(algo, dict(exp_name=exp_name, policy=policy), dict(env=dict(type="tictactoe")))
    return [main, create]
