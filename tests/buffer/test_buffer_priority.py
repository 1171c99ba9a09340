"""SumTree against a naive reference; prioritized sampling, IS weights and priority updates."""
import numpy as np
import pytest

from buffer_testlib import tagged_segment
from lzlite.buffer import PrioritizedReplayBuffer, SumTree
from lzlite.registry import BUFFER_REGISTRY


def _chi2(counts, probs):
    expected = probs * counts.sum()
    keep = expected > 0
    assert counts[~keep].sum() == 0, "a zero-probability leaf was sampled"
    return float((((counts - expected) ** 2)[keep] / expected[keep]).sum()), int(keep.sum()) - 1


def test_sum_tree_sums_and_find():
    tree = SumTree(5)  # padded to 8 leaves
    tree.update(np.arange(5), [1.0, 0.0, 2.0, 3.0, 4.0])
    assert tree.total == 10.0
    # Prefix sums: [0,1) -> 0, [1,3) -> 2 (leaf 1 has 0), [3,6) -> 3, [6,10) -> 4.
    np.testing.assert_array_equal(tree.find(np.array([0.0, 0.99, 1.0, 2.99, 3.0, 5.9, 6.0, 9.99])),
                                  [0, 0, 2, 2, 3, 3, 4, 4])
    tree.update(np.array([2, 2]), np.array([7.0, 0.5]))  # duplicates: the last value wins
    assert tree.total == pytest.approx(8.5)
    np.testing.assert_array_equal(tree.get(np.arange(5)), [1.0, 0.0, 0.5, 3.0, 4.0])
    # A mass at (or rounding past) the total never lands on an empty padding leaf.
    assert tree.find(np.array([8.5, 1e9]))[0] == 4


def test_sum_tree_matches_naive_reference():
    rng = np.random.default_rng(0)
    N = 37
    pr = rng.random(N) ** 3
    pr[[3, 10, 11]] = 0.0
    tree = SumTree(N)
    tree.update(np.arange(N), pr)
    p = pr / pr.sum()
    draws = 200_000
    ours = np.bincount(tree.sample(draws, np.random.default_rng(1)), minlength=N)
    naive = np.bincount(np.random.default_rng(2).choice(N, size=draws, p=p), minlength=N)
    for counts in (ours, naive):
        chi2, dof = _chi2(counts, p)
        assert chi2 < dof + 6 * np.sqrt(2 * dof), chi2  # ~6 sigma: a wrong tree fails by orders of magnitude
    assert np.abs(ours - naive).max() < 6 * np.sqrt(draws * p.max())


def test_sum_tree_bad_input():
    with pytest.raises(ValueError, match="capacity"):
        SumTree(0)
    tree = SumTree(4)
    with pytest.raises(IndexError, match="out of range"):
        tree.update(np.array([4]), np.array([1.0]))
    with pytest.raises(ValueError, match="non-negative"):
        tree.update(np.array([0]), np.array([-1.0]))
    with pytest.raises(ValueError, match="all 0"):
        tree.sample(3, np.random.default_rng(0))


def _buffer(alpha=0.6, beta=0.4, **kw):
    buf = PrioritizedReplayBuffer(dict(replay_buffer_size=100, num_unroll_steps=2, td_steps=2,
                                       priority_prob_alpha=alpha, priority_prob_beta=beta, **kw))
    buf.push_segments([tagged_segment(0, [0.0] * 5, [0.0] * 5), tagged_segment(1, [0.0] * 3, [0.0] * 3)])
    return buf  # 8 positions: absolute 0..4 and 6..8 (5 and 9 are final states)


def test_registry_and_new_rows_get_max_priority():
    assert BUFFER_REGISTRY.get("prioritized_game_buffer") is PrioritizedReplayBuffer
    buf = _buffer(alpha=1.0)
    np.testing.assert_array_equal(buf.priorities(np.arange(10)), [1, 1, 1, 1, 1, 0, 1, 1, 1, 0])
    buf.update_priorities(np.array([0, 1]), np.array([4.0, 0.5]))
    buf.push_segments([tagged_segment(2, [0.0] * 2, [0.0] * 2)])
    new = buf.priorities(np.array([10, 11, 12]))
    np.testing.assert_allclose(new, [4.0 + 1e-6, 4.0 + 1e-6, 0.0])


def test_prioritized_frequencies_and_is_weights():
    alpha, beta = 0.7, 0.5
    buf = _buffer(alpha, beta)
    positions = np.array([0, 1, 2, 3, 4, 6, 7, 8])
    raw = np.array([1.0, 2.0, 3.0, 0.5, 4.0, 1.5, 0.25, 2.5])
    buf.update_priorities(positions, raw)
    p = (raw + 1e-6) ** alpha
    p /= p.sum()
    rng = np.random.default_rng(5)
    counts = np.zeros(8)
    for _ in range(3000):
        batch = buf.sample(8, rng)
        counts += np.bincount(np.searchsorted(positions, batch.indices), minlength=8)
    chi2, dof = _chi2(counts, p)
    assert chi2 < dof + 6 * np.sqrt(2 * dof), chi2
    # IS weights of the last batch: (N P(i))^-beta normalised by the batch maximum.
    w = (8 * p[np.searchsorted(positions, batch.indices)]) ** -beta
    np.testing.assert_allclose(batch.weights, w / w.max(), rtol=1e-5)


def test_update_priorities_ignores_evicted_and_validates():
    buf = _buffer(alpha=1.0)
    buf.push_segments([tagged_segment(i, [0.0] * 9, [0.0] * 9) for i in range(2, 12)])  # evicts 0..9
    before = buf._tree.total
    buf.update_priorities(np.array([0, 3]), np.array([50.0, 50.0]))  # stale positions: no effect
    assert buf._tree.total == before
    with pytest.raises(ValueError, match="3 indices but 2 priorities"):
        buf.update_priorities(np.array([0, 1, 2]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="finite and >= 0"):
        buf.update_priorities(np.array([0]), np.array([np.nan]))


def test_priority_off_samples_uniformly_with_unit_weights():
    buf = _buffer(use_priority=False)
    buf.update_priorities(np.array([0]), np.array([1000.0]))  # ignored: alpha is 0 without priority
    rng = np.random.default_rng(3)
    idx = np.concatenate([buf.sample(8, rng).indices for _ in range(1000)])
    counts = np.bincount(np.searchsorted([0, 1, 2, 3, 4, 6, 7, 8], idx), minlength=8)
    chi2, dof = _chi2(counts, np.full(8, 1 / 8))
    assert chi2 < dof + 6 * np.sqrt(2 * dof)
    np.testing.assert_array_equal(buf.sample(8, rng).weights, 1.0)


def test_prioritized_sampling_is_reproducible():
    buf = _buffer()
    buf.update_priorities(np.arange(5), np.arange(1.0, 6.0))
    a, b = buf.sample(8, np.random.default_rng(9)), buf.sample(8, np.random.default_rng(9))
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.actions, b.actions)
