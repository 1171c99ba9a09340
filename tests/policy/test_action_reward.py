"""policy.action_reward_loss_weight: the reward head also learns the real reward of moves not played.

The collector records, at every step, the reward each legal action would have given (board envs: does it win
at once?); the buffer gathers it along the unroll; MuZero's loss trains the reward of one extra action per
unrolled latent, a winning one half the time there is one.
"""
from __future__ import annotations

import dataclasses
import os
import sys

import numpy as np
import pytest
import torch

import zoo
from lzlite.buffer import GameSegment, ReplayBuffer
from lzlite.buffer.augment import SymmetryAugmenter
from lzlite.config import compile_config
from lzlite.entry.loop import build_components
from lzlite.envs.vector import BoardVectorEnv
from lzlite.policy.muzero import MuZeroPolicy
from lzlite.registry import ENV_REGISTRY

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import fit_batch, tiny_config  # noqa: E402


def _parts(**overrides):
    main, create = tiny_config("muzero", **overrides)
    main["policy"]["model"]["norm_type"] = "LN"  # no batch statistics between training and probing
    return build_components(compile_config(main, create, seed=0))


def _trained_policy(batch, steps: int = 300, **overrides):
    """A fresh seeded policy after ``steps`` Adam steps on ``batch`` alone."""
    torch.manual_seed(0)
    p = _parts(**overrides)["policy"]
    return fit_batch(p, batch, steps)


def test_board_env_action_rewards_are_the_immediate_wins_and_leave_the_games_alone():
    env = BoardVectorEnv("connect4", 3)
    env.reset()
    for a in [0, 1, 0, 1, 0, 1]:  # game 0: three stones in columns 0 and 1 each; the first player to move
        env.step(np.array([a]), np.array([0]))
    env.step(np.array([3]), np.array([2]))  # game 2: one stone, nothing to win
    before = env.states.copy()
    got = env.action_rewards(np.array([0, 2]))
    np.testing.assert_array_equal(got, [[1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(env.states, before)

    ttt = BoardVectorEnv("tictactoe", 1)
    ttt.reset()
    for a in [0, 3, 1, 4]:  # X on 0, 1; O on 3, 4: X wins at 2; 3 and 4 are taken (illegal: 0)
        ttt.step(np.array([a]))
    want = np.zeros(9, np.float32)
    want[2] = 1
    np.testing.assert_array_equal(ttt.action_rewards(np.array([0]))[0], want)


def test_segment_takes_action_rewards_at_every_step_or_none():
    seg = GameSegment(3)
    mask = np.ones(3, bool)
    seg.append(np.zeros(2, np.float32), 0, 0.0, 0, mask, 0.0, np.ones(3), action_reward=[0, 1, 0])
    with pytest.raises(ValueError, match="action_reward must be given at every step of a segment or at none"):
        seg.append(np.zeros(2, np.float32), 1, 0.0, 1, mask, 0.0, np.ones(3))
    with pytest.raises(ValueError, match=r"action_reward must be a finite array of shape \(3,\)"):
        seg.append(np.zeros(2, np.float32), 1, 0.0, 1, mask, 0.0, np.ones(3), action_reward=[0, 1])
    seg.append(np.zeros(2, np.float32), 1, 1.0, 1, mask, 0.0, np.ones(3), action_reward=[0, 1, 0])
    seg.close(None, done=True)
    np.testing.assert_array_equal(seg.freeze().action_reward, [[0, 1, 0], [0, 1, 0]])

    plain = GameSegment(3)
    plain.append(np.zeros(2, np.float32), 0, 1.0, 0, mask, 0.0, np.ones(3))
    plain.close(None, done=True)
    assert plain.freeze().action_reward is None
    buf = ReplayBuffer(dict(replay_buffer_size=100, batch_size=2, num_unroll_steps=1, td_steps=1))
    buf.push_segments([seg])
    with pytest.raises(ValueError, match="segment 0: no action_reward, unlike the first segment pushed"):
        buf.push_segments([plain])


def test_collector_records_each_moves_real_reward_and_the_buffer_unrolls_them():
    parts = _parts(action_reward_loss_weight=1.0)
    segments, _ = parts["collector"].collect(n_episode=16)
    wins = 0
    for seg in segments:
        f = seg.freeze()
        assert f.action_reward.shape == f.legal_mask.shape
        # the recorded reward of the move played is the reward it got; illegal moves record 0
        np.testing.assert_array_equal(f.action_reward[np.arange(len(f)), f.action], f.reward)
        assert not f.action_reward[~f.legal_mask].any()
        wins += int((f.action_reward == 1).any(axis=1).sum())
    assert wins > len(segments), "random tic-tac-toe self-play offers many immediate wins"
    buf = parts["buffer"]
    buf.push_segments(segments)
    batch = buf.sample(64, np.random.default_rng(0))
    K = batch.actions.shape[1]
    t = batch.target_action_reward
    assert t.shape == (64, K, 9)
    real = batch.mask_unroll[:, :K]
    rows, ks = np.nonzero(real)
    np.testing.assert_array_equal(t[rows, ks, batch.actions[rows, ks]], batch.target_reward[rows, ks])
    np.testing.assert_array_equal(t[rows, ks] != 0, (t[rows, ks] != 0) & batch.legal_mask[rows, ks])
    assert not t[~real].any(), "beyond the end of the game: no rewards"


def test_mirror_augmentation_permutes_action_rewards_with_the_actions():
    game = zoo.make_batch_game("connect4")
    aug = SymmetryAugmenter.for_env(ENV_REGISTRY.get("connect4"), tuple(game.obs_shape), 7)
    parts_rng = np.random.default_rng(1)
    seg = GameSegment(7)
    env = BoardVectorEnv("connect4", 1)
    env.reset()
    for t in range(9):
        legal = env.legal_mask()[0]
        a = int(parts_rng.choice(np.flatnonzero(legal)))
        ar = env.action_rewards(np.array([0]))[0]
        ar[6] = 0.5  # mark one column so the permutation is visible
        r, d = env.step(np.array([a]))
        seg.append(env.observe()[0], a, float(r[0]), t % 2, legal, 0.0, np.ones(7), action_reward=ar)
        if d[0]:
            break
    seg.close(env.observe()[0], done=bool(d[0]), bootstrap_value=None if d[0] else 0.0)
    buf = ReplayBuffer(dict(replay_buffer_size=100, batch_size=4, num_unroll_steps=2, td_steps=2))
    buf.push_segments([seg])
    batch = buf.sample(4, np.random.default_rng(0))
    mirrored = aug(batch, np.random.default_rng(0), g=np.ones(4, np.int64))
    np.testing.assert_array_equal(mirrored.target_action_reward, batch.target_action_reward[..., ::-1])
    np.testing.assert_array_equal(mirrored.legal_mask, batch.legal_mask[..., ::-1])


def test_extra_actions_pick_a_win_half_the_time_and_never_an_illegal_move():
    torch.manual_seed(0)
    n = 20000
    legal = torch.zeros(n, 2, 5, dtype=torch.bool)
    legal[:, :, :4] = True  # action 4 illegal
    reward = torch.zeros(n, 2, 5)
    reward[:, 0, 2] = 1.0  # step 0: action 2 wins; step 1: nothing wins
    legal[:7, 1] = False  # rows past the end: nothing legal (any action, masked in the loss)
    extra = MuZeroPolicy._extra_actions(reward, legal)
    assert extra.shape == (n, 2)
    assert (extra[:, 0] != 4).all() and (extra[7:, 1] != 4).all()
    share = (extra[:, 0] == 2).float().mean().item()
    assert abs(share - (0.5 + 0.5 / 4)) < 0.015
    counts = torch.bincount(extra[7:, 1], minlength=5)[:4].float() / (n - 7)
    assert (counts - 0.25).abs().max() < 0.015


def test_action_reward_loss_by_hand_and_it_teaches_the_reward_of_moves_not_played():
    parts = _parts(action_reward_loss_weight=4.0)
    policy, buffer = parts["policy"], parts["buffer"]
    segments, _ = parts["collector"].collect(n_episode=32)
    buffer.push_segments(segments)
    batch = buffer.sample(128, np.random.default_rng(0))
    torch.manual_seed(0)
    _, stats, _ = policy.compute_loss(batch)
    torch.manual_seed(0)
    model = policy.model
    K = batch.actions.shape[1]
    with torch.no_grad():
        extra = MuZeroPolicy._extra_actions(torch.as_tensor(batch.target_action_reward),
                                            torch.as_tensor(batch.legal_mask[:, :K]))
        t_ar = policy.to_tensor(batch.target_action_reward)
        latent = model.initial_inference(policy.to_tensor(batch.obs)).latent_state
        want = torch.zeros(128)
        for k in range(K):
            reward = model.recurrent_inference(latent, extra[:, k]).reward
            target = t_ar[:, k].gather(1, extra[:, k:k + 1]).squeeze(1)
            want += policy.to_tensor(batch.mask_unroll[:, k]) * policy._value_loss(reward, target)
            latent = model.recurrent_inference(latent, torch.as_tensor(batch.actions[:, k])).latent_state
    np.testing.assert_allclose(stats["action_reward_loss"], want.mean().item(), rtol=1e-4)

    # the winning moves at the sampled roots that were not played: the reward the model gives them
    rows, acts = np.nonzero((batch.target_action_reward[:, 0] == 1) & (np.arange(9) != batch.actions[:, :1]))
    assert len(rows) >= 5

    def seen_after_training(weight: float) -> float:
        p = _trained_policy(batch, action_reward_loss_weight=weight)
        with torch.no_grad():
            root = p.model.initial_inference(p.to_tensor(batch.obs[rows])).latent_state
            return p.model.to_scalar(p.model.recurrent_inference(root, torch.as_tensor(acts)).reward).mean().item()

    assert seen_after_training(4.0) > 0.6 > 0.3 > seen_after_training(0.0)


def test_weight_without_recorded_action_rewards_is_a_clear_error():
    parts = _parts()
    segments, _ = parts["collector"].collect(n_episode=8)
    parts["buffer"].push_segments(segments)
    batch = parts["buffer"].sample(16, np.random.default_rng(0))
    assert batch.target_action_reward is None
    policy = _parts(action_reward_loss_weight=1.0)["policy"]
    with pytest.raises(ValueError, match="collected without per-action rewards"):
        policy.compute_loss(batch)


def test_weight_on_an_env_that_cannot_try_moves_is_a_clear_error(monkeypatch):
    from lzlite.config import ConfigError
    from lzlite.envs.vector import GymVectorEnv

    assert not GymVectorEnv.can_try_actions  # CartPole (gymnasium, an optional dependency) cannot copy its state
    monkeypatch.setattr(BoardVectorEnv, "can_try_actions", False)
    with pytest.raises(ConfigError, match="action_reward_loss_weight=1.0 needs an env that can try every move "
                                          "without playing it; env 'tictactoe' cannot"):
        _parts(action_reward_loss_weight=1.0)


# ----------------------------------------------------------------------------- depth 2: the opponent's replies
def test_reply_rewards_hold_the_opponents_wins_after_each_move():
    env = BoardVectorEnv("connect4", 2)
    env.reset()
    for a in [0, 1, 0, 1, 0]:  # game 0: three of the first player's stones in column 0; the second player to move
        env.step(np.array([a]), np.array([0]))
    before = env.states.copy()
    got = env.reply_rewards(np.array([0, 1]))
    assert got.shape == (2, 8, 7) and got.dtype == np.float32
    want = np.zeros((8, 7), np.float32)
    want[2:, 0] = 1  # every move but blocking column 0 lets the first player win there
    np.testing.assert_array_equal(got[0], want)
    assert not got[1].any()
    np.testing.assert_array_equal(env.states, before)

    ttt = BoardVectorEnv("tictactoe", 1)
    ttt.reset()
    for a in [0, 3, 1]:  # X on 0, 1 threatens 2; O on 3 (to move) wins at 5 after 4, unless it must block
        ttt.step(np.array([a]))
    r = ttt.reply_rewards(np.array([0]))[0]
    np.testing.assert_array_equal(r[0], 0)  # O cannot win at once
    assert r[1 + 2].sum() == 0 and r[1 + 4, 2] == 1 and r[1 + 4].sum() == 1  # after O blocks, X has no win
    assert not r[1 + 0].any() and not r[1 + 1].any() and not r[1 + 3].any()  # illegal moves: nothing


def test_depth_two_records_the_next_positions_rewards_and_mirrors_both_axes():
    parts = _parts(action_reward_loss_weight=1.0, action_reward_depth=2)
    segments, _ = parts["collector"].collect(n_episode=16)
    for seg in segments:
        f = seg.freeze()
        assert f.action_reward.shape == (len(f), 10, 9)
        np.testing.assert_array_equal(f.action_reward[np.arange(len(f)), 0, f.action], f.reward)
        # the replies recorded after the move played are the next position's own action rewards
        for t in range(len(f) - 1):
            np.testing.assert_array_equal(f.action_reward[t, 1 + f.action[t]], f.action_reward[t + 1, 0])
    buf = parts["buffer"]
    buf.push_segments(segments)
    batch = buf.sample(32, np.random.default_rng(0))
    assert batch.target_action_reward.shape == (32, 3, 10, 9)
    aug = SymmetryAugmenter.for_env(ENV_REGISTRY.get("tictactoe"), (3, 3, 3), 9)
    g = np.full(32, 3, np.int64)
    out = aug(batch, np.random.default_rng(0), g=g)
    perm = aug.action_perms[3]
    src = batch.target_action_reward
    np.testing.assert_array_equal(out.target_action_reward[:, :, 0], src[:, :, 0][..., perm])
    np.testing.assert_array_equal(out.target_action_reward[:, :, 1:], src[:, :, 1:][:, :, perm][..., perm])
    with pytest.raises(ValueError, match=r"action_reward of shape \(10, 9\) per step, but the first segment pushed "
                                         r"had \(9,\)"):
        one = _parts(action_reward_loss_weight=1.0)
        one["buffer"].push_segments(one["collector"].collect(n_episode=2)[0])
        one["buffer"].push_segments(segments)
    with pytest.raises(ValueError, match="action_reward_depth must be 1"):
        _parts(action_reward_loss_weight=1.0, action_reward_depth=3)


def test_depth_two_loss_by_hand_and_it_teaches_the_reply_after_a_move_not_played():
    parts = _parts(action_reward_loss_weight=4.0, action_reward_depth=2)
    policy, buffer = parts["policy"], parts["buffer"]
    buffer.push_segments(parts["collector"].collect(n_episode=32)[0])
    batch = buffer.sample(128, np.random.default_rng(0))
    torch.manual_seed(0)
    _, stats, _ = policy.compute_loss(batch)
    torch.manual_seed(0)
    model = policy.model
    K = batch.actions.shape[1]
    t = torch.as_tensor(batch.target_action_reward)
    legal = torch.as_tensor(batch.legal_mask[:, :K])
    extra = MuZeroPolicy._extra_actions(t[:, :, 0], legal)
    safe = legal & (t[:, :, 0] == 0)
    move = MuZeroPolicy._extra_actions(t[:, :, 1:].ne(0).any(-1).float(), safe)
    rows = torch.arange(128)
    replies = torch.stack([t[rows, k, 1 + move[:, k]] for k in range(K)], dim=1)
    reply = MuZeroPolicy._extra_actions(replies, legal)
    with torch.no_grad():
        latent = model.initial_inference(policy.to_tensor(batch.obs)).latent_state
        want = torch.zeros(128)
        for k in range(K):
            first = policy._value_loss(model.recurrent_inference(latent, extra[:, k]).reward, t[rows, k, 0, extra[:, k]])
            after = model.recurrent_inference(latent, move[:, k]).latent_state
            second = policy._value_loss(model.recurrent_inference(after, reply[:, k]).reward,
                                        t[rows, k, 1 + move[:, k], reply[:, k]])
            want += torch.as_tensor(batch.mask_unroll[:, k]).float() * (first + safe[:, k].any(-1).float() * second)
            latent = model.recurrent_inference(latent, torch.as_tensor(batch.actions[:, k])).latent_state
    np.testing.assert_allclose(stats["action_reward_loss"], want.mean().item(), rtol=1e-4)

    # pairs (b, y) at the sampled roots: b not played, y the opponent's immediate win after b
    r, b, y = np.nonzero(batch.target_action_reward[:, 0, 1:] == 1)
    keep = b != batch.actions[r, 0]
    r, b, y = r[keep], b[keep], y[keep]
    assert len(r) >= 10

    def seen_after_training(depth: int) -> float:
        data = batch
        if depth == 1:  # the same positions with the depth-1 targets
            data = dataclasses.replace(batch, target_action_reward=batch.target_action_reward[:, :, 0])
        p = _trained_policy(data, action_reward_loss_weight=4.0, action_reward_depth=depth)
        with torch.no_grad():
            root = p.model.initial_inference(p.to_tensor(batch.obs[r])).latent_state
            after = p.model.recurrent_inference(root, torch.as_tensor(b)).latent_state
            return p.model.to_scalar(p.model.recurrent_inference(after, torch.as_tensor(y)).reward).mean().item()

    two, one = seen_after_training(2), seen_after_training(1)
    print(f"reply win seen after training: depth 2 {two:.3f}, depth 1 {one:.3f}")
    assert two > 0.45 and two > one + 0.25  # (0.69, 0.34) on one thread, (0.52, 0.18) on two here
