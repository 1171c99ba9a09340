"""Grounded Gumbel MuZero (zoo/connect4/grounded_muzero.py): the registered subclass the Connect Four recipe trains.

It declares its extra per-step records through the policy seam (step_fields / record_step): the collector records
the reward of every legal move, the buffer gathers it along the unroll, the augmenter mirrors it; its loss adds a
per-move reward term and an observation reconstruction term along MuZero's unroll.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import zoo
from lzlite.buffer import GameSegment, ReplayBuffer
from lzlite.buffer.augment import SymmetryAugmenter
from lzlite.config import compile_config, load_config_file
from lzlite.entry.loop import build_components
from lzlite.envs.vector import BoardVectorEnv
from lzlite.model.muzero import MuZeroModel, MuZeroModelMLP
from lzlite.registry import ENV_REGISTRY
from zoo.connect4.grounded_muzero import GroundedGumbelMuZeroPolicy, move_rewards

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import fit_batch, tiny_config  # noqa: E402

def _parts(decoder: bool = True, **overrides):
    main, create = tiny_config("grounded_gumbel_muzero", **overrides)
    main["policy"]["model"].update(norm_type="LN", observation_decoder=decoder)  # LN: no batch statistics
    return build_components(compile_config(main, create, seed=0))


def _batch(batch: int = 128, n_episode: int = 32, **overrides):
    parts = _parts(**overrides)
    parts["buffer"].push_segments(parts["collector"].collect(n_episode=n_episode)[0])
    return parts, parts["buffer"].sample(batch, np.random.default_rng(0))


def test_the_connect4_recipe_names_it_and_its_defaults_are_the_recipes():
    cfg = compile_config(*load_config_file("zoo/connect4/gumbel_muzero_config.py"))
    assert cfg.create.policy.type == "grounded_gumbel_muzero"
    assert (cfg.policy.action_reward_loss_weight, cfg.policy.obs_recon_loss_weight) == (4.0, 1.0)
    assert cfg.policy.model.observation_decoder and cfg.policy.search_rule == "gumbel"
    with pytest.raises(Exception, match="obs_recon_loss_weight"):  # the shared MuZero offers neither key
        compile_config(dict(policy=dict(obs_recon_loss_weight=1.0)), dict(env=dict(type="tictactoe"),
                                                                          policy=dict(type="gumbel_muzero")))


def test_move_rewards_are_the_immediate_wins_and_leave_the_games_alone():
    env = BoardVectorEnv("connect4", 3)
    env.reset()
    for a in [0, 1, 0, 1, 0, 1]:  # game 0: three stones in columns 0 and 1 each; the first player to move
        env.step(np.array([a]), np.array([0]))
    env.step(np.array([3]), np.array([2]))  # game 2: one stone, nothing to win
    before = env.states.copy()
    got = move_rewards(env.game, env.states[[0, 2]])
    np.testing.assert_array_equal(got, [[1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(env.states, before)

    ttt = BoardVectorEnv("tictactoe", 1)
    ttt.reset()
    for a in [0, 3, 1, 4]:  # X on 0, 1; O on 3, 4: X wins at 2; 3 and 4 are taken (illegal: 0)
        ttt.step(np.array([a]))
    want = np.zeros(9, np.float32)
    want[2] = 1
    np.testing.assert_array_equal(move_rewards(ttt.game, ttt.states)[0], want)


def test_collector_records_each_moves_real_reward_and_the_buffer_unrolls_them():
    parts = _parts()
    assert parts["buffer"].cfg.unroll_fields == ["obs", "action_reward"]  # the loop wires the policy's fields
    segments, _ = parts["collector"].collect(n_episode=16)
    wins = 0
    for seg in segments:
        f = seg.freeze()
        ar = f.extras["action_reward"]
        assert ar.shape == f.legal_mask.shape
        # the recorded reward of the move played is the reward it got; illegal moves record 0
        np.testing.assert_array_equal(ar[np.arange(len(f)), f.action], f.reward)
        assert not ar[~f.legal_mask].any()
        wins += int((ar == 1).any(axis=1).sum())
    assert wins > len(segments), "random tic-tac-toe self-play offers many immediate wins"
    buf = parts["buffer"]
    buf.push_segments(segments)
    batch = buf.sample(64, np.random.default_rng(0))
    K = batch.actions.shape[1]
    t = batch.unrolled["action_reward"]
    assert t.shape == (64, K + 1, 9)
    real = batch.mask_unroll
    rows, ks = np.nonzero(real[:, :K])
    np.testing.assert_array_equal(t[rows, ks, batch.actions[rows, ks]], batch.target_reward[rows, ks])
    assert not t[~real].any(), "at and beyond the end of the game: no rewards"


def test_mirror_augmentation_permutes_the_move_rewards_with_the_actions():
    game = zoo.make_batch_game("connect4")
    policy = _parts()["policy"]
    aug = SymmetryAugmenter.for_env(ENV_REGISTRY.get("connect4"), tuple(game.obs_shape), 7, policy.step_fields())
    rng = np.random.default_rng(1)
    seg = GameSegment(7)
    env = BoardVectorEnv("connect4", 1)
    env.reset()
    for t in range(9):
        legal = env.legal_mask()[0]
        a = int(rng.choice(np.flatnonzero(legal)))
        ar = move_rewards(env.game, env.states)[0]
        ar[6] = 0.5  # mark one column so the permutation is visible
        obs = env.observe()[0]
        r, d = env.step(np.array([a]))
        seg.append(obs, a, float(r[0]), t % 2, legal, 0.0, np.ones(7), extras={"action_reward": ar})
        if d[0]:
            break
    seg.close(env.observe()[0], done=bool(d[0]), bootstrap_value=None if d[0] else 0.0)
    buf = ReplayBuffer(dict(replay_buffer_size=100, batch_size=4, num_unroll_steps=2, td_steps=2,
                            unroll_fields=["obs", "action_reward"]))
    buf.push_segments([seg])
    batch = buf.sample(4, np.random.default_rng(0))
    mirrored = aug(batch, np.random.default_rng(0), g=np.ones(4, np.int64))
    np.testing.assert_array_equal(mirrored.unrolled["action_reward"], batch.unrolled["action_reward"][..., ::-1])
    np.testing.assert_array_equal(mirrored.unrolled["obs"], batch.unrolled["obs"][..., ::-1])
    np.testing.assert_array_equal(mirrored.legal_mask, batch.legal_mask[..., ::-1])


def test_extra_moves_pick_a_win_half_the_time_and_never_an_illegal_move():
    torch.manual_seed(0)
    n = 20000
    legal = torch.zeros(n, 2, 5, dtype=torch.bool)
    legal[:, :, :4] = True  # action 4 illegal
    reward = torch.zeros(n, 2, 5)
    reward[:, 0, 2] = 1.0  # step 0: action 2 wins; step 1: nothing wins
    legal[:7, 1] = False  # rows past the end: nothing legal (any action, masked in the loss)
    extra = GroundedGumbelMuZeroPolicy.extra_moves(reward, legal)
    assert extra.shape == (n, 2)
    assert (extra[:, 0] != 4).all() and (extra[7:, 1] != 4).all()
    share = (extra[:, 0] == 2).float().mean().item()
    assert abs(share - (0.5 + 0.5 / 4)) < 0.015
    counts = torch.bincount(extra[7:, 1], minlength=5)[:4].float() / (n - 7)
    assert (counts - 0.25).abs().max() < 0.015


def _bce(model, latent: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
    """Per-row mean binary cross-entropy of the decoded latent, written out without the library's helper."""
    p = torch.sigmoid(model.decode_observation(latent))
    return -(obs * torch.log(p) + (1 - obs) * torch.log(1 - p)).flatten(1).mean(1)


def test_both_losses_by_hand():
    parts, batch = _batch()
    policy, model = parts["policy"], parts["policy"].model
    torch.manual_seed(0)
    _, stats, _ = policy.compute_loss(batch)
    torch.manual_seed(0)
    K = batch.actions.shape[1]
    mask = policy.to_tensor(batch.mask_unroll)
    rewards = batch.unrolled["action_reward"]
    with torch.no_grad():
        extra = policy.extra_moves(torch.as_tensor(rewards[:, :K]), torch.as_tensor(batch.legal_mask[:, :K]))
        root = policy.to_tensor(batch.obs)
        latent = model.initial_inference(root).latent_state
        want_ar, want_recon = torch.zeros(128), _bce(model, latent, root)
        for k in range(K):
            reward = model.recurrent_inference(latent, extra[:, k]).reward
            target = policy.to_tensor(rewards[:, k]).gather(1, extra[:, k:k + 1]).squeeze(1)
            want_ar += mask[:, k] * policy._reward_loss(reward, target)
            latent = model.recurrent_inference(latent, torch.as_tensor(batch.actions[:, k])).latent_state
            # the latent after move k stands for the stored position t+k+1 when that move was real
            want_recon += mask[:, k] * _bce(model, latent, policy.to_tensor(batch.unrolled["obs"][:, k + 1]))
    assert 0 < (mask[:, :-1] == 0).sum() < mask[:, :-1].numel()  # rows past a game's end are in the batch
    np.testing.assert_allclose(stats["action_reward_loss"], want_ar.mean().item(), rtol=1e-4)
    np.testing.assert_allclose(stats["obs_recon_loss"], want_recon.mean().item(), rtol=1e-5)
    _, off, _ = _parts(decoder=False, obs_recon_loss_weight=0.0, action_reward_loss_weight=0.0)["policy"].compute_loss(batch)
    assert off["obs_recon_loss"] == 0.0 and off["action_reward_loss"] == 0.0


def test_it_teaches_the_reward_of_moves_not_played():
    _, batch = _batch()
    # the winning moves at the sampled roots that were not played: the reward the model gives them
    rows, acts = np.nonzero((batch.unrolled["action_reward"][:, 0] == 1) & (np.arange(9) != batch.actions[:, :1]))
    assert len(rows) >= 5

    def seen_after_training(weight: float) -> float:
        torch.manual_seed(0)
        p = fit_batch(_parts(action_reward_loss_weight=weight, obs_recon_loss_weight=0.0)["policy"], batch, 300)
        with torch.no_grad():
            root = p.model.initial_inference(p.to_tensor(batch.obs[rows])).latent_state
            return p.model.to_scalar(p.model.recurrent_inference(root, torch.as_tensor(acts)).reward).mean().item()

    assert seen_after_training(4.0) > 0.6 > 0.3 > seen_after_training(0.0)


def _decoded_accuracy_after_training(batch, weight: float, steps: int = 150) -> float:
    """Fraction of board cells the dynamics' latent after the first played move decodes right (threshold 0.5) for a
    policy trained ``steps`` Adam steps on ``batch``; the decoder is fitted afresh on the representation's latents of
    the batch for both settings, so only what the latents hold differs."""
    torch.manual_seed(0)
    p = fit_batch(_parts(obs_recon_loss_weight=weight, action_reward_loss_weight=0.0)["policy"], batch, steps)
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
    real = p.to_tensor(batch.unrolled["obs"][keep, 1])
    with torch.no_grad():
        return ((decoder(through) > 0).float() == real).float().mean().item()


def test_reconstruction_makes_the_dynamics_carry_the_board():
    """Trained on one batch, the dynamics' latent after a move decodes (through a probe fitted on root latents) to the
    real next board far more often with the loss than without it."""
    _, batch = _batch(batch=64)
    with_loss = _decoded_accuracy_after_training(batch, 1.0)
    without = _decoded_accuracy_after_training(batch, 0.0)
    assert with_loss > 0.9 and with_loss > without + 0.2, (with_loss, without)


def test_clear_errors(monkeypatch):
    with pytest.raises(ValueError, match="observation_decoder=True"):
        _parts(decoder=False)
    parts, batch = _batch(n_episode=8, batch=16)
    bad = parts["buffer"].sample(16, np.random.default_rng(0))
    bad.obs = bad.obs * 2.0 - 1.0  # planes in [-1, 1]
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        parts["policy"].compute_loss(bad)
    # a batch from a buffer that never recorded the moves' rewards
    plain = _parts(decoder=False, obs_recon_loss_weight=0.0, action_reward_loss_weight=0.0)
    plain["buffer"].push_segments(plain["collector"].collect(n_episode=8)[0])
    assert "action_reward" not in plain["buffer"].sample(16, np.random.default_rng(0)).unrolled
    buf = ReplayBuffer(dict(replay_buffer_size=2000, num_unroll_steps=3, td_steps=5, unroll_fields=["action_reward"]))
    buf.push_segments(plain["collector"].collect(n_episode=8)[0])
    with pytest.raises(ValueError, match="carry no such record"):
        buf.sample(16, np.random.default_rng(0))
    # an env that holds no game states (CartPole's, say) cannot try every move
    with pytest.raises(ValueError, match="needs a board-game env"):
        parts["policy"].record_step(object(), np.array([0]))
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
