"""policy.ssl_loss_weight: EfficientZero's latent consistency loss in MuZero's learner step."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from lzlite.config import compile_config
from lzlite.entry.loop import build_components

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import tiny_config  # noqa: E402

_PROJ = dict(self_supervised_learning_loss=True, proj_hid=16, proj_out=16, pred_hid=8, pred_out=16)


def _parts(model=None, **overrides):
    main, create = tiny_config("muzero", **overrides)
    main["policy"]["model"].update(model or {})
    return build_components(compile_config(main, create, seed=0))


def test_ssl_weight_without_projection_heads_fails_at_construction():
    with pytest.raises(ValueError, match="ssl_loss_weight=2.0 needs the model's projection heads: "
                                         "set policy.model.self_supervised_learning_loss=True"):
        _parts(ssl_loss_weight=2.0)


def test_ssl_loss_is_the_negative_cosine_to_the_target_latents_and_trains_the_projection():
    parts = _parts(ssl_loss_weight=2.0, model=_PROJ)
    policy, buffer = parts["policy"], parts["buffer"]
    segments, _ = parts["collector"].collect(n_episode=8)
    buffer.push_segments(segments)
    batch = buffer.sample(32, np.random.default_rng(0))
    assert batch.unrolled["obs"].shape[:2] == (32, 4), "the buffer returns the observations at t..t+K"
    torch.manual_seed(0)
    loss, stats, _ = policy.compute_loss(batch)
    # by hand: -sum_k mask_k * cos(project(unrolled latent_k), target_project(target representation(obs_k)))
    model, target = policy.model, policy.target_model
    with torch.no_grad():
        obs = policy.to_tensor(batch.obs)
        actions = torch.as_tensor(batch.actions, dtype=torch.int64)
        mask = policy.to_tensor(batch.mask_unroll)
        latent = model.initial_inference(obs).latent_state
        want = torch.zeros(32)
        for k in range(1, 4):
            latent = model.recurrent_inference(latent, actions[:, k - 1]).latent_state
            goal = target.project(target.initial_inference(policy.to_tensor(batch.unrolled["obs"][:, k])).latent_state,
                                  with_grad=False)
            want -= mask[:, k] * torch.nn.functional.cosine_similarity(model.project(latent, with_grad=True), goal, dim=-1)
    np.testing.assert_allclose(stats["ssl_loss"], want.mean().item(), rtol=1e-4, atol=1e-6)
    assert stats["ssl_loss"] != 0
    loss.backward()
    heads = [p for n, p in model.named_parameters() if "projection" in n or "prediction_head" in n]
    assert heads and all(p.grad is not None and p.grad.abs().sum() > 0 for p in heads)
