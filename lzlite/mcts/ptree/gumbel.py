"""Pure helpers of the Gumbel rule (Danihelka et al. 2022, "Policy improvement by planning with Gumbel").

`considered_visit_sequence` is the sequential-halving schedule at the root; `completed_q_sigma` turns a
node's children statistics into sigma(completed Q). Both are pure functions of their arguments so they
can be tested as tables and mirrored line by line in C++.
"""
from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["considered_visit_sequence", "completed_q_sigma", "masked_softmax"]


@functools.lru_cache(maxsize=256)   # pure; called once per root per reset
def considered_visit_sequence(m: int, num_simulations: int) -> tuple[int, ...]:
    """The visit count that the root child chosen at each simulation must have.

    Sequential halving over `m` considered actions: each phase gives every surviving action the same
    number of extra visits, then halves the survivors (never below 2). A phase gives
    max(1, floor(S / (ceil(log2 m) * survivors))) visits per survivor. With m == 1 every simulation goes
    to the single considered action, so the sequence is 0, 1, 2, ...

    Args:
        m: number of considered actions (>= 1), already capped by the number of legal actions.
        num_simulations: S, the length of the returned sequence.

    Returns:
        A tuple of S ints; entry s is the required visit count of the child picked at simulation s.
    """
    if m < 1 or num_simulations < 0:
        raise ValueError(f"need m >= 1 and num_simulations >= 0, got m={m}, num_simulations={num_simulations}")
    if m == 1:
        return tuple(range(num_simulations))
    num_phases = math.ceil(math.log2(m))
    visits = [0] * m
    survivors = m
    sequence: list[int] = []
    while len(sequence) < num_simulations:
        per_survivor = max(1, num_simulations // (num_phases * survivors))
        for _ in range(per_survivor):
            sequence.extend(visits[:survivors])
            for i in range(survivors):
                visits[i] += 1
        survivors = max(2, survivors // 2)
    return tuple(sequence[:num_simulations])


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax over the last axis restricted to `legal`; illegal entries get probability 0."""
    z = np.where(legal, logits, -np.inf)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.where(legal, np.exp(z), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


def completed_q_sigma(q: np.ndarray, child_visits: np.ndarray, prior: np.ndarray, raw_value: np.ndarray,
                      legal: np.ndarray, *, c_visit: float, c_scale: float, rescale_values: bool) -> np.ndarray:
    """sigma(completed Q) for a batch of nodes.

    completed Q(a) = Q(a) for visited children, else v_mix, where
    v_mix = (v + sum_b N(b) * sum_{visited} pi(a) Q(a) / sum_{visited} pi(a)) / (1 + sum_b N(b))
    (v = the node's network value, pi = its prior). With `rescale_values`, completed Q is min-max
    rescaled over the legal actions to [0, 1] (all zero if they are all equal). Finally
    sigma = (c_visit + max_b N(b)) * c_scale * completed Q.

    Args:
        q: [k, A] Q of each child from the node's view (ignored where unvisited).
        child_visits: [k, A] visit counts of the children.
        prior: [k, A] prior probabilities (0 on illegal actions).
        raw_value: [k] network value of each node.
        legal: [k, A] legal mask of each node.

    Returns:
        [k, A] float64; 0 on illegal actions.
    """
    visited = child_visits > 0
    total = child_visits.sum(axis=-1).astype(np.float64)
    visited_prior = np.where(visited, prior, 0.0).sum(axis=-1)
    weighted_q = np.where(visited, prior * q, 0.0).sum(axis=-1) / np.where(visited_prior > 0, visited_prior, 1.0)
    v_mix = (raw_value + total * weighted_q) / (1.0 + total)
    completed = np.where(visited, q, v_mix[:, None])
    completed = np.where(legal, completed, 0.0)
    if rescale_values:
        lo = np.where(legal, completed, np.inf).min(axis=-1, keepdims=True)
        hi = np.where(legal, completed, -np.inf).max(axis=-1, keepdims=True)
        span = hi - lo
        completed = np.where(span > 0, (completed - lo) / np.where(span > 0, span, 1.0), 0.0)
        completed = np.where(legal, completed, 0.0)
    scale = (c_visit + child_visits.max(axis=-1)) * c_scale
    return scale[:, None] * completed
