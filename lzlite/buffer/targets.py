"""Vectorised training targets: n-step values, unrolled rewards / policies / actions with masks.

Every function here is pure numpy over *ring arrays*: per-transition arrays of length C (the
buffer capacity, or simply one episode's length in tests) indexed by absolute position p at slot
``p % C``. Each position carries ``end``, the absolute position of its episode's final state (the
state after the last move). Rows ``end`` hold that final state: its value is 0 when terminal, or
the bootstrap value of a segment cut before the episode ended.

Conventions (fixed for the project):
    value_sign s = -1 for two-player alternating zero-sum games, +1 for single-player games.
    Values are from the view of the player to move; rewards from the view of the mover.
    The n-step value target at t, for the player to move at t, with b = min(t + n, end):
        z_t = sum_{i=0}^{b-t-1} (gamma s)^i r_{t+i} + (gamma s)^{b-t} v_b
    where v_end is 0 for a terminal state. For a finished episode this is the textbook
    z_t = sum_{i<n} (gamma s)^i r_{t+i} + (gamma s)^n v_{t+n} with r and v beyond the end = 0;
    with n >= episode length and gamma = 1 it is the Monte-Carlo outcome (AlphaZero).
    Positions beyond the end (t > end) get z = 0.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

__all__ = [
    "unroll_positions",
    "bootstrap_positions",
    "nstep_value_targets",
    "gather_unrolled",
]


def unroll_positions(start: np.ndarray, end: np.ndarray, num_unroll_steps: int) -> Tuple[np.ndarray, np.ndarray]:
    """Positions t, t+1, ..., t+K of each sampled start, and which of them are real moves.

    Args:
        start: [B] absolute start positions t.
        end: [B] absolute episode end positions (the final state's row), end > t.
        num_unroll_steps: K >= 0.

    Returns:
        pos: [B, K+1] int64 positions t+k clipped to ``end`` (safe to gather: always inside the
            episode; beyond the end they repeat the final state).
        mask: [B, K+1] bool, True where t+k < end (a move was made there: real policy/reward).
    """
    raw = np.asarray(start, dtype=np.int64)[:, None] + np.arange(num_unroll_steps + 1, dtype=np.int64)
    end2 = np.asarray(end, dtype=np.int64)[:, None]
    return np.minimum(raw, end2), raw < end2


def bootstrap_positions(pos: np.ndarray, end: np.ndarray, td_steps: int) -> Tuple[np.ndarray, np.ndarray]:
    """Where each n-step value target bootstraps, and whether that position is a live state.

    Args:
        pos: [...] absolute positions (<= end), e.g. from ``unroll_positions``.
        end: episode end positions broadcastable to ``pos``.
        td_steps: n >= 1.

    Returns:
        boot: [...] int64 b = min(pos + n, end).
        inside: [...] bool, True where pos + n < end: b is a non-terminal in-episode state whose
            value a search can (re)compute. Elsewhere b is the final row (value 0 or bootstrap).
    """
    pos = np.asarray(pos, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    raw = pos + td_steps
    return np.minimum(raw, end), raw < end


def nstep_value_targets(
    reward: np.ndarray,
    value: np.ndarray,
    pos: np.ndarray,
    end: np.ndarray,
    td_steps: int,
    discount: float,
    value_sign: float,
    *,
    beyond_end: Optional[np.ndarray] = None,
    boot_value: Optional[np.ndarray] = None,
    max_horizon: Optional[int] = None,
) -> np.ndarray:
    """n-step value targets z for positions ``pos`` (see the module docstring for the formula).

    Args:
        reward: [C] ring of rewards (the reward of the move at each position, mover's view).
        value: [C] ring of values (root values; the final row of each episode holds 0 if terminal).
        pos: [...] absolute positions, each <= its end (clip with ``unroll_positions``).
        end: [...] absolute episode end positions, broadcastable to ``pos``.
        td_steps: n >= 1.
        discount: gamma in [0, 1].
        value_sign: s, +1 (single-player) or -1 (two-player alternating zero-sum).
        beyond_end: optional [...] bool, True where the unclipped position lay past the end: z = 0.
        boot_value: optional [...] values v_b to use instead of ``value[b]`` (reanalysed values).
        max_horizon: optional bound on ``end - pos`` (the longest episode stored); limits the reward
            window to min(n, max_horizon) gathers instead of n (matters for Monte-Carlo n).

    Returns:
        [...] float32 value targets.
    """
    if td_steps < 1:
        raise ValueError(f"td_steps must be >= 1, got {td_steps}")
    C = reward.shape[0]
    pos = np.asarray(pos, dtype=np.int64)
    end = np.broadcast_to(np.asarray(end, dtype=np.int64), pos.shape)
    boot, _ = bootstrap_positions(pos, end, td_steps)
    horizon = boot - pos  # reward steps taken before bootstrapping, in [0, n]
    width = td_steps if max_horizon is None else max(1, min(td_steps, int(max_horizon)))
    gs = float(discount) * float(value_sign)
    steps = np.arange(width, dtype=np.int64)
    # [..., width] discounted rewards r_{p+i} for i < horizon; later entries are masked, not read.
    r = reward[(pos[..., None] + steps) % C].astype(np.float64)
    r *= steps < horizon[..., None]
    z = r @ (gs ** steps.astype(np.float64))
    v = value[boot % C] if boot_value is None else boot_value
    z += np.power(gs, horizon.astype(np.float64)) * v
    if beyond_end is not None:
        z = np.where(beyond_end, 0.0, z)
    return z.astype(np.float32)


def gather_unrolled(ring: np.ndarray, pos: np.ndarray, mask: np.ndarray, fill: float = 0) -> np.ndarray:
    """``ring[pos % C]`` with entries where ``mask`` is False replaced by ``fill``.

    Args:
        ring: [C, *F] per-transition array (reward, action, policy, legal_mask, to_play ...).
        pos: [B, J] absolute positions (clipped into their episodes).
        mask: [B, J] bool, True for real steps.
        fill: value for masked steps.

    Returns:
        [B, J, *F] array of ring's dtype.
    """
    out = ring[pos % ring.shape[0]]
    m = mask.reshape(mask.shape + (1,) * (out.ndim - mask.ndim))
    return np.where(m, out, np.asarray(fill, dtype=ring.dtype))
