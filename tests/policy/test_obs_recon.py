"""policy.obs_recon_loss_weight: every latent of a real position is decoded back into that position's observation
(binary cross-entropy per observation entry, through the model's linear decoder)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lzlite.config import compile_config
from lzlite.entry.loop import build_components
from lzlite.model.muzero import MuZeroModel, MuZeroModelMLP
from lzlite.registry import ENV_REGISTRY

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import fit_batch, tiny_config, walk_extra_moves  # noqa: E402


def _parts(decoder: bool = True, **overrides):
    main, create = tiny_config("muzero", **overrides)
    main["policy"]["model"].update(norm_type="LN", observation_decoder=decoder)
    return build_components(compile_config(main, create, seed=0))


def _batch(batch: int = 128, **overrides):
    parts = _parts(**overrides)
    segments, _ = parts["collector"].collect(n_episode=32)
    parts["buffer"].push_segments(segments)
    return parts, parts["buffer"].sample(batch, np.random.default_rng(0))


def _bce(model, latent: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
    """Per-row mean binary cross-entropy of the decoded latent, written out without the library's helper."""
    p = torch.sigmoid(model.decode_observation(latent))
    return -(obs * torch.log(p) + (1 - obs) * torch.log(1 - p)).flatten(1).mean(1)


def test_the_root_and_the_unrolled_line_by_hand():
    parts, batch = _batch(obs_recon_loss_weight=1.0)
    policy, model = parts["policy"], parts["policy"].model
    assert batch.obs_unroll is not None  # the loop asks the buffer for the unrolled observations
    _, stats, _ = policy.compute_loss(batch)
    mask = policy.to_tensor(batch.mask_unroll)
    with torch.no_grad():
        latent = model.initial_inference(policy.to_tensor(batch.obs)).latent_state
        want = _bce(model, latent, policy.to_tensor(batch.obs))
        for k in range(batch.actions.shape[1]):
            latent = model.recurrent_inference(latent, torch.as_tensor(batch.actions[:, k])).latent_state
            # the latent after move k stands for the stored position t+k+1 when that move was real
            want += mask[:, k] * _bce(model, latent, policy.to_tensor(batch.obs_unroll[:, k]))
    assert 0 < (mask[:, :-1] == 0).sum() < mask[:, :-1].numel()  # rows past a game's end are in the batch
    np.testing.assert_allclose(stats["obs_recon_loss"], want.mean().item(), rtol=1e-5)
    _, off, _ = _parts(decoder=False)["policy"].compute_loss(batch)
    assert off["obs_recon_loss"] == 0.0


def test_the_action_value_moves_are_decoded_too():
    """With the action-value loss on, the latent after each unrolled position's extra move is decoded into the real
    position after that move as well."""
    parts, batch = _batch(obs_recon_loss_weight=1.0, action_reward_loss_weight=1.0, action_value_loss_weight=1.0)
    policy, model = parts["policy"], parts["policy"].model
    torch.manual_seed(0)
    _, stats, _ = policy.compute_loss(batch)
    torch.manual_seed(0)
    mask = policy.to_tensor(batch.mask_unroll)
    with torch.no_grad():
        root_obs = policy.to_tensor(batch.obs)
        want = _bce(model, model.initial_inference(root_obs).latent_state, root_obs)
        for k, _, off_line, after_obs, line, line_obs in walk_extra_moves(policy, batch, ENV_REGISTRY.get(
                "tictactoe").next_observations):
            want += mask[:, k] * (_bce(model, off_line, after_obs) + _bce(model, line, line_obs))
    np.testing.assert_allclose(stats["obs_recon_loss"], want.mean().item(), rtol=1e-5)


def _decoded_accuracy_after_training(batch, weight: float, steps: int = 150) -> float:
    """Fraction of board cells the dynamics' latent after the first two played moves decodes right (threshold 0.5)
    for a policy trained ``steps`` Adam steps on ``batch``; the decoder is fitted afresh on the representation's
    latents of the batch for both settings, so only what the latents hold differs."""
    torch.manual_seed(0)
    p = _parts(obs_recon_loss_weight=weight)["policy"]
    fit_batch(p, batch, steps)
    model = p.model
    keep = batch.mask_unroll[:, 1] > 0
    obs = p.to_tensor(batch.obs[keep])
    with torch.no_grad():
        latent = model.initial_inference(obs).latent_state
        through = model.recurrent_inference(latent, torch.as_tensor(batch.actions[keep, 0])).latent_state
    decoder = torch.nn.Conv2d(latent.shape[1], obs.shape[1], 1)
    opt = torch.optim.Adam(decoder.parameters(), lr=0.05)
    for _ in range(300):  # a linear probe: what the representation's latents hold, cell by cell
        loss = F.binary_cross_entropy_with_logits(decoder(latent), obs)
        opt.zero_grad()
        loss.backward()
        opt.step()
    real = p.to_tensor(batch.obs_unroll[keep, 0])
    with torch.no_grad():
        return ((decoder(through) > 0).float() == real).float().mean().item()


def test_it_makes_the_dynamics_carry_the_board():
    """Trained on one batch, the dynamics' latent after a move decodes (through a probe fitted on root latents) to the
    real next board far more often with the loss than without it."""
    _, batch = _batch(batch=64, obs_recon_loss_weight=1.0)
    with_loss = _decoded_accuracy_after_training(batch, 1.0)
    without = _decoded_accuracy_after_training(batch, 0.0)
    assert with_loss > 0.9 and with_loss > without + 0.2, (with_loss, without)


def test_clear_errors():
    with pytest.raises(ValueError, match="observation_decoder=True"):
        _parts(decoder=False, obs_recon_loss_weight=1.0)
    parts, batch = _batch(obs_recon_loss_weight=1.0)
    batch.obs = batch.obs * 2.0 - 1.0  # planes in [-1, 1]
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        parts["policy"].compute_loss(batch)
    model = MuZeroModel(observation_shape=[3, 3, 3], action_space_size=9, num_channels=8)
    with pytest.raises(RuntimeError, match="observation_decoder=True"):
        model.decode_observation(torch.zeros(2, 8, 3, 3))
    with pytest.raises(ValueError, match="board size"):
        MuZeroModel(observation_shape=[3, 16, 16], action_space_size=4, num_channels=8, downsample=True,
                    observation_decoder=True)


def test_the_decoder_leaves_the_other_weights_as_they_were():
    """Built last: the same seed gives the same network with and without the decoder, so runs compare like for like;
    and the MLP network decodes a flat observation back to its shape."""
    torch.manual_seed(0)
    a = MuZeroModel(observation_shape=[3, 3, 3], action_space_size=9, num_channels=8)
    torch.manual_seed(0)
    b = MuZeroModel(observation_shape=[3, 3, 3], action_space_size=9, num_channels=8, observation_decoder=True)
    for name, w in a.state_dict().items():
        assert torch.equal(w, b.state_dict()[name]), name
    mlp = MuZeroModelMLP(observation_shape=4, action_space_size=2, latent_state_dim=16, observation_decoder=True)
    latent = mlp.initial_inference(torch.zeros(5, 4)).latent_state
    assert mlp.decode_observation(latent).shape == (5, 4)


@pytest.mark.parametrize("extra", [dict(action_value_all_moves=True), dict(action_reward_depth=2),
                                   dict(action_reward_depth=2, action_reward_positions="one")])
def test_every_action_value_path_adds_its_latents(extra):
    """At depth 2, with all moves or one position per row, the action-value latents add reconstruction terms to the
    line's (every term is positive, so the total grows), and the loss still trains the decoder."""
    parts, batch = _batch(obs_recon_loss_weight=1.0, action_reward_loss_weight=1.0, action_value_loss_weight=1.0,
                          **extra)
    policy = parts["policy"]
    depth = extra.get("action_reward_depth", 1)
    _, line_only, _ = _parts(obs_recon_loss_weight=1.0, action_reward_loss_weight=1.0,
                             action_reward_depth=depth)["policy"].compute_loss(batch)
    torch.manual_seed(0)
    loss, stats, _ = policy.compute_loss(batch)
    assert stats["obs_recon_loss"] > line_only["obs_recon_loss"] + 0.05, (stats, line_only)
    loss.backward()
    assert policy.model.decoder.weight.grad.abs().sum() > 0
