"""ReplayBuffer: targets against a loop reference, eviction, reanalyze, reproducibility, errors."""
import numpy as np
import pytest

from buffer_testlib import A, random_episodes, reference_value, tagged_segment
from lzlite.buffer import GameSegment, ReplayBuffer
from lzlite.config import ConfigError
from lzlite.registry import BUFFER_REGISTRY


def _check_batch(batch, episodes, cfg, v_ends=None):
    """Every row of ``batch`` against the loop reference; rows are located by their (seg_id, t) obs."""
    K, n, g, s = cfg["num_unroll_steps"], cfg["td_steps"], cfg["discount_factor"], cfg["value_sign"]
    for b in range(batch.obs.shape[0]):
        seg_id, t = int(batch.obs[b, 0]), int(batch.obs[b, 1])
        rewards, values = episodes[seg_id]
        L = len(rewards)
        v_end = 0.0 if v_ends is None else v_ends[seg_id]
        for k in range(K + 1):
            real = t + k < L
            assert batch.mask_unroll[b, k] == real
            expect = reference_value(rewards, values, t + k, n, g, s, v_end)
            assert batch.target_value[b, k] == pytest.approx(expect, abs=1e-5), (seg_id, t, k)
            pi = np.zeros(A, np.float32)
            if real:
                pi[(t + k + 1) % A] = 1.0
            np.testing.assert_array_equal(batch.target_policy[b, k], pi)
            assert batch.legal_mask[b, k].all() == real and batch.legal_mask[b, k].any() == real
            if k < K:
                assert batch.target_reward[b, k] == pytest.approx(rewards[t + k] if real else 0.0)
                if real:
                    assert batch.actions[b, k] == (t + k) % A
                assert 0 <= batch.actions[b, k] < A
        if "obs" in batch.unrolled:  # the observations at t..t+K, the final one repeated beyond the end
            for k in range(K + 1):
                np.testing.assert_array_equal(batch.unrolled["obs"][b, k], [seg_id, min(t + k, L)])


@pytest.mark.parametrize("K,n,gamma,sign", [(0, 1, 1.0, 1), (5, 3, 0.9, -1), (3, 50, 1.0, -1), (2, 5, 0.997, 1)])
def test_targets_match_reference(K, n, gamma, sign):
    rng = np.random.default_rng(0)
    episodes = random_episodes(rng, 20)
    cfg = dict(replay_buffer_size=1000, num_unroll_steps=K, td_steps=n, discount_factor=gamma, value_sign=sign,
               unroll_fields=["obs"])
    buf = ReplayBuffer(cfg)
    buf.push_segments([tagged_segment(i, r, v) for i, (r, v) in enumerate(episodes)])
    assert buf.num_transitions == len(buf) == sum(len(r) for r, _ in episodes)
    assert buf.num_episodes == 20
    for _ in range(5):
        batch = buf.sample(64, rng)
        assert batch.unrolled["obs"].shape == (64, K + 1, 2)
        np.testing.assert_array_equal(batch.weights, 1.0)
        _check_batch(batch, episodes, cfg)


def test_extras_are_gathered_along_the_unroll_and_saved():
    """A policy's per-step records (GameSegment extras) come back at t..t+K, zeros at and beyond the end."""
    segs = []
    for seg_id, length in enumerate([3, 5]):
        seg = GameSegment(A)
        for t in range(length):
            seg.append(np.array([seg_id, t], np.float32), t % A, 0.0, t % 2, np.ones(A, bool), 0.0, np.ones(A),
                       extras={"tag": [seg_id, t + 1.0]})
        seg.close(None, done=True)
        segs.append(seg)
    buf = ReplayBuffer(dict(replay_buffer_size=100, num_unroll_steps=4, td_steps=2, unroll_fields=["tag"]))
    buf.push_segments(segs)
    batch = buf.sample(8, np.random.default_rng(0))
    for b in range(8):
        seg_id, t = (int(x) for x in batch.obs[b])
        for k in range(5):
            want = [seg_id, t + k + 1.0] if t + k < [3, 5][seg_id] else [0.0, 0.0]
            np.testing.assert_array_equal(batch.unrolled["tag"][b, k], want)
    other = ReplayBuffer(dict(replay_buffer_size=100, num_unroll_steps=4, td_steps=2, unroll_fields=["tag"]))
    other.load_state_dict(buf.state_dict())
    np.testing.assert_array_equal(other.sample(8, np.random.default_rng(0)).unrolled["tag"], batch.unrolled["tag"])
    plain = GameSegment(A)
    plain.append(np.zeros(2, np.float32), 0, 0.0, 0, np.ones(A, bool), 0.0, np.ones(A))
    plain.close(None, done=True)
    with pytest.raises(ValueError, match="every segment of a buffer carries the same records"):
        buf.push_segments([plain])


def test_cut_segments_bootstrap_value():
    rng = np.random.default_rng(1)
    episodes = random_episodes(rng, 10)
    v_ends = rng.normal(size=10).round(2).tolist()
    cfg = dict(replay_buffer_size=500, num_unroll_steps=4, td_steps=3, discount_factor=0.9, value_sign=-1)
    buf = ReplayBuffer(cfg)
    buf.push_segments([tagged_segment(i, r, v, done=False, bootstrap_value=v_ends[i])
                       for i, (r, v) in enumerate(episodes)])
    for _ in range(5):
        _check_batch(buf.sample(64, rng), episodes, cfg, v_ends)


def test_alphazero_monte_carlo_tictactoe():
    # X plays 0, O 3, X 1, O 4, X 2: X completes the top row with its 3rd move (reward +1 to X).
    def game(moves, winner_last):
        seg = GameSegment(9)
        board = np.zeros((3, 3, 3), np.float32)
        for t, a in enumerate(moves):
            legal = board[:2].sum(0).ravel() == 0
            r = 1.0 if (winner_last and t == len(moves) - 1) else 0.0
            seg.append(board.copy(), a, r, to_play=1 + t % 2, legal_mask=legal, root_value=0.0,
                       policy=legal / legal.sum())
            board[t % 2].flat[a] = 1
        seg.close(board, done=True)
        return seg

    cfg = dict(replay_buffer_size=100, num_unroll_steps=0, td_steps=9, discount_factor=1.0, value_sign=-1)
    win = ReplayBuffer(cfg)
    win.push_segments([game([0, 3, 1, 4, 2], True)])
    batch = win.sample(5, np.random.default_rng(0))
    expected = np.where(batch.to_play[:, 0] == 1, 1.0, -1.0)  # X's positions +1, O's -1
    np.testing.assert_array_equal(batch.target_value[:, 0], expected)
    assert set(batch.to_play[:, 0]) <= {1, 2}
    draw = ReplayBuffer(cfg)
    draw.push_segments([game([0, 1, 2, 4, 3, 5, 7, 6, 8], False)])
    np.testing.assert_array_equal(draw.sample(9, np.random.default_rng(0)).target_value, 0.0)


def test_ring_eviction_keeps_targets_right():
    rng = np.random.default_rng(2)
    episodes = random_episodes(rng, 60)
    cfg = dict(replay_buffer_size=53, num_unroll_steps=3, td_steps=4, discount_factor=0.9, value_sign=-1,
               unroll_fields=["obs"])
    buf = ReplayBuffer(cfg)
    for i in range(0, 60, 3):  # several pushes, each wrapping the ring at some point
        buf.push_segments([tagged_segment(j, *episodes[j]) for j in range(i, i + 3)])
        # Invariant: every live sampleable row's final row is live and belongs to the same segment.
        live = buf._sampleable
        total, C = buf._total, buf.capacity
        assert np.all(buf._pos[live] >= total - C)
        end_slots = buf._end[live] % C
        assert np.all(buf._pos[end_slots] == buf._end[live])
        assert np.all(buf._segment[end_slots] == buf._segment[live])
        assert buf.num_transitions == int(live.sum())
        _check_batch(buf.sample(min(32, len(buf)), rng), episodes, cfg)
    # Only the newest segments remain, the oldest one possibly in part.
    seg_ids = {int(x) for x in buf._obs[buf._sampleable][:, 0]}
    assert max(seg_ids) == 59 and buf.num_episodes == len(seg_ids) == 60 - min(seg_ids)
    assert buf.num_transitions < sum(len(r) for r, _ in episodes[-8:])


def test_seeded_sampling_is_reproducible():
    episodes = random_episodes(np.random.default_rng(3), 15)
    buf = ReplayBuffer(dict(replay_buffer_size=200, num_unroll_steps=5, td_steps=2, value_sign=-1))
    buf.push_segments([tagged_segment(i, *e) for i, e in enumerate(episodes)])
    a = buf.sample(32, np.random.default_rng(7))
    b = buf.sample(32, np.random.default_rng(7))
    c = buf.sample(32, np.random.default_rng(8))
    for name in a.__dataclass_fields__:
        if getattr(a, name) is not None:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert not np.array_equal(a.indices, c.indices)


def test_reanalyze_called_once_with_right_obs():
    # One single-player episode of 6 moves, r = 1 each, v = 10 + t; n = 2, K = 1, gamma = 1.
    rewards, values = [1.0] * 6, [10.0 + t for t in range(6)]
    buf = ReplayBuffer(dict(replay_buffer_size=100, num_unroll_steps=1, td_steps=2, discount_factor=1.0,
                            reanalyze_ratio=1.0))
    buf.push_segments([tagged_segment(0, rewards, values)])
    calls = []

    def fn(obs, legal):
        assert legal.shape == (len(obs), A) and legal.all()  # the stored masks (all legal in these games)
        calls.append(obs.copy())
        t = obs[:, 1]
        pol = np.zeros((len(t), A), np.float32)
        pol[:, 3] = 1.0
        return 100.0 + t, pol

    batch = buf.sample(6, np.random.default_rng(0), reanalyze_fn=fn)
    assert len(calls) == 1
    starts = batch.obs[:, 1].astype(int)
    # Needed: bootstrap states t+k+2 strictly inside the episode, and real steps t+k (policies), once each.
    need = {t + k + 2 for t in starts for k in range(2) if t + k + 2 < 6} | {t + k for t in starts for k in range(2)
                                                                         if t + k < 6}
    got = calls[0][:, 1].astype(int).tolist()
    assert sorted(got) == sorted(need) and len(got) == len(set(got))
    for b, t in enumerate(starts):
        for k in range(2):
            p = t + k
            if p + 2 < 6:
                expect = 2.0 + 100.0 + (p + 2)  # two rewards, then the reanalysed value
            else:
                expect = float(max(0, 6 - p))  # terminal bootstrap: never reanalysed, stays 0
            assert batch.target_value[b, k] == pytest.approx(expect)
            if p < 6:
                np.testing.assert_array_equal(batch.target_policy[b, k], [0, 0, 0, 1])
            else:
                np.testing.assert_array_equal(batch.target_policy[b, k], 0)


def test_reanalyze_ratio_covers_only_a_fraction_and_values_only():
    rewards, values = [0.0] * 8, [1.0] * 8
    buf = ReplayBuffer(dict(replay_buffer_size=100, num_unroll_steps=0, td_steps=1, discount_factor=1.0,
                            reanalyze_ratio=0.5, reanalyze_policy=False))
    buf.push_segments([tagged_segment(0, rewards, values)])
    seen = []
    batch = buf.sample(8, np.random.default_rng(4), reanalyze_fn=lambda o, lg: (seen.append(len(o)) or
                                                                           np.full(len(o), 5.0), None))
    assert len(seen) == 1
    t = batch.obs[:, 1].astype(int)
    expect = np.where(t + 1 < 8, 1.0, 0.0)
    expect[:4] = np.where(t[:4] + 1 < 8, 5.0, 0.0)  # the first half of the batch is reanalysed
    np.testing.assert_allclose(batch.target_value[:, 0], expect)
    assert seen[0] == len(set((t[:4] + 1)[t[:4] + 1 < 8]))


def test_reanalyze_fn_gets_each_positions_stored_legal_mask():
    seg = GameSegment(A)
    for t in range(6):
        legal = np.zeros(A, bool)
        legal[t % A] = legal[(t + 2) % A] = True
        seg.append(np.array([0, t], np.float32), action=t % A, reward=0.0, to_play=-1, legal_mask=legal,
                   root_value=0.0, policy=legal / 2.0)
    seg.close(np.array([0, 6], np.float32), done=True)
    buf = ReplayBuffer(dict(replay_buffer_size=50, num_unroll_steps=2, td_steps=1, discount_factor=1.0,
                            reanalyze_ratio=1.0))
    buf.push_segments([seg])
    got = {}

    def fn(obs, legal):
        for o, lg in zip(obs, legal):
            got[int(o[1])] = np.flatnonzero(lg).tolist()
        return np.zeros(len(obs), np.float32), legal / legal.sum(1, keepdims=True)

    buf.sample(6, np.random.default_rng(0), reanalyze_fn=fn)
    assert got and all(v == sorted({t % A, (t + 2) % A}) for t, v in got.items())


def test_bootstrap_fn_replaces_stored_values_inside_episodes():
    # Two-player cut segment (sign -1, gamma 1): rewards r_t = t, stored v_t = 10 + t, cut-end value 7.
    rewards, values = [float(t) for t in range(6)], [10.0 + t for t in range(6)]
    buf = ReplayBuffer(dict(replay_buffer_size=100, num_unroll_steps=2, td_steps=2, discount_factor=1.0,
                            value_sign=-1, reanalyze_ratio=0.34, reanalyze_policy=False))
    buf.push_segments([tagged_segment(0, rewards, values, done=False, bootstrap_value=7.0)])
    calls = []

    def fresh(obs):  # a "target network": 100 + t for the observation (0, t)
        calls.append(obs[:, 1].astype(int).tolist())
        return 100.0 + obs[:, 1]

    batch = buf.sample(6, np.random.default_rng(3), reanalyze_fn=lambda o, lg: (np.full(len(o), -50.0), None),
                       bootstrap_fn=fresh)
    assert len(calls) == 1 and len(calls[0]) == len(set(calls[0]))  # one batched call, each position once
    assert all(b < 6 for b in calls[0])  # the cut end's stored bootstrap (t = 6) is never recomputed
    starts = batch.obs[:, 1].astype(int)
    for row, t in enumerate(starts):
        for k in range(3):
            p = t + k
            if p > 6:
                expect = 0.0
            elif p + 2 < 6:  # in-episode bootstrap: fresh value, or the search's for the reanalysed rows
                boot = -50.0 if row < 2 else 100.0 + p + 2
                expect = rewards[p] - rewards[p + 1] + boot
            else:  # bootstrap at the cut end: stored value 7 after the remaining rewards
                expect = sum((-1.0) ** i * rewards[p + i] for i in range(6 - p)) + (-1.0) ** (6 - p) * 7.0
            assert batch.target_value[row, k] == pytest.approx(expect), (row, t, k)
    with pytest.raises(ValueError, match="bootstrap_fn returned values of shape"):
        buf.sample(4, np.random.default_rng(0), bootstrap_fn=lambda o: np.zeros(len(o) + 1))


def test_registry_and_config():
    assert BUFFER_REGISTRY.get("game_buffer") is ReplayBuffer
    cfg = ReplayBuffer.default_config()
    assert cfg.use_priority is False and cfg.value_sign == 1
    with pytest.raises(ConfigError, match="td_step"):
        ReplayBuffer(dict(td_step=3))
    with pytest.raises(ValueError, match="prioritized_game_buffer"):
        ReplayBuffer(dict(use_priority=True))
    with pytest.raises(ValueError, match="value_sign"):
        ReplayBuffer(dict(value_sign=0))


def test_bad_inputs_give_clear_errors():
    rng = np.random.default_rng(0)
    buf = ReplayBuffer(dict(replay_buffer_size=20))
    with pytest.raises(ValueError, match="empty replay buffer"):
        buf.sample(4, rng)
    buf.push_segments([tagged_segment(0, [1, 2, 3], [0, 0, 0])])
    with pytest.raises(ValueError, match=r"batch_size 4 must be in \[1, num_transitions=3\]"):
        buf.sample(4, rng)
    with pytest.raises(TypeError, match="np.random.Generator"):
        buf.sample(2, 123)
    with pytest.raises(ValueError, match="does not match the buffer"):
        buf.push_segments([tagged_segment(1, [1], [0], num_actions=5)])
    seg = GameSegment(A)
    seg.append(np.zeros(3, np.float32), 0, 0.0, -1, np.ones(A, bool), 0.0, np.ones(A) / A)
    seg.close(done=True)
    with pytest.raises(ValueError, match=r"obs \(3,\)"):
        buf.push_segments([seg])
    with pytest.raises(ValueError, match="replay_buffer_size is 20"):
        buf.push_segments([tagged_segment(2, [0] * 20, [0] * 20)])
    with pytest.raises(TypeError, match="list of GameSegment"):
        buf.push_segments(tagged_segment(3, [1], [1]))
    open_seg = GameSegment(A)
    open_seg.append(np.zeros(2, np.float32), 0, 0.0, -1, np.ones(A, bool), 0.0, np.ones(A) / A)
    with pytest.raises(ValueError, match="not closed"):
        buf.push_segments([open_seg])
    rb = ReplayBuffer(dict(replay_buffer_size=20, reanalyze_ratio=1.0, td_steps=1))
    rb.push_segments([tagged_segment(0, [1, 2, 3], [0, 0, 0])])
    with pytest.raises(ValueError, match="reanalyze_fn returned values of shape"):
        rb.sample(2, rng, reanalyze_fn=lambda o, lg: (np.zeros(len(o) + 1), None))
