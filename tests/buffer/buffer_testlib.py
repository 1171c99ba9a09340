"""Shared helpers for the buffer tests: tagged segments and a loop-based reference target."""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np
from lzlite.buffer import GameSegment

A = 4  # action space of the synthetic games


def tagged_segment(
    seg_id: int,
    rewards: Sequence[float],
    values: Sequence[float],
    *,
    done: bool = True,
    bootstrap_value: Optional[float] = None,
    to_play: Optional[Sequence[int]] = None,
    num_actions: int = A,
) -> GameSegment:
    """A segment whose obs [2] is (seg_id, t), so a sampled row tells where it came from.

    Step t plays action t % A with policy one-hot at (t + 1) % A; the final obs is (seg_id, L).
    """
    L = len(rewards)
    seg = GameSegment(num_actions)
    for t in range(L):
        pi = np.zeros(num_actions, np.float32)
        pi[(t + 1) % num_actions] = 1.0
        seg.append(
            np.array([seg_id, t], np.float32),
            action=t % num_actions,
            reward=rewards[t],
            to_play=-1 if to_play is None else to_play[t],
            legal_mask=np.ones(num_actions, bool),
            root_value=values[t],
            policy=pi,
        )
    seg.close(np.array([seg_id, L], np.float32), done=done, bootstrap_value=bootstrap_value)
    return seg


def reference_value(
    rewards: Sequence[float], values: Sequence[float], t: int, n: int, gamma: float, sign: float, v_end: float = 0.0
) -> float:
    """z_t by the plain formula with loops: r and v beyond the end are 0 (v at the end is v_end)."""
    L = len(rewards)
    if t > L:
        return 0.0
    z = 0.0
    for i in range(n):
        if t + i < L:
            z += (gamma * sign) ** i * rewards[t + i]
    b = t + n
    if b < L:
        z += (gamma * sign) ** n * values[b]
    elif b >= L:
        # Bootstrap at the final state with a shortened horizon (0 for a terminal state).
        z += (gamma * sign) ** (L - t) * v_end
    return z


def random_episodes(rng: np.random.Generator, count: int, lo: int = 3, hi: int = 9) -> List[tuple]:
    """(rewards, values) pairs of random lengths in [lo, hi]."""
    out = []
    for _ in range(count):
        L = int(rng.integers(lo, hi + 1))
        out.append((rng.normal(size=L).round(2).tolist(), rng.normal(size=L).round(2).tolist()))
    return out
