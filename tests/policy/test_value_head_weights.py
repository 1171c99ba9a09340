"""``model.tanh_value`` on MuZero policies: AlphaZero's tanh value head, trained with squared error."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from lzlite.config import compile_config
from lzlite.entry.loop import build_components

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import fit_batch, tiny_config  # noqa: E402


def _parts(algo="gumbel_muzero", tanh_value=False, **overrides):
    main, create = tiny_config(algo, **overrides)
    main["policy"]["model"].update(norm_type="LN", tanh_value=tanh_value)
    return build_components(compile_config(main, create, seed=0))


def _batch(parts, n=96):
    parts["buffer"].push_segments(parts["collector"].collect(n_episode=16)[0])
    return parts["buffer"].sample(n, np.random.default_rng(0))


@pytest.mark.parametrize("algo", ["muzero", "gumbel_muzero"])
def test_tanh_value_self_play_and_the_squared_error_fit(algo):
    parts = _parts(algo, tanh_value=True)
    policy, batch = parts["policy"], _batch(parts)  # self-play searched through the tanh head
    model = policy.model
    obs = policy.to_tensor(batch.obs)
    target = policy.to_tensor(batch.target_value[:, 0])
    assert target.abs().max() == 1 and target.abs().min() < 1  # won / lost and bootstrapped positions
    with torch.no_grad():
        _, stats, _ = policy.compute_loss(batch)
        value = model.value_to_scalar(model.initial_inference(obs).value)
    np.testing.assert_allclose(stats["root_value_loss"], ((value - target) ** 2).mean().item(), rtol=1e-5)
    before = ((value - target) ** 2).mean().item()
    fit_batch(policy, batch, steps=150)
    with torch.no_grad():
        value = model.value_to_scalar(model.initial_inference(obs).value)
    after = ((value - target) ** 2).mean().item()
    assert after < 0.25 * before, (before, after)
    assert value.abs().max() < 1
