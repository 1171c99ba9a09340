"""Direct tests of the C++ tree: invariants, batch independence, storage reuse, zero-copy outputs and
clean errors on bad input (the differential tests compare it with the ptree)."""
from __future__ import annotations

import numpy as np
import pytest

from lzlite.mcts.ctree import Tree

pytestmark = pytest.mark.filterwarnings("error")


def _roots(seed: int, B: int, A: int, legal_p: float = 0.7):
    rng = np.random.default_rng(seed)
    legal = rng.random((B, A)) < legal_p
    legal[np.arange(B), rng.integers(0, A, B)] = True
    return dict(prior_logits=rng.normal(size=(B, A)).astype(np.float32),
                value=rng.uniform(-1, 1, B).astype(np.float32), legal_mask=legal)


def _search(tree: Tree, root_keys, reset_kwargs, *, masks=True, terminal_p=0.1):
    """Runs one full search; a child's evaluation is a pure function of (root key, parent node, action),
    so a root's search does not depend on which batch row it occupies."""
    B, A, N = tree.batch_size, tree.num_actions, tree.num_simulations + 1
    tree.reset(**reset_kwargs)
    steps = []
    for _ in range(tree.num_simulations):
        parent, action, child, needs_eval = (np.array(x) for x in tree.traverse())
        steps.append((parent - np.arange(B) * N, action, child - np.arange(B) * N, needs_eval))
        reward = np.zeros(B, np.float32)
        value = np.zeros(B, np.float32)
        logits = np.zeros((B, A), np.float32)
        legal = np.ones((B, A), bool)
        terminal = np.zeros(B, bool)
        for b in range(B):
            rng = np.random.default_rng([root_keys[b], int(parent[b] - b * N), int(action[b])])
            reward[b], value[b] = rng.uniform(-1, 1, 2)
            logits[b] = rng.normal(size=A)
            legal[b] = rng.random(A) < 0.6
            legal[b, rng.integers(A)] = True
            terminal[b] = rng.random() < terminal_p
        tree.expand_and_backup(reward, value, logits, legal if masks else None, terminal)
    return steps, tree.outputs(), [tree.node_arrays(b) for b in range(B)]


CONFIGS = [
    dict(rule="puct", value_sign=-1.0),
    dict(rule="puct", value_sign=1.0, discount=0.9),
    dict(rule="gumbel", value_sign=-1.0, max_num_considered_actions=4),
    dict(rule="gumbel", value_sign=1.0, rescale_values=True, c_scale=0.1),
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_visit_invariants(cfg):
    B, A, S = 6, 9, 40
    tree = Tree(B, A, S, **cfg)
    roots = _roots(1, B, A)
    _, out, nodes = _search(tree, np.arange(B), roots)
    np.testing.assert_array_equal(out["root_visits"], S + 1)
    np.testing.assert_array_equal(out["visit_counts"].sum(axis=1), S)
    assert (out["visit_counts"][~roots["legal_mask"]] == 0).all(), "an illegal root action was visited"
    for b, nd in enumerate(nodes):
        assert len(nd["visits"]) == S + 1
        for k in np.flatnonzero(nd["expanded"]):
            kids = nd["children"][k]
            assert (kids[~nd["legal"][k]] == -1).all(), "an illegal in-tree action got a child"
            child_visits = nd["visits"][kids[kids >= 0]].sum()
            assert nd["visits"][k] == 1 + child_visits, (b, k)
        # Root outputs are the root node's statistics, in the root player's view.
        assert np.isclose(out["root_value"][b], nd["value_sum"][0] / nd["visits"][0], rtol=1e-5)
        kids = nd["children"][0]
        for a in np.flatnonzero(kids >= 0):
            c = kids[a]
            q = nd["reward"][c] + tree.discount * tree.value_sign * nd["value_sum"][c] / nd["visits"][c]
            assert np.isclose(out["qvalues"][b, a], q, rtol=1e-5, atol=1e-6)
            assert out["visit_counts"][b, a] == nd["visits"][c]
    q, n = out["qvalues"], out["visit_counts"]
    assert (q[n == 0] == 0).all()
    if cfg["rule"] == "gumbel":
        np.testing.assert_allclose(out["improved_policy"].sum(axis=1), 1.0, rtol=1e-5)
        assert (out["improved_policy"][~roots["legal_mask"]] == 0).all()
        assert roots["legal_mask"][np.arange(B), out["gumbel_action"]].all()
    else:
        np.testing.assert_allclose(out["improved_policy"], n / S, rtol=1e-6)
        np.testing.assert_array_equal(out["gumbel_action"], -1)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_batch_independence(cfg):
    """Root b searched inside a batch of 5 gives the same tree as root b searched alone."""
    B, A, S = 5, 7, 30
    roots = _roots(2, B, A)
    keys = np.arange(100, 100 + B)
    _, out, nodes = _search(Tree(B, A, S, **cfg), keys, roots)
    for b in (0, 3):
        alone = {k: v[b:b + 1] for k, v in roots.items()}
        _, out1, nodes1 = _search(Tree(1, A, S, **cfg), keys[b:b + 1], alone)
        for key in ("visit_counts", "gumbel_action", "root_visits"):
            np.testing.assert_array_equal(out1[key][0], out[key][b])
        for key in ("qvalues", "improved_policy", "root_value"):
            np.testing.assert_allclose(out1[key][0], out[key][b], rtol=1e-6)
        np.testing.assert_array_equal(nodes1[0]["children"], nodes[b]["children"])


@pytest.mark.parametrize("cfg", CONFIGS)
def test_storage_reuse_equals_fresh_tree(cfg):
    B, A, S = 4, 9, 25
    tree = Tree(B, A, S, **cfg)
    first = _search(tree, np.arange(B), _roots(3, B, A), terminal_p=0.3)
    _search(tree, np.arange(B) + 50, _roots(4, B, A, legal_p=1.0), masks=False)   # dirty every slot
    again = _search(tree, np.arange(B), _roots(3, B, A), terminal_p=0.3)
    fresh = _search(Tree(B, A, S, **cfg), np.arange(B), _roots(3, B, A), terminal_p=0.3)
    for run in (again, fresh):
        for s0, s1 in zip(first[0], run[0]):
            for x0, x1 in zip(s0, s1):
                np.testing.assert_array_equal(x0, x1)
        for key in first[1]:
            np.testing.assert_array_equal(first[1][key], run[1][key])
        for n0, n1 in zip(first[2], run[2]):
            for key in n0:
                np.testing.assert_array_equal(n0[key], n1[key], err_msg=key)


def test_reuse_child_is_never_expanded_and_has_the_reuse_q():
    B, A, S = 3, 5, 40
    roots = _roots(5, B, A, legal_p=1.0)
    reuse = np.array([2, -1, 0], np.int32)
    roots.update(reuse_action=reuse, reuse_value=np.array([0.5, 0.0, -0.25], np.float32))
    tree = Tree(B, A, S, rule="puct", value_sign=-1.0)
    steps, out, nodes = _search(tree, np.arange(B), roots, terminal_p=0.0)
    for b, a in ((0, 2), (2, 0)):
        assert out["visit_counts"][b, a] > 0
        assert out["qvalues"][b, a] == pytest.approx(roots["reuse_value"][b])
        k = nodes[b]["children"][0, a]
        assert nodes[b]["terminal"][k] and not nodes[b]["expanded"][k]
        picked = [s for s in steps if s[0][b] == 0 and s[1][b] == a]
        assert all(s[3][b] == 0 for s in picked), "the reuse child must never need an evaluation"


def test_terminal_revisits_need_no_evaluation():
    B, A, S = 2, 3, 30
    tree = Tree(B, A, S, rule="puct", value_sign=1.0)
    tree.reset(**_roots(6, B, A, legal_p=1.0))
    terminal = np.ones(B, bool)   # every child is terminal: only A evaluations per root
    evals = 0
    for _ in range(S):
        _, _, _, needs_eval = tree.traverse()
        evals += int(needs_eval.sum())
        tree.expand_and_backup(np.zeros(B, np.float32), np.full(B, 0.5, np.float32),
                               np.zeros((B, A), np.float32), np.zeros((B, A), bool), terminal)
    assert evals == B * A
    out = tree.outputs()
    np.testing.assert_array_equal(out["visit_counts"].sum(axis=1), S)
    np.testing.assert_allclose(out["qvalues"], 0.997 * 0.5, rtol=1e-6)


def test_traverse_outputs_are_reused_read_only_views():
    tree = Tree(2, 3, 4)
    tree.reset(**_roots(7, 2, 3))
    first = tree.traverse()
    assert all(not x.flags.writeable for x in first)
    assert [x.dtype for x in first] == [np.int32, np.int32, np.int32, np.uint8]
    tree.expand_and_backup(np.zeros(2, np.float32), np.zeros(2, np.float32), np.zeros((2, 3), np.float32))
    second = tree.traverse()
    assert all(a is b for a, b in zip(first, second))
    np.testing.assert_array_equal(second[2], np.arange(2) * 5 + 2)   # child slot b * N + s + 1


def test_float64_and_uint8_inputs_match_float32_and_bool():
    roots = _roots(8, 3, 4)
    a, b = Tree(3, 4, 10), Tree(3, 4, 10)
    out_a = _search(a, np.arange(3), roots)[1]
    converted = dict(prior_logits=roots["prior_logits"].astype(np.float64), value=roots["value"].astype(np.float64),
                     legal_mask=roots["legal_mask"].astype(np.uint8))
    out_b = _search(b, np.arange(3), converted)[1]
    for key in out_a:
        np.testing.assert_array_equal(out_a[key], out_b[key])


# ------------------------------------------------------------------------------------------ bad input
def _tree_after_reset(rule="puct", B=2, A=3, S=2):
    tree = Tree(B, A, S, rule=rule)
    tree.reset(**_roots(9, B, A, legal_p=1.0))
    return tree


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(prior_logits=np.zeros((2, 4), np.float32)), ValueError, r"prior_logits must have shape \(2, 3\)"),
    (dict(prior_logits=np.zeros((2, 3), np.int64)), TypeError, "prior_logits must be a floating-point"),
    (dict(value=np.zeros(3, np.float32)), ValueError, r"value must have shape \(2,\)"),
    (dict(value=np.array([0.0, np.nan], np.float32)), ValueError, r"value must be finite, got nan at index \(1,\)"),
    (dict(prior_logits=np.array([[0, np.inf, 0], [0, 0, 0]], np.float32)), ValueError, "prior_logits must be finite"),
    (dict(legal_mask=np.array([[1, 1, 1], [0, 0, 0]], bool)), ValueError, "legal_mask row 1 has no legal action"),
    (dict(legal_mask=np.ones((2, 3), np.float32)), TypeError, "legal_mask must be a bool or uint8"),
    (dict(legal_mask=np.full((2, 3), 2, np.uint8)), ValueError, "must hold only 0 and 1"),
    (dict(noise=np.zeros((2, 3), np.float32), noise_weight=1.5), ValueError, r"noise_weight must be in \[0, 1\]"),
    (dict(gumbel=np.zeros((2, 3), np.float32)), ValueError, "gumbel noise is for rule 'gumbel'"),
    (dict(reuse_action=np.array([0, 0], np.int32)), ValueError, "must be given together"),
    (dict(reuse_action=np.array([3, 0], np.int32), reuse_value=np.zeros(2, np.float32)), ValueError, "out of range"),
    (dict(reuse_action=np.array([0.0, 0.0]), reuse_value=np.zeros(2, np.float32)), TypeError, "integer array"),
])
def test_reset_rejects_bad_input(kwargs, error, match):
    tree = Tree(2, 3, 2)
    args = {**_roots(9, 2, 3, legal_p=1.0), **kwargs}
    with pytest.raises(error, match=match):
        tree.reset(**args)


def test_illegal_nan_logits_are_ignored_and_illegal_reuse_is_refused():
    tree = Tree(1, 3, 2)
    logits = np.array([[np.nan, 0.0, 1.0]], np.float32)
    legal = np.array([[False, True, True]])
    tree.reset(logits, np.zeros(1, np.float32), legal)   # the NaN is at an illegal action: fine
    with pytest.raises(ValueError, match=r"reuse_action\[0\] = 0 is illegal"):
        tree.reset(logits, np.zeros(1, np.float32), legal, reuse_action=np.array([0]), reuse_value=np.zeros(1))


def test_call_order_errors():
    tree = Tree(2, 3, 2)
    with pytest.raises(RuntimeError, match="reset"):
        tree.traverse()
    tree.reset(**_roots(9, 2, 3, legal_p=1.0))
    with pytest.raises(RuntimeError, match="must follow traverse"):
        tree.expand_and_backup(np.zeros(2, np.float32), np.zeros(2, np.float32), np.zeros((2, 3), np.float32))
    ev = (np.zeros(2, np.float32), np.zeros(2, np.float32), np.zeros((2, 3), np.float32))
    tree.traverse()
    with pytest.raises(RuntimeError, match="twice"):
        tree.traverse()
    tree.expand_and_backup(*ev)
    tree.traverse()
    tree.expand_and_backup(*ev)
    with pytest.raises(RuntimeError, match="more than num_simulations=2"):
        tree.traverse()
    assert tree.outputs()["root_visits"].tolist() == [3, 3]


def test_expand_rejects_bad_input_and_stays_usable():
    tree = _tree_after_reset()
    tree.traverse()
    good = dict(reward=np.zeros(2, np.float32), value=np.zeros(2, np.float32), prior_logits=np.zeros((2, 3), np.float32))
    bad_cases = [
        (dict(reward=np.zeros(3, np.float32)), ValueError, r"reward must have shape \(2,\)"),
        (dict(value=np.array([1, 2])), TypeError, "value must be a floating-point"),
        (dict(value=np.array([0.0, np.inf], np.float32)), ValueError, "value must be finite"),
        (dict(prior_logits=np.full((2, 3), np.nan, np.float32)), ValueError, "prior_logits must be finite"),
        (dict(legal_mask=np.zeros((2, 3), bool)), ValueError, "legal_mask row 0 has no legal action"),
        (dict(terminal=np.zeros(3, bool)), ValueError, r"terminal must have shape \(2,\)"),
    ]
    for bad, error, match in bad_cases:
        with pytest.raises(error, match=match):
            tree.expand_and_backup(**{**good, **bad})
    # A terminal child needs no legal action and its logits are never read.
    tree.expand_and_backup(**{**good, "prior_logits": np.full((2, 3), np.nan, np.float32)},
                           legal_mask=np.zeros((2, 3), bool), terminal=np.ones(2, bool))
    assert tree.outputs()["root_visits"].tolist() == [2, 2]


@pytest.mark.parametrize("kwargs", [dict(batch_size=0), dict(num_actions=0), dict(num_simulations=0),
                                    dict(rule="ucb"), dict(value_sign=0.5), dict(pb_c_base=0.0),
                                    dict(discount=float("nan")), dict(max_num_considered_actions=0)])
def test_constructor_rejects_bad_arguments(kwargs):
    args = {**dict(batch_size=2, num_actions=3, num_simulations=4), **kwargs}
    with pytest.raises(ValueError):
        Tree(args.pop("batch_size"), args.pop("num_actions"), args.pop("num_simulations"), **args)
