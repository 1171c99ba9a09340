"""Random search cases for differential tests between tree backends (ptree is the reference).

A case fixes everything a tree sees: constructor arguments, reset arguments and, for every
simulation, the arrays passed to expand_and_backup. The evaluation at simulation s is a
deterministic function of (b, parent_slot, action) hashed from the case seed, so it depends on the
path the tree chose, as a real model would. Usage (e.g. in tests/mcts/test_differential.py)::

    from random_cases import random_case, run_case, assert_runs_equal  # tests/mcts is on sys.path under pytest
    for seed in range(200):
        case = random_case(seed)
        assert_runs_equal(run_case(ptree.Tree, case), run_case(ctree.Tree, case), case)
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

__all__ = ["SearchCase", "random_case", "run_case", "assert_runs_equal", "case_evaluation"]


@dataclasses.dataclass
class SearchCase:
    """One fully specified search.

    Attributes:
        seed: the case's seed (also keys the evaluations).
        tree_kwargs: Tree constructor arguments (batch_size, num_actions, num_simulations, rule, ...).
        reset_kwargs: Tree.reset arguments (prior_logits [B, A], value [B], legal_mask [B, A], ...).
        two_player: value_sign == -1 (rewards are then mostly 0, as in board games).
        in_tree_masks: expand_and_backup gets legal masks (AlphaZero style) instead of None (MuZero).
        terminal_prob: probability that an evaluated child is terminal.
        mask_dtype: np.bool_ or np.uint8, the dtype of every mask passed.
    """
    seed: int
    tree_kwargs: dict
    reset_kwargs: dict
    two_player: bool
    in_tree_masks: bool
    terminal_prob: float
    mask_dtype: Any

    def describe(self) -> str:
        kw = {k: v for k, v in self.tree_kwargs.items()}
        flags = dict(in_tree_masks=self.in_tree_masks, terminal_prob=self.terminal_prob,
                     reuse=self.reset_kwargs.get("reuse_action") is not None,
                     noise=self.reset_kwargs.get("noise") is not None)
        return f"case seed={self.seed} {kw} {flags}"


def _legal(rng: np.random.Generator, shape: tuple[int, int], p: float) -> np.ndarray:
    legal = rng.random(shape) < p
    empty = ~legal.any(axis=1)
    legal[empty, rng.integers(0, shape[1], size=int(empty.sum()))] = True
    return legal


def random_case(seed: int) -> SearchCase:
    """A random search case covering every rule and option; `seed` picks everything."""
    rng = np.random.default_rng(seed)
    B = int(rng.choice([1, 2, 3, 5, 8]))
    A = int(rng.choice([1, 2, 3, 4, 7, 9, 16]))
    S = int(rng.choice([1, 2, 3, 5, 8, 16, 25, 50]))
    rule = str(rng.choice(["puct", "gumbel"]))
    two_player = bool(rng.random() < 0.5)
    tree_kwargs = dict(
        batch_size=B, num_actions=A, num_simulations=S, rule=rule,
        pb_c_base=float(rng.choice([19652.0, 50.0])), pb_c_init=float(rng.choice([1.25, 0.5, 2.0])),
        discount=float(rng.choice([1.0, 0.997, 0.9, 0.0])), value_sign=-1.0 if two_player else 1.0,
        max_num_considered_actions=int(rng.choice([1, 2, 3, 4, 16])), c_visit=float(rng.choice([50.0, 1.0])),
        c_scale=float(rng.choice([1.0, 0.1])), rescale_values=bool(rng.random() < 0.5))
    mask_dtype = np.bool_ if rng.random() < 0.5 else np.uint8
    legal = _legal(rng, (B, A), float(rng.choice([1.0, 0.7, 0.4])))
    reset_kwargs: dict = dict(
        prior_logits=(rng.normal(size=(B, A)) * rng.choice([0.1, 1.0, 3.0])).astype(np.float32),
        value=rng.uniform(-1, 1, size=B).astype(np.float32),
        legal_mask=legal.astype(mask_dtype))
    if rule == "puct" and rng.random() < 0.5:
        noise = np.zeros((B, A), np.float32)
        for b in range(B):
            noise[b, legal[b]] = rng.dirichlet(np.full(int(legal[b].sum()), 0.3))
        reset_kwargs.update(noise=noise, noise_weight=0.25)
    if rule == "gumbel" and rng.random() < 0.7:
        reset_kwargs.update(gumbel=rng.gumbel(size=(B, A)).astype(np.float32))
    if rng.random() < 0.4:
        reuse = np.full(B, -1, np.int32)
        for b in range(B):
            if rng.random() < 0.7:
                reuse[b] = rng.choice(np.flatnonzero(legal[b]))
        reset_kwargs.update(reuse_action=reuse, reuse_value=rng.uniform(-1, 1, size=B).astype(np.float32))
    return SearchCase(seed=seed, tree_kwargs=tree_kwargs, reset_kwargs=reset_kwargs, two_player=two_player,
                      in_tree_masks=bool(rng.random() < 0.5), terminal_prob=float(rng.choice([0.0, 0.1, 0.4])),
                      mask_dtype=mask_dtype)


def case_evaluation(case: SearchCase, parent_slot: np.ndarray, action: np.ndarray) -> dict:
    """The expand_and_backup arguments for one simulation, a pure function of (case, path choice)."""
    B, A = case.tree_kwargs["batch_size"], case.tree_kwargs["num_actions"]
    reward = np.zeros(B, np.float32)
    value = np.zeros(B, np.float32)
    logits = np.zeros((B, A), np.float32)
    legal = np.zeros((B, A), bool)
    terminal = np.zeros(B, bool)
    for b in range(B):
        rng = np.random.default_rng([case.seed, b, int(parent_slot[b]), int(action[b])])
        reward[b] = 0.0 if case.two_player else rng.uniform(-1, 1)
        value[b] = rng.uniform(-1, 1)
        logits[b] = rng.normal(size=A) * 2.0
        legal[b] = _legal(rng, (1, A), 0.7)[0]
        terminal[b] = rng.random() < case.terminal_prob
        if terminal[b] and case.in_tree_masks:
            legal[b] = False   # a real game reports no legal move in a terminal state
    return dict(reward=reward, value=value, prior_logits=logits,
                legal_mask=legal.astype(case.mask_dtype) if case.in_tree_masks else None,
                terminal=terminal.astype(case.mask_dtype) if case.terminal_prob > 0 else None)


def run_case(tree_class: Callable, case: SearchCase) -> dict:
    """Runs the case on a tree class; returns every traverse result, the outputs and all node arrays."""
    tree = tree_class(**case.tree_kwargs)
    tree.reset(**case.reset_kwargs)
    steps = []
    for _ in range(case.tree_kwargs["num_simulations"]):
        parent_slot, action, child_slot, needs_eval = (np.array(x) for x in tree.traverse())
        steps.append(dict(parent_slot=parent_slot, action=action, child_slot=child_slot, needs_eval=needs_eval))
        tree.expand_and_backup(**case_evaluation(case, parent_slot, action))
    nodes = [tree.node_arrays(b) for b in range(case.tree_kwargs["batch_size"])]
    return dict(steps=steps, outputs={k: np.array(v) for k, v in tree.outputs().items()}, nodes=nodes)


_EXACT_OUTPUTS = ("visit_counts", "gumbel_action", "root_visits")
_EXACT_NODES = ("parent", "action", "visits", "terminal", "children")


def assert_runs_equal(ref: dict, got: dict, case: SearchCase, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Integers (paths, visits, actions, tree shape) equal; floats within rtol/atol."""
    where = case.describe()
    for s, (r, g) in enumerate(zip(ref["steps"], got["steps"])):
        for key in r:
            np.testing.assert_array_equal(np.asarray(g[key]).astype(np.int64), r[key].astype(np.int64),
                                          err_msg=f"{where}: traverse #{s} {key}")
    for key, r in ref["outputs"].items():
        g = got["outputs"][key]
        if key in _EXACT_OUTPUTS:
            np.testing.assert_array_equal(g, r, err_msg=f"{where}: outputs[{key!r}]")
        else:
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=f"{where}: outputs[{key!r}]")
    for b, (r, g) in enumerate(zip(ref["nodes"], got["nodes"])):
        for key in ("parent", "action", "visits", "terminal", "children", "value_sum", "reward", "prior"):
            if key not in g:
                continue
            if key in _EXACT_NODES:
                np.testing.assert_array_equal(np.asarray(g[key]).astype(np.int64), r[key].astype(np.int64),
                                              err_msg=f"{where}: root {b} node {key}")
            else:
                np.testing.assert_allclose(g[key], r[key], rtol=rtol, atol=atol,
                                           err_msg=f"{where}: root {b} node {key}")
