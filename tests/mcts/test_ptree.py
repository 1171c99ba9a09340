"""Invariants of the numpy reference tree on random inputs, plus its bad-input errors."""
import numpy as np
import pytest
from random_cases import random_case, run_case

from lzlite.mcts.ptree import Tree

SEEDS = range(60)


@pytest.mark.parametrize("seed", SEEDS)
def test_invariants_on_random_cases(seed):
    case = random_case(seed)
    run = run_case(Tree, case)
    S = case.tree_kwargs["num_simulations"]
    out = run["outputs"]
    root_legal = np.asarray(case.reset_kwargs["legal_mask"]).astype(bool)
    np.testing.assert_array_equal(out["root_visits"], S + 1)
    np.testing.assert_array_equal(out["visit_counts"].sum(axis=1), S)
    assert (out["visit_counts"][~root_legal] == 0).all(), "an illegal root action was visited"
    reuse = case.reset_kwargs.get("reuse_action")
    for b, nodes in enumerate(run["nodes"]):
        used = nodes["visits"] > 0
        for k in np.flatnonzero(used):
            kids = nodes["children"][k]
            # Child visits sum to parent visits - 1 (the node's own evaluation is one visit).
            if nodes["expanded"][k]:
                assert nodes["visits"][kids[kids >= 0]].sum() == nodes["visits"][k] - 1
            # Masked actions are never expanded, at the root or inside the tree.
            assert (kids[~nodes["legal"][k]] == -1).all()
            if nodes["terminal"][k]:
                assert (kids == -1).all() and not nodes["expanded"][k]
        # Unused nodes are exactly the simulations that ended at a terminal or reuse child.
        ended_early = sum(int(step["needs_eval"][b] == 0) for step in run["steps"])
        first_reuse = int(reuse is not None and reuse[b] >= 0 and out["visit_counts"][b, reuse[b]] > 0)
        assert (~used).sum() == ended_early - first_reuse
        if reuse is not None and reuse[b] >= 0 and out["visit_counts"][b, reuse[b]] > 0:
            k = nodes["children"][0, reuse[b]]
            assert nodes["terminal"][k] and not nodes["expanded"][k], "the reuse child must never be expanded"
            np.testing.assert_allclose(out["qvalues"][b, reuse[b]], case.reset_kwargs["reuse_value"][b], rtol=1e-6)


def _run_roots(kwargs, logits, value, legal, evaluate, **reset_kwargs):
    """Runs a search where the evaluation of a child depends only on (root id, parent node, action)."""
    B, A = logits.shape
    tree = Tree(B, A, **kwargs)
    tree.reset(logits, value, legal, **reset_kwargs)
    N = tree.num_nodes
    for _ in range(kwargs["num_simulations"]):
        parent, action, _, _ = tree.traverse()
        rows = [evaluate(b, parent[b] - b * N, action[b]) for b in range(B)]
        tree.expand_and_backup(*[np.stack(x) for x in zip(*rows)])
    return tree.outputs()


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_batch_elements_are_independent(rule):
    rng = np.random.default_rng(7)
    B, A = 4, 6
    kwargs = dict(num_simulations=30, rule=rule, value_sign=-1.0, max_num_considered_actions=4)
    logits = rng.normal(size=(B, A)).astype(np.float32)
    value = rng.uniform(-1, 1, B).astype(np.float32)
    legal = rng.random((B, A)) < 0.8
    legal[:, 0] = True
    gumbel = rng.gumbel(size=(B, A)).astype(np.float32) if rule == "gumbel" else None

    def evaluate(root_id, node, action):
        r = np.random.default_rng([root_id, node, action])
        return (np.float32(0.0), np.float32(r.uniform(-1, 1)), r.normal(size=A).astype(np.float32),
                r.random(A) < 0.8, np.bool_(r.random() < 0.1))

    full = _run_roots(kwargs, logits, value, legal, evaluate,
                      gumbel=gumbel)
    for b in range(B):
        alone = _run_roots(kwargs, logits[b:b + 1], value[b:b + 1], legal[b:b + 1],
                           lambda _, node, action, b=b: evaluate(b, node, action),
                           gumbel=None if gumbel is None else gumbel[b:b + 1])
        for key in full:
            np.testing.assert_allclose(alone[key][0], full[key][b], rtol=1e-6, err_msg=f"root {b} {key}")


def _tree_ready(B=2, A=3, S=4, **kw):
    tree = Tree(B, A, S, **kw)
    tree.reset(np.zeros((B, A), np.float32), np.zeros(B, np.float32), np.ones((B, A), bool))
    return tree


@pytest.mark.parametrize("bad, match", [
    (dict(prior_logits=np.zeros((2, 4), np.float32)), r"prior_logits must have shape \(2, 3\)"),
    (dict(prior_logits=np.zeros((2, 3), np.int32)), "prior_logits must be a floating-point"),
    (dict(value=np.array([0.0, np.nan], np.float32)), r"value must be finite, got nan at index \(1,\)"),
    (dict(prior_logits=np.array([[0, np.inf, 0], [0, 0, 0]], np.float32)), "prior_logits must be finite"),
    (dict(legal_mask=np.array([[1, 1, 1], [0, 0, 0]], bool)), "legal_mask row 1 has no legal action"),
    (dict(legal_mask=np.ones((2, 3), np.float32)), "legal_mask must be a bool or uint8"),
    (dict(legal_mask=np.full((2, 3), 2, np.uint8)), "only 0 and 1"),
    (dict(reuse_action=np.array([3, -1]), reuse_value=np.zeros(2, np.float32)), r"reuse_action\[0\] = 3"),
    (dict(reuse_action=np.array([0, -1])), "given together"),
    (dict(gumbel=np.zeros((2, 3), np.float32)), "gumbel noise is for rule 'gumbel'"),
])
def test_reset_rejects_bad_input(bad, match):
    args = dict(prior_logits=np.zeros((2, 3), np.float32), value=np.zeros(2, np.float32),
                legal_mask=np.ones((2, 3), bool))
    args.update(bad)
    tree = Tree(2, 3, 4)
    with pytest.raises((ValueError, TypeError), match=match):
        tree.reset(**args)


def test_illegal_reuse_action_and_legal_nan_logits_are_errors():
    tree = Tree(1, 3, 4)
    legal = np.array([[True, False, True]])
    with pytest.raises(ValueError, match=r"reuse_action\[0\] = 1 is illegal"):
        tree.reset(np.zeros((1, 3), np.float32), np.zeros(1, np.float32), legal,
                   reuse_action=np.array([1]), reuse_value=np.zeros(1, np.float32))
    # Garbage at an illegal action is ignored; NaN at a legal one is not.
    tree.reset(np.array([[0, np.nan, 0]], np.float32), np.zeros(1, np.float32), legal)
    with pytest.raises(ValueError, match=r"prior_logits must be finite, got nan at index \(0, 2\)"):
        tree.reset(np.array([[0, 0, np.nan]], np.float32), np.zeros(1, np.float32), legal)


def test_expand_and_backup_errors_and_call_order():
    tree = Tree(2, 3, 2)
    with pytest.raises(RuntimeError, match="reset"):
        tree.traverse()
    tree.reset(np.zeros((2, 3), np.float32), np.zeros(2, np.float32), np.ones((2, 3), bool))
    with pytest.raises(RuntimeError, match="must follow traverse"):
        tree.expand_and_backup(np.zeros(2), np.zeros(2), np.zeros((2, 3)))
    tree.traverse()
    with pytest.raises(RuntimeError, match="twice"):
        tree.traverse()
    with pytest.raises(ValueError, match=r"value must have shape \(2,\)"):
        tree.expand_and_backup(np.zeros(2), np.zeros(3), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="legal_mask row 1 has no legal action"):
        tree.expand_and_backup(np.zeros(2), np.zeros(2), np.zeros((2, 3)), np.array([[1, 0, 0], [0, 0, 0]], bool))
    # A terminal child may have an all-false mask and garbage logits.
    tree.expand_and_backup(np.zeros(2), np.zeros(2), np.array([[0, np.nan, 0], [np.nan] * 3]),
                           np.array([[1, 0, 0], [0, 0, 0]], bool),
                           np.array([0, 1], np.uint8))
    tree.traverse()
    tree.expand_and_backup(np.zeros(2), np.zeros(2), np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="more than num_simulations=2"):
        tree.traverse()


def test_constructor_errors():
    with pytest.raises(ValueError, match="rule must be one of"):
        Tree(1, 2, 3, rule="ucb")
    with pytest.raises(ValueError, match="value_sign"):
        Tree(1, 2, 3, value_sign=0.5)
    with pytest.raises(ValueError, match="num_simulations must be an int >= 1"):
        Tree(1, 2, 0)


def test_terminal_revisit_backs_up_stored_value_without_a_network_call():
    # One legal action leading to a terminal loss for the player to move there: the root wins.
    tree = Tree(1, 2, 3, value_sign=-1.0, discount=1.0)
    tree.reset(np.zeros((1, 2), np.float32), np.array([0.0], np.float32), np.array([[True, False]]))
    _, action, child, needs = tree.traverse()
    assert (action[0], child[0], needs[0]) == (0, 1, 1)
    tree.expand_and_backup(np.zeros(1), np.array([-1.0]), np.zeros((1, 2)), None, np.array([True]))
    for s in (1, 2):
        parent, action, child, needs = tree.traverse()
        assert (parent[0], action[0], child[0], needs[0]) == (0, 0, s + 1, 0)
        tree.expand_and_backup(np.zeros(1), np.zeros(1), np.zeros((1, 2)))   # ignored
    out = tree.outputs()
    assert out["visit_counts"][0, 0] == 3
    np.testing.assert_allclose(out["qvalues"][0, 0], 1.0)
    np.testing.assert_allclose(out["root_value"][0], (0.0 + 3 * 1.0) / 4)
    nodes = tree.node_arrays(0)
    np.testing.assert_array_equal(nodes["visits"], [4, 3, 0, 0])
    np.testing.assert_array_equal(nodes["parent"], [-1, 0, -1, -1])
