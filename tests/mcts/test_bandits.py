"""Closed-form bandits: depth-1 trees (discount 0, so Q(a) = reward(a)) with results derived by hand,
and the sequential-halving schedule as a table."""
import math

import numpy as np
import pytest

from lzlite.mcts.ptree import Tree, considered_visit_sequence


def _bandit(tree, rewards, logits, value, legal=None, **reset_kwargs):
    """Runs a full search where every child's reward is fixed per root action (depth 1 when the
    children are terminal, so later visits repeat the same return)."""
    B, A = logits.shape
    legal = np.ones((B, A), bool) if legal is None else legal
    tree.reset(logits.astype(np.float32), np.asarray(value, np.float32), legal, **reset_kwargs)
    actions = []
    for _ in range(tree.num_simulations):
        _, action, _, _ = tree.traverse()
        actions.append(action.copy())
        r = rewards[np.arange(B), action].astype(np.float32)
        tree.expand_and_backup(r, np.zeros(B, np.float32), np.zeros((B, A), np.float32), None, np.ones(B, bool))
    return np.array(actions).T, tree.outputs()


def test_puct_two_arms_by_hand():
    # prior 0.5 / 0.5, Q = reward = 0.2 / 0.8, c(n) = 1.25 + log((n + 19653) / 19652).
    tree = Tree(1, 2, 4, rule="puct", discount=0.0, value_sign=1.0)
    actions, out = _bandit(tree, np.array([[0.2, 0.8]]), np.zeros((1, 2)), [0.0])
    # s0: N=1, both unvisited, equal prior terms -> tie -> action 0.  Q range = {0.2}.
    # s1: N=2, a0 visited but Qn = 0 (single value), prior term halved -> a1. Q range [0.2, 0.8].
    # s2: N=3, a1: Qn 1 + 0.5 sqrt3/2 c > a0: 0 + 0.5 sqrt3/2 c -> a1.
    # s3: N=4, a0: 0.5 * 2/2 * c = 0.625.. < a1: 1 + 0.5 * 2/3 * c -> a1.
    np.testing.assert_array_equal(actions[0], [0, 1, 1, 1])
    np.testing.assert_array_equal(out["visit_counts"][0], [1, 3])
    np.testing.assert_allclose(out["improved_policy"][0], [0.25, 0.75])
    np.testing.assert_allclose(out["qvalues"][0], [0.2, 0.8], rtol=1e-6)
    np.testing.assert_allclose(out["root_value"][0], (0.0 + 0.2 + 3 * 0.8) / 5, rtol=1e-6)
    assert out["gumbel_action"][0] == -1


def test_puct_prior_breaks_first_tie_and_exploration_grows():
    # With Q equal everywhere (all rewards 0) PUCT follows prior * sqrt(N) / (1 + n): visits
    # proportional to the prior up to rounding; with prior 0.7 / 0.3 and 4 sims: a0 a0 a1 a0.
    c = lambda n: 1.25 + math.log((n + 19652 + 1) / 19652)  # noqa: E731
    p = np.array([0.7, 0.3])
    expected, visits = [], np.zeros(2)
    for s in range(4):
        n = s + 1
        score = p * math.sqrt(n) / (1 + visits) * c(n)
        a = int(np.argmax(score))
        expected.append(a)
        visits[a] += 1
    assert expected == [0, 0, 1, 0]
    tree = Tree(1, 2, 4, rule="puct", discount=0.0, value_sign=1.0)
    actions, out = _bandit(tree, np.zeros((1, 2)), np.log(p)[None], [0.0])
    np.testing.assert_array_equal(actions[0], expected)


def test_puct_never_selects_illegal_and_noise_mixes_prior():
    tree = Tree(1, 3, 6, rule="puct", discount=0.0, value_sign=1.0)
    legal = np.array([[True, False, True]])
    noise = np.array([[0.0, 0.0, 1.0]], np.float32)
    actions, out = _bandit(tree, np.array([[0.0, 5.0, 0.0]]), np.array([[5.0, 9.0, 0.0]]), [0.0], legal,
                           noise=noise, noise_weight=1.0)
    # noise_weight 1: the prior IS the noise (all on action 2), so action 2 takes the first visit.
    assert actions[0, 0] == 2
    assert out["visit_counts"][0, 1] == 0
    assert tree.node_arrays(0)["prior"][0].tolist() == [0.0, 0.0, 1.0]


def _sigma(q, visits, c_visit, c_scale):
    return (c_visit + visits.max()) * c_scale * q


def test_gumbel_sequential_halving_by_hand():
    # A = 3, m = 2, S = 4: schedule (0, 0, 1, 1); considered = top-2 of g + logits = {0, 1}.
    logits = np.array([[1.0, 0.0, 0.5]])
    g = np.array([[0.0, 0.8, 0.0]], np.float32)
    q = np.array([[0.1, 0.5, 0.9]])
    v = 0.3
    tree = Tree(1, 3, 4, rule="gumbel", discount=0.0, value_sign=1.0, max_num_considered_actions=2,
                c_visit=50.0, c_scale=0.1)
    actions, out = _bandit(tree, q, logits, [v], gumbel=g)
    # s0 (visits 0): both unvisited, same completed Q -> g + logits: 1.0 > 0.8 -> a0.
    # s1 (visits 0): only a1 left at 0 visits -> a1.
    # s2 (visits 1): a0: 1.0 + 5.1 * 0.1 = 1.51, a1: 0.8 + 5.1 * 0.5 = 3.35 -> a1.
    # s3 (visits 1): only a0 left at 1 visit -> a0.
    np.testing.assert_array_equal(actions[0], [0, 1, 1, 0])
    np.testing.assert_array_equal(out["visit_counts"][0], [2, 2, 0])
    # Final: both have the max visits 2: a0 1.0 + 5.2 * 0.1, a1 0.8 + 5.2 * 0.5 -> a1.
    assert out["gumbel_action"][0] == 1
    prior = np.exp(logits[0]) / np.exp(logits[0]).sum()
    mixed = (prior[0] * 0.1 + prior[1] * 0.5) / (prior[0] + prior[1])
    v_mix = (v + 4 * mixed) / (1 + 4)
    completed = np.array([0.1, 0.5, v_mix])
    z = logits[0] + _sigma(completed, np.array([2, 2, 0]), 50.0, 0.1)
    np.testing.assert_allclose(out["improved_policy"][0], np.exp(z) / np.exp(z).sum(), rtol=1e-5)
    np.testing.assert_allclose(out["qvalues"][0], [0.1, 0.5, 0.0], rtol=1e-6)


def test_gumbel_rescaled_completed_q_by_hand():
    logits = np.array([[0.0, 0.0, 0.0]])
    q = np.array([[-0.5, 0.5, 0.0]])
    tree = Tree(1, 3, 2, rule="gumbel", discount=0.0, value_sign=1.0, max_num_considered_actions=2,
                c_visit=50.0, c_scale=0.1, rescale_values=True)
    _, out = _bandit(tree, q, logits, [0.0])
    # No gumbel: ties -> considered {0, 1}; one visit each. v_mix = (0 + 2 * 0) / 3 = 0 for a2.
    # Completed Q [-0.5, 0.5, 0] rescaled to [0, 1, 0.5]; sigma = 51 * 0.1 * that.
    np.testing.assert_array_equal(out["visit_counts"][0], [1, 1, 0])
    z = 5.1 * np.array([0.0, 1.0, 0.5])
    np.testing.assert_allclose(out["improved_policy"][0], np.exp(z) / np.exp(z).sum(), rtol=1e-5)
    assert out["gumbel_action"][0] == 1


def test_gumbel_m_larger_than_legal_actions():
    tree = Tree(1, 4, 4, rule="gumbel", discount=0.0, value_sign=1.0, max_num_considered_actions=16)
    legal = np.array([[False, True, False, True]])
    _, out = _bandit(tree, np.array([[0.0, 0.1, 0.0, 0.2]]), np.zeros((1, 4)), [0.0], legal)
    # m = min(16, 2) = 2 -> schedule (0, 0, 1, 1): two visits each on the legal actions.
    np.testing.assert_array_equal(out["visit_counts"][0], [0, 2, 0, 2])
    assert out["gumbel_action"][0] == 3
    assert out["improved_policy"][0, 0] == 0 and out["improved_policy"][0, 2] == 0


@pytest.mark.parametrize("m, S, expected", [
    (1, 5, (0, 1, 2, 3, 4)),
    (2, 4, (0, 0, 1, 1)),
    (2, 5, (0, 0, 1, 1, 2)),
    (3, 7, (0, 0, 0, 1, 1, 2, 2)),
    (4, 10, (0, 0, 0, 0, 1, 1, 2, 2, 3, 3)),
    (4, 16, (0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5)),
    (5, 3, (0, 0, 0)),
    (16, 8, (0,) * 8),
    (16, 0, ()),
    (8, 24, (0,) * 8 + (1,) * 4 + (2,) * 4 + (3, 3, 4, 4, 5, 5, 6, 6)),
])
def test_considered_visit_sequence_table(m, S, expected):
    assert considered_visit_sequence(m, S) == expected


def test_considered_visit_sequence_rejects_bad_m():
    with pytest.raises(ValueError, match="m >= 1"):
        considered_visit_sequence(0, 4)
