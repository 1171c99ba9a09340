"""UniZero training flow: segment collector cuts, buffer segment targets, reanalyze weighting, end to end."""
from __future__ import annotations

import os
import types
from typing import Optional

import numpy as np
import pytest
import torch
from easydict import EasyDict

from lzlite.buffer import GameSegment
from lzlite.buffer.unizero_buffer import PaddedGameSegment, UniZeroBuffer
from lzlite.config import compile_config, extend_base
from lzlite.entry import train_unizero_segment
from lzlite.worker.checkpoint import load_checkpoint
from lzlite.worker.segment_collector import SegmentCollector


@pytest.fixture(autouse=True)
def one_torch_thread():
    # tiny networks on a shared CPU: extra intra-op threads only contend
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


# ----------------------------------------------------------------------------- fakes
class CountdownEnv:
    """Single-player vector env: env i's episodes last lengths[i] moves; obs = [i, ply]; reward of move = ply + 1."""

    two_player = False
    value_sign = 1.0
    num_actions = 2
    obs_shape = (2,)

    def __init__(self, lengths):
        self.lengths = np.asarray(lengths)
        self.num_envs = len(lengths)
        self.ply = np.zeros(self.num_envs, np.int64)
        self.done = np.zeros(self.num_envs, bool)
        self.resets = 0

    def reset(self, idx: Optional[np.ndarray] = None) -> None:
        idx = np.arange(self.num_envs) if idx is None else np.asarray(idx)
        self.ply[idx] = 0
        self.done[idx] = False
        self.resets += len(idx)

    def observe(self) -> np.ndarray:
        return np.stack([np.arange(self.num_envs), self.ply], axis=1).astype(np.float32)

    def legal_mask(self) -> np.ndarray:
        return np.ones((self.num_envs, 2), bool)

    def to_play(self) -> np.ndarray:
        return np.full(self.num_envs, -1, np.int64)

    def step(self, actions, idx):
        rewards = (self.ply[idx] + 1).astype(np.float32)
        self.ply[idx] += 1
        done = self.ply[idx] >= self.lengths[idx]
        self.done[idx] |= done
        return rewards, done


class FakePolicy:
    """Plays action 0; the search's root value at (env i, ply p) is 100 i + p + 0.5, so bootstraps are traceable."""

    def collect_temperature(self, train_iter):
        return 1.0

    def act(self, venv, idx, rng, mode="collect", temperature=0.0):
        v = (100 * idx + venv.ply[idx] + 0.5).astype(np.float32)
        visits = np.tile(np.array([3, 1], np.int32), (len(idx), 1))
        return types.SimpleNamespace(action=np.zeros(len(idx), np.int64), visit_counts=visits, root_value=v,
                                     predicted_value=v)

    def policy_target(self, out):
        return out.visit_counts / out.visit_counts.sum(1, keepdims=True)


def _collector(lengths, L, K, n):
    cfg = EasyDict(game_segment_length=L, num_segments=1, num_unroll_steps=K, td_steps=n, temperature_moves=-1,
                   random_opening_plies=0)
    return SegmentCollector(FakePolicy(), CountdownEnv(lengths), cfg, np.random.default_rng(0))


# ----------------------------------------------------------------------------- collector
def test_segment_collector_cuts_pads_and_bootstraps():
    # one env, episodes of 7 moves, L = 3 own moves, P = K + n = 1 + 1 = 2 padding moves
    col = _collector([7], L=3, K=1, n=1)
    segs, stats = col.collect(num_segments=1)
    # the first segment closes at the search of ply 5 (after its padding plies 3, 4): mid-episode
    assert len(segs) == 1 and stats["env_steps"] == 6 and stats["episodes"] == 0
    s0 = segs[0].freeze()
    assert len(segs[0]) == 3  # own moves: what the loop counts as env steps
    np.testing.assert_array_equal(s0.obs[:, 1], [0, 1, 2, 3, 4])  # own plies 0..2 + padding 3, 4
    np.testing.assert_array_equal(s0.reward, [1, 2, 3, 4, 5])
    assert not s0.done and s0.bootstrap_value == pytest.approx(5.5)  # root value of the search at ply 5
    np.testing.assert_array_equal(s0.final_obs, [0, 5])
    # the next call continues the SAME episode (no reset) and closes at its end
    segs, stats = col.collect(num_segments=2)
    assert col.venv.resets == 2  # the initial reset and the one after the episode end, none per call
    assert [len(s) for s in segs] == [3, 1] and stats["episodes"] == 1 and stats["mean_return"] == 28
    s1, s2 = segs[0].freeze(), segs[1].freeze()
    np.testing.assert_array_equal(s1.obs[:, 1], [3, 4, 5, 6])  # own 3..5, padding cut short by the end
    assert s1.done and s1.bootstrap_value == 0.0
    np.testing.assert_array_equal(s2.obs[:, 1], [6])
    assert s2.done and s2.bootstrap_value == 0.0
    np.testing.assert_array_equal(s2.final_obs, [0, 7])  # the state after the terminal move


def test_padded_segment_lengths_and_env_step_accounting():
    seg = PaddedGameSegment(2, 2, 1)
    mask = np.ones(2, bool)
    for _ in range(2):
        seg.append(np.zeros(2), 0, 1.0, -1, mask, 0.0, np.array([1.0, 0.0]))
    assert seg.own_full and not seg.is_full and len(seg) == 2
    seg.append(np.zeros(2), 0, 1.0, -1, mask, 0.0, np.array([1.0, 0.0]))  # the padding move
    assert seg.is_full and len(seg) == 2 and seg.num_moves == 3
    with pytest.raises(ValueError, match="full"):
        seg.append(np.zeros(2), 0, 1.0, -1, mask, 0.0, np.array([1.0, 0.0]))
    # two envs with different episode lengths interleave; every env step is the own move of exactly
    # one segment (closed, still filling, or waiting for its padding), never of two
    col = _collector([4, 5], L=2, K=1, n=1)
    segs = []
    for _ in range(3):
        segs += col.collect(num_segments=3)[0]
    open_own = sum(len(s) for s in col._current) + sum(len(s) for t in col._tails for s in t)
    assert sum(len(s) for s in segs) + open_own == col.env_steps
    for s in segs:  # own plies of a segment are consecutive and start at a multiple of L
        plies = s.freeze().obs[:, 1]
        assert plies[0] % 2 == 0 and np.array_equal(plies, plies[0] + np.arange(len(plies)))


# ----------------------------------------------------------------------------- buffer
def _padded(rewards, values, own, done, bootstrap, A=2, offset=0.0):
    seg = PaddedGameSegment(A, own, len(rewards) - own)
    for t, (r, v) in enumerate(zip(rewards, values)):
        seg.append(np.array([offset, t], np.float32), t % A, r, -1, np.ones(A, bool), v, np.eye(A)[t % A])
    seg.close(np.array([offset, len(rewards)], np.float32), done=done, bootstrap_value=None if done else bootstrap)
    return seg


def _sample_many(buf, calls, seed):
    """Concatenated starts / fields of many small samples (a batch may not exceed num_transitions)."""
    rng = np.random.default_rng(seed)
    return [buf.sample(buf.num_transitions, rng) for _ in range(calls)]


def _buffer(**kw):
    cfg = dict(replay_buffer_size=100, num_unroll_steps=2, td_steps=2, discount_factor=0.5, value_sign=1)
    cfg.update(kw)
    return UniZeroBuffer(cfg)


def test_buffer_segment_targets_use_padding():
    buf = _buffer()
    # own moves 0..2, padding 3..4, cut: bootstrap 60 at the state after move 4
    buf.push_segments([_padded([1, 2, 3, 4, 5], [10, 20, 30, 40, 50], own=3, done=False, bootstrap=60)])
    assert buf.num_transitions == 3  # padding rows are never starts
    batches = _sample_many(buf, 30, seed=0)
    assert set(np.concatenate([x.indices for x in batches]).tolist()) == {0, 1, 2}
    b = next(x for x in batches if 2 in x.indices)
    row = int(np.flatnonzero(b.indices == 2)[0])
    # z_t = r_t + g r_{t+1} + g^2 v_{t+2} (g = 0.5), reading the padding rows past the cut
    np.testing.assert_allclose(b.target_value[row], [3 + 0.5 * 4 + 0.25 * 50, 4 + 0.5 * 5 + 0.25 * 60, 5 + 0.5 * 60])
    np.testing.assert_allclose(b.target_reward[row], [3, 4])
    np.testing.assert_array_equal(b.obs_seq[row][:, 1], [2, 3, 4])
    np.testing.assert_array_equal(b.actions[row], [0, 1])
    assert b.mask_state[row].all() and b.mask_unroll[row].all()
    np.testing.assert_allclose(b.target_policy[row], [[1, 0], [0, 1], [1, 0]])


def test_buffer_terminal_segment_masks_and_zero_value():
    buf = _buffer(num_unroll_steps=3)
    buf.push_segments([_padded([1, 2], [10, 20], own=2, done=True, bootstrap=None)])
    b = next(x for x in _sample_many(buf, 30, seed=1) if 1 in x.indices)
    row = int(np.flatnonzero(b.indices == 1)[0])
    # steps: move 1, the terminal state (real: value 0, reached by a real move), then beyond the end
    np.testing.assert_array_equal(b.mask_state[row], [True, True, False, False])
    np.testing.assert_array_equal(b.mask_unroll[row], [True, False, False, False])
    np.testing.assert_allclose(b.target_value[row], [2, 0, 0, 0])
    np.testing.assert_allclose(b.target_reward[row], [2, 0, 0])
    np.testing.assert_array_equal(b.obs_seq[row][:, 1], [1, 2, 2, 2])  # the final obs repeats past the end
    np.testing.assert_allclose(b.target_policy[row, 1:], 0)


def test_plain_game_segments_are_accepted():
    buf = _buffer()
    seg = GameSegment(2)
    for t in range(3):
        seg.append(np.array([0, t], np.float32), 0, 1.0, -1, np.ones(2, bool), 0.0, np.array([1.0, 0.0]))
    seg.close(None, done=True)
    buf.push_segments([seg])
    assert buf.num_transitions == 3


def test_reanalyze_refreshes_stalest_and_down_weights():
    buf = _buffer(reanalyze_weight_decay=0.5)
    a = _padded([1, 1, 1, 1], [0, 0, 0, 0], own=3, done=False, bootstrap=7, offset=0.0)
    b = _padded([1, 1, 1], [0, 0, 0], own=3, done=True, bootstrap=None, offset=1.0)
    buf.push_segments([a, b])
    calls = []

    def fn(obs, legal):
        calls.append((obs.copy(), legal.copy()))
        return obs[:, 0] * 100 + obs[:, 1], np.tile([0.25, 0.75], (len(obs), 1))

    stats = buf.reanalyze_segments(fn, 1)
    # the oldest of the equally stale segments: a's 4 move rows (own + padding) and its cut final row
    assert stats["segments"] == 1 and stats["positions"] == 5
    np.testing.assert_array_equal(calls[0][0][:, 1], [0, 1, 2, 3, 4])
    assert calls[0][1].all()
    np.testing.assert_allclose(buf._value[:5], [0, 1, 2, 3, 4])  # incl. the bootstrap row (was 7)
    np.testing.assert_allclose(buf._policy[:4], np.tile([0.25, 0.75], (4, 1)))
    np.testing.assert_array_equal(buf.segment_reanalyze_counts(), [1, 0])
    # sampling: a's starts have weight 0.5, b's 1 -> P(a) = 3 * 0.5 / (3 * 0.5 + 3) = 1/3
    slots, weights = buf._sample_slots(30000, np.random.default_rng(2))
    assert abs(float(np.mean(slots < 5)) - 1 / 3) < 0.015 and (weights == 1).all()
    s = buf.sample(6, np.random.default_rng(2))
    assert (s.reanalyze_count == (s.indices < 5)).all() and (s.weights == 1).all()
    # the next round takes the now-stalest segment b; its terminal final row is not searched
    stats = buf.reanalyze_segments(fn, 1)
    assert stats["positions"] == 3
    np.testing.assert_array_equal(calls[1][0][:, 0], [1, 1, 1])
    assert buf._value[8] == 0.0  # b's terminal final row stays 0
    np.testing.assert_array_equal(buf.segment_reanalyze_counts(), [1, 1])
    # state round trip keeps the sampling weights
    other = _buffer(reanalyze_weight_decay=0.5)
    other.load_state_dict(buf.state_dict())
    np.testing.assert_array_equal(other.sample(6, np.random.default_rng(3)).indices,
                                  buf.sample(6, np.random.default_rng(3)).indices)


# ----------------------------------------------------------------------------- end to end
def tiny_unizero_config(exp_name="tiny_unizero", **policy_overrides):
    policy = dict(
        model=dict(observation_shape=[3, 3, 3], action_space_size=9, embed_dim=16, num_layers=1, num_heads=1,
                   max_tokens=32, encoder_channels=4, head_hidden=16, support_scale=5),
        num_simulations=8, collector_env_num=8, num_segments=8, game_segment_length=4, num_unroll_steps=4,
        td_steps=9, discount_factor=1.0, batch_size=32, replay_ratio=0.25, replay_buffer_size=2000,
        eval_freq=1000, eval_episodes=4, eval_bots=["random"], save_ckpt_freq=1000,
        reanalyze_interval=10, reanalyze_num_segments=16, reanalyze_batch_size=64)
    policy.update(policy_overrides)
    return list(extend_base("unizero", dict(exp_name=exp_name, policy=policy), dict(env=dict(type="tictactoe"))))


def test_train_unizero_segment_end_to_end(tmp_path):
    from lzlite.entry.loop import build_components

    cfg = tiny_unizero_config()
    parts = build_components(compile_config(*cfg, seed=0))
    assert type(parts["collector"]).__name__ == "SegmentCollector"
    assert type(parts["buffer"]).__name__ == "UniZeroBuffer"
    initial = [p.detach().clone() for p in parts["policy"].model.parameters()]
    policy = train_unizero_segment(cfg, seed=0, max_env_step=300, run_dir=str(tmp_path), progress=False)
    state = load_checkpoint(str(tmp_path / "ckpt" / "last.pt"))
    assert state["counters"]["env_steps"] >= 300
    assert state["counters"]["train_iter"] > 20
    assert any(not torch.equal(a, b.detach()) for a, b in zip(initial, policy.model.parameters()))
    assert policy.last_reanalyze is not None and policy.last_reanalyze["positions"] > 0
    ev = policy.final_eval
    assert abs(ev["random/win"] + ev["random/draw"] + ev["random/loss"] - 1.0) < 1e-6
    assert os.path.isfile(tmp_path / "config.py")


def test_max_tokens_too_small_is_a_clear_error():
    cfg = tiny_unizero_config(num_simulations=20)  # depth 20 needs 41 tokens > 32
    from lzlite.entry.loop import build_components

    with pytest.raises(ValueError, match="max_tokens=32 is too small"):
        build_components(compile_config(*cfg, seed=0))


# ----------------------------------------------------------------------------- slow learning checks
@pytest.mark.slow
def test_tictactoe_unizero_learns_perfect_play(tmp_path):
    """python -m pytest -q -m slow tests/policy/test_unizero.py -k tictactoe (about an hour on CPU)."""
    from lzlite.config import load_config_file

    main, create = load_config_file(os.path.join(os.path.dirname(__file__), "..", "..", "zoo", "tictactoe",
                                                 "unizero_config.py"))
    policy = train_unizero_segment([main, create], seed=0, run_dir=str(tmp_path), progress=False)
    ev = policy.final_eval
    assert ev["perfect/loss"] == 0.0 and ev["rule/loss"] == 0.0


@pytest.mark.slow
def test_cartpole_unizero_reaches_400(tmp_path):
    """python -m pytest -q -m slow tests/policy/test_unizero.py -k cartpole (long on CPU; gymnasium is in [test])."""
    from lzlite.config import load_config_file

    main, create = load_config_file(os.path.join(os.path.dirname(__file__), "..", "..", "zoo", "cartpole",
                                                 "unizero_config.py"))
    policy = train_unizero_segment([main, create], seed=0, run_dir=str(tmp_path), progress=False)
    assert policy.final_eval["mean_return"] >= 400
