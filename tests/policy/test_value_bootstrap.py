"""value_bootstrap='target_network': fresh bootstrap values from the target network, end to end."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from lzlite.entry import train_muzero

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import tiny_config, tiny_policy as _policy  # noqa: E402


def _obs(n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, 3, 3, 3)) < 0.3).astype(np.float32)


@pytest.mark.parametrize("algo", ["muzero", "gumbel_muzero", "rezero", "alphazero"])
def test_bootstrap_fn_is_the_target_networks_value(algo):
    policy = _policy(algo, value_bootstrap="target_network")
    # random, different online and target weights (MuZero's value head starts at exactly 0): the values
    # must come from the TARGET network
    torch.manual_seed(0)
    with torch.no_grad():
        for net in (policy.model, policy.target_model):
            for p in net.parameters():
                p.add_(0.3 * torch.randn_like(p))
    obs = _obs(7)
    got = policy.bootstrap_fn()(obs)
    with torch.no_grad():
        t = torch.as_tensor(obs)
        if algo == "alphazero":
            want = policy.target_model(t)[1].view(-1).numpy()
            online = policy.model.eval()(t)[1].view(-1).numpy()
        else:
            m = policy.target_model
            want = m.to_scalar(m.initial_inference(t).value).view(-1).numpy()
            online = policy.model.to_scalar(policy.model.eval().initial_inference(t).value).view(-1).numpy()
    assert got.shape == (7,) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(got, online)


def test_stored_is_the_default_and_bad_values_are_errors():
    assert _policy("muzero").bootstrap_fn() is None
    with pytest.raises(ValueError, match="value_bootstrap must be 'stored' or 'target_network'"):
        _policy("muzero", value_bootstrap="target")
    with pytest.raises(ValueError, match="not supported by UniZeroPolicy"):
        _policy("unizero", value_bootstrap="target_network")


def test_train_muzero_with_target_network_bootstrap(tmp_path, monkeypatch):
    from lzlite.policy.muzero import MuZeroPolicy
    from lzlite.worker.checkpoint import load_checkpoint

    calls = []
    original = MuZeroPolicy._hook_target_value

    def counting(self, obs):
        calls.append(len(obs))
        return original(self, obs)

    monkeypatch.setattr(MuZeroPolicy, "_hook_target_value", counting)
    policy = train_muzero(tiny_config("muzero", value_bootstrap="target_network"), seed=0, max_env_step=150,
                          run_dir=str(tmp_path), progress=False)
    train_iter = load_checkpoint(str(tmp_path / "ckpt" / "last.pt"))["counters"]["train_iter"]
    assert train_iter > 0 and len(calls) == train_iter  # one batched target-network call per minibatch
    assert all(0 < n <= 32 * 4 for n in calls)  # at most one row per (sample, unroll step)
    assert abs(sum(policy.final_eval[f"random/{k}"] for k in ("win", "draw", "loss")) - 1.0) < 1e-6


def test_muzero_reanalyze_fn_searches_with_the_stored_legal_masks():
    policy = _policy("muzero", num_simulations=6)
    torch.manual_seed(1)
    with torch.no_grad():
        for p in policy.target_model.parameters():
            p.add_(0.3 * torch.randn_like(p))
    obs = _obs(12, seed=2)
    rng = np.random.default_rng(3)
    legal = rng.random((12, 9)) < 0.4
    legal[np.arange(12), rng.integers(0, 9, 12)] = True  # at least one legal move per row
    values, pols = policy.reanalyze_fn()(obs, legal)
    assert values.shape == (12,) and pols.shape == (12, 9)
    np.testing.assert_array_equal(pols[~legal], 0.0)  # visits only ever go to legal moves
    np.testing.assert_allclose(pols.sum(1), 1.0, rtol=1e-5)
    _, pols_all = policy.reanalyze_fn()(obs, np.ones((12, 9), bool))
    assert (pols_all[~legal] > 0).any()  # with every move legal the same search does visit them
