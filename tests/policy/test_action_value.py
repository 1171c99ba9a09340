"""policy.action_value_loss_weight: the latent after a move not played learns the value and policy of the real
position after it (the target network's representation of the observation the env's rule builds)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lzlite.config import compile_config
from lzlite.entry.loop import build_components
from lzlite.policy.muzero import MuZeroPolicy
from lzlite.registry import ENV_REGISTRY

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import fit_batch, tiny_config  # noqa: E402


def _parts(**overrides):
    main, create = tiny_config("muzero", **overrides)
    main["policy"]["model"]["norm_type"] = "LN"
    return build_components(compile_config(main, create, seed=0))


def _batch(n_episode: int = 32, batch: int = 128, **overrides):
    parts = _parts(action_reward_loss_weight=1.0, action_value_loss_weight=1.0, **overrides)
    segments, _ = parts["collector"].collect(n_episode=n_episode)
    parts["buffer"].push_segments(segments)
    return parts, parts["buffer"].sample(batch, np.random.default_rng(0))


def test_the_loop_wires_the_env_rule_and_the_unrolled_observations():
    parts, batch = _batch()
    assert parts["policy"].next_observations == ENV_REGISTRY.get("tictactoe").next_observations
    K = batch.actions.shape[1]
    assert batch.obs_unroll.shape == (128, K) + batch.obs.shape[1:]
    assert _parts(action_reward_loss_weight=1.0)["policy"].next_observations is None


def test_action_value_loss_by_hand():
    parts, batch = _batch()
    policy = parts["policy"]
    model, target = policy.model, policy.target_model
    with torch.no_grad():  # a target network that differs from the model, so the targets are not its own outputs
        for p in target.parameters():
            p.add_(0.05 * torch.randn_like(p))
    torch.manual_seed(0)
    _, stats, _ = policy.compute_loss(batch)
    torch.manual_seed(0)
    K = batch.actions.shape[1]
    rule = ENV_REGISTRY.get("tictactoe").next_observations
    t_ar = policy.to_tensor(batch.target_action_reward)
    obs = [policy.to_tensor(batch.obs)] + [policy.to_tensor(batch.obs_unroll[:, k]) for k in range(K - 1)]
    want = torch.zeros(128)
    with torch.no_grad():
        extra = MuZeroPolicy._extra_actions(torch.as_tensor(batch.target_action_reward),
                                            torch.as_tensor(batch.legal_mask[:, :K]))
        latent = model.initial_inference(obs[0]).latent_state
        for k in range(K):
            out = model.recurrent_inference(latent, extra[:, k])
            after_obs, after_legal = rule(obs[k], extra[:, k])
            tgt = target.initial_inference(after_obs)
            ends = (t_ar[:, k].gather(1, extra[:, k:k + 1]).squeeze(1) != 0) | ~after_legal.any(-1)
            t_value = torch.where(ends, 0.0, target.to_scalar(tgt.value))
            t_pi = F.softmax(tgt.policy_logits.masked_fill(~after_legal, -1e9), -1)
            loss = policy._value_loss(out.value, t_value) - (~ends).float() * (t_pi * F.log_softmax(out.policy_logits, -1)).sum(-1)
            want += policy.to_tensor(batch.mask_unroll[:, k]) * loss
            latent = model.recurrent_inference(latent, torch.as_tensor(batch.actions[:, k])).latent_state
    np.testing.assert_allclose(stats["action_value_loss"], want.mean().item(), rtol=1e-4)


@pytest.mark.parametrize("depth", [1, 2])
def test_all_moves_adds_every_legal_move_at_the_sampled_position(depth):
    parts, batch = _batch(action_reward_depth=depth)
    policy = parts["policy"]
    model, target = policy.model, policy.target_model
    with torch.no_grad():
        for p in target.parameters():
            p.add_(0.05 * torch.randn_like(p))
    torch.manual_seed(0)
    _, base, _ = policy.compute_loss(batch)
    policy.cfg.action_value_all_moves = True
    torch.manual_seed(0)
    _, stats, _ = policy.compute_loss(batch)
    rule = ENV_REGISTRY.get("tictactoe").next_observations
    obs = policy.to_tensor(batch.obs)
    want = torch.zeros(len(obs))
    with torch.no_grad():
        latent = model.initial_inference(obs).latent_state
        for i in range(len(obs)):  # one position and one move at a time
            moves = np.flatnonzero(batch.legal_mask[i, 0])
            for a in moves:
                act = torch.tensor([int(a)])
                out = model.recurrent_inference(latent[i:i + 1], act)
                after_obs, after_legal = rule(obs[i:i + 1], act)
                tgt = target.initial_inference(after_obs)
                first = batch.target_action_reward[i, 0] if depth == 1 else batch.target_action_reward[i, 0, 0]
                ends = bool(first[a] != 0) or not bool(after_legal.any())
                t_value = torch.zeros(1) if ends else target.to_scalar(tgt.value).view(1)
                loss = policy._value_loss(out.value, t_value)
                if not ends:
                    t_pi = F.softmax(tgt.policy_logits.masked_fill(~after_legal, -1e9), -1)
                    loss = loss - (t_pi * F.log_softmax(out.policy_logits, -1)).sum(-1)
                want[i] += loss.item() / len(moves)
    np.testing.assert_allclose(stats["action_value_loss"] - base["action_value_loss"], want.mean().item(), rtol=1e-3)


def test_all_moves_needs_the_action_value_loss():
    with pytest.raises(ValueError, match="set action_value_loss_weight > 0 too"):
        _parts(action_reward_loss_weight=1.0, action_value_all_moves=True)


def _gap_after_training(batch, weight: float, steps: int = 300) -> float:
    """Mean |value through the dynamics - value of the real position| after unplayed, non-final moves at the
    sampled roots, for a policy trained ``steps`` Adam steps on ``batch`` (target network synced every 25)."""
    torch.manual_seed(0)
    p = _parts(action_reward_loss_weight=1.0, action_value_loss_weight=weight)["policy"]
    p.next_observations = ENV_REGISTRY.get("tictactoe").next_observations
    fit_batch(p, batch, steps, sync_target_every=25)
    rows, acts = np.nonzero(batch.legal_mask[:, 0] & (batch.target_action_reward[:, 0] == 0)
                            & (np.arange(9) != batch.actions[:, :1]))
    obs = p.to_tensor(batch.obs[rows])
    a = torch.as_tensor(acts)
    with torch.no_grad():
        after_obs, after_legal = p.next_observations(obs, a)
        keep = after_legal.any(-1)
        through = p.model.to_scalar(p.model.recurrent_inference(p.model.initial_inference(obs).latent_state, a).value)
        real = p.model.to_scalar(p.model.initial_inference(after_obs).value)
    return (through - real)[keep].abs().mean().item()


def test_it_teaches_the_value_of_positions_after_moves_not_played():
    _, batch = _batch()
    with_loss, without = _gap_after_training(batch, 1.0), _gap_after_training(batch, 0.0)
    assert with_loss < 0.5 * without, (with_loss, without)


def test_it_needs_the_action_reward_loss():
    with pytest.raises(ValueError, match="set action_reward_loss_weight > 0 too"):
        _parts(action_value_loss_weight=1.0)
