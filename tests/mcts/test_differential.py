"""Differential tests: the C++ tree (ctree) against the pure-numpy spec (ptree), simulation by simulation.

Every case runs both backends on identical inputs; the evaluations depend on the path each tree
chose (random_cases.case_evaluation hashes (seed, b, parent_slot, action)), so a single divergent
selection changes everything after it. Compared: every traverse result, every output and every
node array of every root (integers exactly, floats to rtol 1e-5).
"""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from random_cases import SearchCase, assert_runs_equal, random_case, run_case

from lzlite.mcts import ctree, ptree

NUM_RANDOM_CASES = 240


def _with_batch(case: SearchCase, batch_size: int) -> SearchCase:
    """The case with its roots tiled to `batch_size` rows (evaluations still differ per row)."""
    B = case.tree_kwargs["batch_size"]
    rows = np.arange(batch_size) % B
    reset = {k: (v[rows] if isinstance(v, np.ndarray) else v) for k, v in case.reset_kwargs.items()}
    return dataclasses.replace(case, tree_kwargs={**case.tree_kwargs, "batch_size": batch_size},
                               reset_kwargs=reset)


def _case_flags(case: SearchCase) -> tuple:
    return (case.tree_kwargs["rule"], case.tree_kwargs["value_sign"], case.in_tree_masks,
            case.reset_kwargs.get("reuse_action") is not None, case.terminal_prob > 0)


def test_random_cases_cover_every_option():
    """The seeds used below hit every combination of rule, sign, masks, reuse and terminals."""
    seen = {_case_flags(random_case(seed)) for seed in range(NUM_RANDOM_CASES)}
    wanted = set(itertools.product(("puct", "gumbel"), (-1.0, 1.0), (False, True), (False, True), (False, True)))
    assert wanted <= seen, f"uncovered: {sorted(wanted - seen)}"


@pytest.mark.parametrize("chunk", range(4))
def test_ctree_equals_ptree_on_random_cases(chunk):
    for seed in range(chunk, NUM_RANDOM_CASES, 4):
        case = random_case(seed)
        assert_runs_equal(run_case(ptree.Tree, case), run_case(ctree.Tree, case), case)


@pytest.mark.parametrize("batch_size", [1, 3, 17])
def test_ctree_equals_ptree_for_batch_sizes(batch_size):
    for seed in range(1000, 1012):
        case = _with_batch(random_case(seed), batch_size)
        assert_runs_equal(run_case(ptree.Tree, case), run_case(ctree.Tree, case), case)


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
@pytest.mark.parametrize("value_sign", [-1.0, 1.0])
def test_ctree_equals_ptree_on_wide_deep_searches(rule, value_sign):
    """A = 81, S = 200: long paths, many revisits, large visit counts (Gumbel halving with m = 16)."""
    rng = np.random.default_rng(7)
    B, A, S = 3, 81, 200
    legal = rng.random((B, A)) < 0.6
    kwargs = dict(prior_logits=rng.normal(size=(B, A)).astype(np.float32),
                  value=rng.uniform(-1, 1, B).astype(np.float32), legal_mask=legal)
    if rule == "gumbel":
        kwargs["gumbel"] = rng.gumbel(size=(B, A)).astype(np.float32)
    case = SearchCase(seed=11, tree_kwargs=dict(batch_size=B, num_actions=A, num_simulations=S, rule=rule,
                                                value_sign=value_sign, discount=0.997),
                      reset_kwargs=kwargs, two_player=value_sign < 0, in_tree_masks=True, terminal_prob=0.05,
                      mask_dtype=np.bool_)
    assert_runs_equal(run_case(ptree.Tree, case), run_case(ctree.Tree, case), case)


def test_considered_visit_sequence_table_matches():
    for m in range(1, 21):
        for s in (0, 1, 2, 3, 5, 7, 16, 25, 50, 64, 200):
            assert ctree.considered_visit_sequence(m, s) == ptree.considered_visit_sequence(m, s), (m, s)


def test_storage_reuse_across_searches_matches_ptree():
    """One ctree object reused for different searches (other evaluations, reversed roots, then the
    first search again) matches the ptree every time: reset() leaves nothing stale behind."""
    for seed in range(40):
        case = random_case(seed)
        other = dataclasses.replace(case, seed=seed + 10_000, reset_kwargs={
            k: (v[::-1].copy() if isinstance(v, np.ndarray) else v) for k, v in case.reset_kwargs.items()})
        tree = ctree.Tree(**case.tree_kwargs)
        for c in (case, other, case):
            assert_runs_equal(run_case(ptree.Tree, c), run_case(lambda **_: tree, c), c)
