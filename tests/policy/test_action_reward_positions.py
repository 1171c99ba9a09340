"""policy.action_reward_positions='one': the action-reward and action-value losses at one unrolled position per
row (uniform among the real ones, scaled by their number) instead of at every one."""
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


def _parts(**overrides):
    main, create = tiny_config("muzero", **overrides)
    main["policy"]["model"]["norm_type"] = "LN"
    return build_components(compile_config(main, create, seed=0))


def _batch(**overrides):
    parts = _parts(action_reward_loss_weight=4.0, action_reward_depth=2, **overrides)
    parts["buffer"].push_segments(parts["collector"].collect(n_episode=32)[0])
    return parts, parts["buffer"].sample(128, np.random.default_rng(0))


def _per_position_losses(policy, batch):
    """[Bt, K] action-reward and action-value losses at every unrolled position, from the same plan (and so the
    same torch draws) compute_loss makes first; then the draw of one position per row that follows them."""
    K = batch.actions.shape[1]
    plan = policy._action_reward_plan(batch, K)
    plan["obs"] = [policy.to_tensor(batch.obs)] + [policy.to_tensor(batch.obs_unroll[:, k]) for k in range(K - 1)]
    mask = torch.as_tensor(batch.mask_unroll[:, :K]).float()
    pick = torch.multinomial((mask > 0).float(), 1).squeeze(1)
    ar, av = [], []
    with torch.no_grad():
        latent = policy.model.initial_inference(plan["obs"][0]).latent_state
        for k in range(K):
            r, v, _, _ = policy._action_reward_step(policy.model, latent, plan, k)
            ar.append(r)
            av.append(v)
            latent = policy.model.recurrent_inference(latent, torch.as_tensor(batch.actions[:, k])).latent_state
    return torch.stack(ar, 1), torch.stack(av, 1), mask, pick


def test_one_position_loss_by_hand_and_its_expectation_is_the_all_positions_loss():
    parts, batch = _batch(action_value_loss_weight=1.0, action_reward_positions="one")
    policy = parts["policy"]
    torch.manual_seed(0)
    _, one, _ = policy.compute_loss(batch)
    torch.manual_seed(0)
    ar, av, mask, pick = _per_position_losses(policy, batch)
    n, rows = mask.sum(1), torch.arange(len(pick))
    assert (n < mask.shape[1]).sum() >= 10  # rows near a game's end: positions past it are never picked
    assert bool((mask[rows, pick] == 1).all())
    np.testing.assert_allclose(one["action_reward_loss"], (n * ar[rows, pick]).mean().item(), rtol=1e-4)
    np.testing.assert_allclose(one["action_value_loss"], (n * av[rows, pick]).mean().item(), rtol=1e-4)
    policy.cfg.action_reward_positions = "all"
    torch.manual_seed(0)
    _, every, _ = policy.compute_loss(batch)
    for key in ("value_loss", "policy_loss", "reward_loss"):  # the rest of the loss is untouched
        np.testing.assert_allclose(one[key], every[key], rtol=1e-5)
    # 'all' sums the same per-position losses over the real positions: the mean of 'one' over its uniform pick
    np.testing.assert_allclose(every["action_reward_loss"], (mask * ar).sum(1).mean().item(), rtol=1e-4)
    np.testing.assert_allclose(every["action_value_loss"], (mask * av).sum(1).mean().item(), rtol=1e-4)


def test_one_position_still_teaches_the_reply_after_a_move_not_played():
    _, batch = _batch()
    # pairs (b, y) at the sampled roots: b not played, y the opponent's immediate win after b
    r, b, y = np.nonzero(batch.target_action_reward[:, 0, 1:] == 1)
    keep = b != batch.actions[r, 0]
    r, b, y = r[keep], b[keep], y[keep]
    assert len(r) >= 10

    def seen_after_training(weight: float) -> float:
        torch.manual_seed(0)
        p = _parts(action_reward_loss_weight=weight, action_reward_depth=2, action_reward_positions="one")["policy"]
        fit_batch(p, batch, 300)
        with torch.no_grad():
            root = p.model.initial_inference(p.to_tensor(batch.obs[r])).latent_state
            after = p.model.recurrent_inference(root, torch.as_tensor(b)).latent_state
            return p.model.to_scalar(p.model.recurrent_inference(after, torch.as_tensor(y)).reward).mean().item()

    with_loss, without = seen_after_training(4.0), seen_after_training(0.0)
    print(f"reply win seen after training: with the loss at one position {with_loss:.3f}, without {without:.3f}")
    assert with_loss > 0.45 and with_loss > without + 0.25


def test_unknown_positions_setting_is_a_clear_error():
    with pytest.raises(ValueError, match="action_reward_positions must be 'all'"):
        _parts(action_reward_loss_weight=1.0, action_reward_positions="some")
