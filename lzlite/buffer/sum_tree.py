"""A sum tree over a fixed number of leaves, updated and searched for whole batches at once.

The tree is one float64 array in heap layout: node i has children 2i and 2i+1, the root is node 1,
leaf j is node ``size + j`` where ``size`` is ``capacity`` rounded up to a power of two (padding
leaves hold 0 and are never sampled). Updates and searches walk all their indices up or down the
tree together, one numpy step per level, so a batch costs O(B log N) with no per-sample Python loop.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SumTree"]


class SumTree:
    """Sum tree over ``capacity`` non-negative leaves.

    Args:
        capacity: number of leaves N.
    """

    def __init__(self, capacity: int) -> None:
        if not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ValueError(f"SumTree capacity must be a positive int, got {capacity!r}")
        self.capacity = int(capacity)
        self._size = 1 << max(0, (self.capacity - 1).bit_length())
        self._depth = self._size.bit_length() - 1  # levels below the root
        self._tree = np.zeros(2 * self._size, dtype=np.float64)

    @property
    def total(self) -> float:
        """Sum of all leaves."""
        return float(self._tree[1])

    def get(self, indices: np.ndarray) -> np.ndarray:
        """Leaf values at ``indices`` [M] -> [M] float64."""
        return self._tree[self._size + np.asarray(indices, dtype=np.int64)]

    def update(self, indices: np.ndarray, values: np.ndarray) -> None:
        """Set leaves ``indices`` [M] to ``values`` [M] (>= 0) and refresh their ancestors.

        Duplicate indices are allowed: the last value wins. Each ancestor is recomputed from its two
        children (never incremented), so rounding errors cannot accumulate.
        """
        idx = np.asarray(indices, dtype=np.int64).ravel()
        val = np.broadcast_to(np.asarray(values, dtype=np.float64), idx.shape)
        if idx.size == 0:
            return
        if idx.min() < 0 or idx.max() >= self.capacity:
            raise IndexError(f"SumTree leaf index out of range [0, {self.capacity}): {idx.min()}..{idx.max()}")
        if not np.all(np.isfinite(val)) or np.any(val < 0):
            raise ValueError("SumTree values must be finite and non-negative")
        node = idx + self._size
        self._tree[node] = val
        for _ in range(self._depth):
            node >>= 1
            # Duplicate parents get the same value, so fancy assignment is safe.
            self._tree[node] = self._tree[2 * node] + self._tree[2 * node + 1]

    def find(self, mass: np.ndarray) -> np.ndarray:
        """Leaf index whose prefix-sum interval holds each ``mass`` [B] in [0, total) -> [B] int64.

        A subtree of total 0 is never entered, so leaves with value 0 are never returned even when
        rounding pushes a mass past the end of its interval.
        """
        u = np.array(mass, dtype=np.float64, copy=True).ravel()
        node = np.ones(u.shape, dtype=np.int64)
        tree = self._tree
        for _ in range(self._depth):
            left = 2 * node
            left_sum = tree[left]
            right = (u >= left_sum) & (tree[left + 1] > 0)
            u -= np.where(right, left_sum, 0.0)
            node = left + right
        return node - self._size

    def sample(self, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``batch_size`` leaves i.i.d. with probability leaf / total -> [B] int64."""
        total = self.total
        if total <= 0:
            raise ValueError("cannot sample from a SumTree whose leaves are all 0")
        return self.find(rng.random(batch_size) * total)
