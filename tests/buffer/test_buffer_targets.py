"""Hand-computed n-step target tables for the pure functions in lzlite.buffer.targets."""
import numpy as np
import pytest

from lzlite.buffer.targets import gather_unrolled, nstep_value_targets, unroll_positions


def _episode(rewards, values, v_end=0.0):
    """Ring arrays of one episode: L moves then the final-state row."""
    reward = np.array(list(rewards) + [0.0], np.float32)
    value = np.array(list(values) + [v_end], np.float32)
    return reward, value, len(rewards)


# Single-player: r = [1, 2, 3, 4], v = [10, 20, 30, 40], terminal after the 4th move.
SINGLE = [
    # (n, gamma, z_0..z_3)
    (1, 1.0, [21.0, 32.0, 43.0, 4.0]),  # r_t + v_{t+1}; v at the terminal end is 0
    (3, 1.0, [46.0, 9.0, 7.0, 4.0]),  # 1+2+3+v_3; beyond the end nothing is added
    (3, 0.9, [1 + 0.9 * 2 + 0.81 * 3 + 0.729 * 40, 2 + 0.9 * 3 + 0.81 * 4, 3 + 0.9 * 4, 4.0]),
    (100, 1.0, [10.0, 9.0, 7.0, 4.0]),  # Monte-Carlo return
    (100, 0.9, [1 + 0.9 * 2 + 0.81 * 3 + 0.729 * 4, 2 + 0.9 * 3 + 0.81 * 4, 3 + 0.9 * 4, 4.0]),
]


@pytest.mark.parametrize("n,gamma,expected", SINGLE)
def test_single_player_table(n, gamma, expected):
    reward, value, L = _episode([1, 2, 3, 4], [10, 20, 30, 40])
    pos = np.arange(L + 2)  # includes the final state (z = v_end = 0) and one step beyond (z = 0)
    pos_c = np.minimum(pos, L)
    z = nstep_value_targets(reward, value, pos_c, L, n, gamma, +1, beyond_end=pos > L)
    np.testing.assert_allclose(z, expected + [0.0, 0.0], rtol=1e-6, atol=1e-6)


# Two-player (value_sign -1): the first player moves at t = 0, 2, 4 and wins with the move at t = 4.
TWO = [
    (1, 1.0, [-0.2, -0.3, -0.4, -0.5, 1.0]),  # r_t - v_{t+1}
    (3, 0.9, [-0.729 * 0.4, -0.729 * 0.5, 0.81, -0.9, 1.0]),  # v_5 is terminal: 0
    (3, 1.0, [-0.4, -0.5, 1.0, -1.0, 1.0]),
    (9, 1.0, [1.0, -1.0, 1.0, -1.0, 1.0]),  # AlphaZero: winner's positions +1, loser's -1
]


@pytest.mark.parametrize("n,gamma,expected", TWO)
def test_two_player_table(n, gamma, expected):
    reward, value, L = _episode([0, 0, 0, 0, 1], [0.1, 0.2, 0.3, 0.4, 0.5])
    z = nstep_value_targets(reward, value, np.arange(L), L, n, gamma, -1)
    np.testing.assert_allclose(z, expected, rtol=1e-6, atol=1e-6)


def test_two_player_draw_is_zero():
    reward, value, L = _episode([0] * 9, [0.3] * 9)
    z = nstep_value_targets(reward, value, np.arange(L), L, 50, 1.0, -1)
    np.testing.assert_array_equal(z, np.zeros(9, np.float32))


def test_cut_segment_bootstraps_from_final_state():
    # r = [1, 1], v = [5, 6], cut with bootstrap value 7 at the state after the 2nd move.
    reward, value, L = _episode([1, 1], [5, 6], v_end=7.0)
    z = nstep_value_targets(reward, value, np.array([0, 1, 2]), L, 3, 1.0, +1)
    np.testing.assert_allclose(z, [1 + 1 + 7, 1 + 7, 7])
    z1 = nstep_value_targets(reward, value, np.array([0, 1]), L, 1, 0.5, -1)
    np.testing.assert_allclose(z1, [1 - 0.5 * 6, 1 - 0.5 * 7])


def test_max_horizon_does_not_change_values():
    rng = np.random.default_rng(0)
    reward, value, L = _episode(rng.normal(size=7), rng.normal(size=7))
    a = nstep_value_targets(reward, value, np.arange(L), L, 50, 0.95, -1)
    b = nstep_value_targets(reward, value, np.arange(L), L, 50, 0.95, -1, max_horizon=L)
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_ring_wraparound_matches_flat():
    # The same episode stored across the ring's seam gives the same targets.
    r = [0.5, -1.0, 2.0, 0.25, 1.0]
    v = [1.0, 2.0, 3.0, 4.0, 5.0]
    reward, value, L = _episode(r, v)
    C, shift = 8, 5  # rows 5, 6, 7, 0, 1, 2 (final)
    ring_r, ring_v = np.zeros(C, np.float32), np.zeros(C, np.float32)
    ring_r[(shift + np.arange(L + 1)) % C] = reward
    ring_v[(shift + np.arange(L + 1)) % C] = value
    flat = nstep_value_targets(reward, value, np.arange(L), L, 3, 0.9, -1)
    ring = nstep_value_targets(ring_r, ring_v, shift + np.arange(L), shift + L, 3, 0.9, -1)
    np.testing.assert_allclose(ring, flat, rtol=1e-6)


def test_unroll_positions_and_gather():
    # Start at t = 2 of a 4-move episode (end row 4) with K = 3: steps 2, 3 real; 4 final; 5 beyond.
    pos, mask = unroll_positions(np.array([2]), np.array([4]), 3)
    np.testing.assert_array_equal(pos, [[2, 3, 4, 4]])
    np.testing.assert_array_equal(mask, [[True, True, False, False]])
    policy = np.eye(5, 3, dtype=np.float32)
    out = gather_unrolled(policy, pos, mask, 0.0)
    np.testing.assert_array_equal(out[0], [[0, 0, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(gather_unrolled(np.arange(5), pos, mask, -1), [[2, 3, -1, -1]])


def test_bad_td_steps():
    reward, value, L = _episode([1], [1])
    with pytest.raises(ValueError, match="td_steps"):
        nstep_value_targets(reward, value, np.arange(L), L, 0, 1.0, 1)
