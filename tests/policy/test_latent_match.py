"""policy.latent_match_loss_weight: the latents the dynamics make for real positions are pulled toward the
representation of those positions' observations (mean squared error per latent element)."""
from __future__ import annotations

import os
import sys

import numpy as np
import torch

from lzlite.config import compile_config
from lzlite.entry.loop import build_components
from lzlite.registry import ENV_REGISTRY

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import fit_batch, tiny_config, walk_extra_moves  # noqa: E402


def _parts(**overrides):
    main, create = tiny_config("muzero", **overrides)
    main["policy"]["model"]["norm_type"] = "LN"
    return build_components(compile_config(main, create, seed=0))


def _batch(batch: int = 128, **overrides):
    parts = _parts(**overrides)
    segments, _ = parts["collector"].collect(n_episode=32)
    parts["buffer"].push_segments(segments)
    return parts, parts["buffer"].sample(batch, np.random.default_rng(0))


def _mse(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Squared error relative to the target ``b``'s mean square, per row."""
    return (a - b).pow(2).flatten(1).mean(1) / b.pow(2).flatten(1).mean(1).clamp(min=1e-6)


def test_the_unrolled_line_by_hand():
    parts, batch = _batch(latent_match_loss_weight=1.0)
    policy, model = parts["policy"], parts["policy"].model
    assert batch.obs_unroll is not None  # the loop asks the buffer for the unrolled observations
    _, stats, _ = policy.compute_loss(batch)
    want = torch.zeros(len(batch.obs))
    with torch.no_grad():
        latent = model.initial_inference(policy.to_tensor(batch.obs)).latent_state
        for k in range(batch.actions.shape[1]):
            latent = model.recurrent_inference(latent, torch.as_tensor(batch.actions[:, k])).latent_state
            real = model.initial_inference(policy.to_tensor(batch.obs_unroll[:, k])).latent_state
            want += policy.to_tensor(batch.mask_unroll[:, k + 1]) * _mse(latent, real)
    assert want.mean() > 1e-3  # an untrained dynamics is far from the representation: the check has teeth
    np.testing.assert_allclose(stats["latent_match_loss"], want.mean().item(), rtol=1e-4)
    _, off, _ = _parts()["policy"].compute_loss(batch)
    assert off["latent_match_loss"] == 0.0


def test_the_action_value_moves_are_matched_too():
    """With the action-value loss on, the latent after each unrolled position's extra move is matched as well."""
    parts, batch = _batch(latent_match_loss_weight=1.0, action_reward_loss_weight=1.0, action_value_loss_weight=1.0)
    policy, model = parts["policy"], parts["policy"].model
    torch.manual_seed(0)
    _, stats, _ = policy.compute_loss(batch)
    torch.manual_seed(0)
    mask = policy.to_tensor(batch.mask_unroll)
    want = torch.zeros(len(batch.obs))
    with torch.no_grad():
        for k, _, off_line, after_obs, line, line_obs in walk_extra_moves(policy, batch, ENV_REGISTRY.get(
                "tictactoe").next_observations):
            want += mask[:, k] * _mse(off_line, model.initial_inference(after_obs).latent_state)
            want += mask[:, k + 1] * _mse(line, model.initial_inference(line_obs).latent_state)
    np.testing.assert_allclose(stats["latent_match_loss"], want.mean().item(), rtol=1e-4)


def _line_gap_after_training(batch, weight: float, steps: int = 30) -> float:
    """Mean squared distance between the dynamics' latent after the first played move and the representation of
    the real position after it, for a policy trained ``steps`` Adam steps on ``batch``."""
    torch.manual_seed(0)
    p = _parts(latent_match_loss_weight=weight)["policy"]
    fit_batch(p, batch, steps)
    keep = batch.mask_unroll[:, 1] > 0
    with torch.no_grad():
        latent = p.model.initial_inference(p.to_tensor(batch.obs[keep])).latent_state
        through = p.model.recurrent_inference(latent, torch.as_tensor(batch.actions[keep, 0])).latent_state
        real = p.model.initial_inference(p.to_tensor(batch.obs_unroll[keep, 0])).latent_state
    return _mse(through, real).mean().item()


def test_it_brings_the_dynamics_to_the_representation():
    _, batch = _batch(batch=64, latent_match_loss_weight=1.0)
    with_loss, without = _line_gap_after_training(batch, 1.0), _line_gap_after_training(batch, 0.0)
    assert with_loss < 0.25 * without, (with_loss, without)


def _match_grads(batch, dynamics_only: bool):
    """(logged match loss, {'representation': grad norm, 'dynamics': grad norm}) of the match loss alone."""
    torch.manual_seed(0)  # the same initial network for both settings
    p = _parts(latent_match_loss_weight=1.0, latent_match_dynamics_only=dynamics_only, value_loss_weight=0.0,
               policy_loss_weight=0.0, reward_loss_weight=0.0, action_reward_loss_weight=1e-12,
               action_value_loss_weight=1e-12, action_value_all_moves=True)["policy"]
    torch.manual_seed(0)
    loss, stats, _ = p.compute_loss(batch)
    p.model.zero_grad()
    loss.backward()

    def norm(prefix: str) -> float:
        grads = [q.grad for n, q in p.model.named_parameters() if n.startswith(prefix) and q.grad is not None]
        return float(sum(g.pow(2).sum() for g in grads)) ** 0.5

    return stats["latent_match_loss"], dict(representation=norm("representation"), dynamics=norm("dynamics"))


def test_dynamics_only_trains_the_dynamics_alone():
    """latent_match_dynamics_only: the same loss value (the dynamics step made again from the detached input gives
    the same latent), no gradient on the representation, and still one on the dynamics."""
    _, batch = _batch(latent_match_loss_weight=1.0, action_reward_loss_weight=1.0, action_value_loss_weight=1.0)
    both, g_both = _match_grads(batch, dynamics_only=False)
    alone, g_alone = _match_grads(batch, dynamics_only=True)
    np.testing.assert_allclose(alone, both, rtol=1e-5)
    assert g_both["representation"] > 1e-4 and g_both["dynamics"] > 1e-4, g_both
    assert g_alone["dynamics"] > 1e-4, g_alone
    # the tiny action/value weights above leave a trace on the representation, far below the match's own
    assert g_alone["representation"] < 1e-6 * g_both["representation"], (g_alone, g_both)
