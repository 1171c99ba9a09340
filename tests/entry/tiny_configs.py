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


_UNIZERO_POLICY = dict(
    model=dict(observation_shape=[3, 3, 3], action_space_size=9, embed_dim=16, num_layers=1, num_heads=1,
               max_tokens=32, encoder_channels=4, head_hidden=16, support_scale=5),
    num_simulations=8, collector_env_num=8, num_segments=8, game_segment_length=4, num_unroll_steps=4,
    td_steps=9, discount_factor=1.0, batch_size=32, replay_ratio=0.25, replay_buffer_size=2000,
    eval_freq=1000, eval_episodes=4, eval_bots=["random"], save_ckpt_freq=1000,
    reanalyze_interval=10, reanalyze_num_segments=16, reanalyze_batch_size=64)


def tiny_config(algo: str, exp_name: str = "tiny", **policy_overrides):
    """[main_config, create_config] for ``algo`` in {'alphazero', 'gumbel_alphazero', 'muzero', 'gumbel_muzero',
    'rezero', 'unizero', 'grounded_gumbel_muzero'} (the last: the Connect Four recipe's subclass, over Gumbel
    MuZero's base config)."""
    if algo == "grounded_gumbel_muzero":
        main, create = tiny_config("gumbel_muzero", exp_name, **policy_overrides)
        main["policy"]["model"]["observation_decoder"] = True
        create["policy"] = dict(type=algo, import_names=["zoo.connect4.grounded_muzero"])
        return [main, create]
    if algo == "unizero":
        policy = dict(copy.deepcopy(_UNIZERO_POLICY), **policy_overrides)
        return list(extend_base(algo, dict(exp_name=exp_name, policy=policy), dict(env=dict(type="tictactoe"))))
    alphazero = algo in ("alphazero", "gumbel_alphazero")
    model = _MODELS["alphazero" if alphazero else "muzero"]
    policy = dict(copy.deepcopy(_TINY_POLICY), model=copy.deepcopy(model), **policy_overrides)
    if not alphazero:
        policy.update(num_unroll_steps=3, td_steps=5, discount_factor=1.0)
    main, create = extend_base(algo, dict(exp_name=exp_name, policy=policy), dict(env=dict(type="tictactoe")))
    return [main, create]


def tiny_policy(algo: str, **policy_overrides):
    """The policy object of ``tiny_config(algo, **policy_overrides)``, compiled with seed 0."""
    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components

    return build_components(compile_config(*tiny_config(algo, **policy_overrides), seed=0))["policy"]


def fit_batch(policy, batch, steps: int, lr: float = 3e-3, sync_target_every: int = 0):
    """Train ``policy`` ``steps`` Adam steps on ``batch`` alone (the target network synced every
    ``sync_target_every`` steps when > 0); returns the policy."""
    import torch

    opt = torch.optim.Adam(policy.model.parameters(), lr=lr)
    for step in range(steps):
        if sync_target_every and step % sync_target_every == 0:
            policy.target_model.load_state_dict(policy.model.state_dict())
        loss, _, _ = policy.compute_loss(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return policy
