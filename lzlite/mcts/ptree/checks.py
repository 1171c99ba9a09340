"""Input validation shared by the search-tree backends.

Every array that enters a tree goes through one of these functions, so a bad call fails with a
message naming the argument, the bad value and the expected form instead of a wrong search or a
native crash. The C++ binding may import them to keep both backends' errors identical.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["as_float", "as_mask", "as_int", "check_finite_rows", "check_nonempty_rows"]


def as_float(name: str, x, shape: tuple[int, ...]) -> np.ndarray:
    """Returns `x` as a float64 array of `shape`.

    Raises:
        TypeError: `x` is not a floating-point array (ints and bools are refused so a mixed-up
            argument order is caught).
        ValueError: the shape differs.
    """
    arr = np.asarray(x)
    if not np.issubdtype(arr.dtype, np.floating):
        raise TypeError(f"{name} must be a floating-point array of shape {shape}, got dtype {arr.dtype}; "
                        f"convert it with .astype(np.float32)")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr.astype(np.float64, copy=False)


def as_mask(name: str, x, shape: tuple[int, ...]) -> np.ndarray:
    """Returns `x` (bool or uint8 holding 0/1) as a bool array of `shape`."""
    arr = np.asarray(x)
    if arr.dtype != np.bool_ and arr.dtype != np.uint8:
        raise TypeError(f"{name} must be a bool or uint8 array of shape {shape}, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if arr.dtype == np.uint8 and arr.size and arr.max() > 1:
        raise ValueError(f"{name} (uint8) must hold only 0 and 1, found {int(arr.max())}")
    return arr.astype(bool, copy=False)


def as_int(name: str, x, shape: tuple[int, ...]) -> np.ndarray:
    """Returns `x` as an int64 array of `shape`; refuses floats and bools."""
    arr = np.asarray(x)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array of shape {shape}, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr.astype(np.int64, copy=False)


def check_finite_rows(name: str, x: np.ndarray, rows: np.ndarray, where: Optional[np.ndarray] = None) -> None:
    """Raises ValueError if `x[rows]` (restricted to `where[rows]` if given) holds NaN or inf."""
    sub = x[rows]
    bad = ~np.isfinite(sub)
    if where is not None:
        bad &= where[rows]
    if bad.any():
        idx = np.argwhere(bad)[0]
        row = int(np.flatnonzero(rows)[idx[0]]) if rows.dtype == bool else int(np.asarray(rows)[idx[0]])
        pos = (row,) + tuple(int(i) for i in idx[1:])
        raise ValueError(f"{name} must be finite, got {sub[tuple(idx)]} at index {pos}"
                         + (" (a legal action)" if where is not None else ""))


def check_nonempty_rows(name: str, mask: np.ndarray, rows: np.ndarray) -> None:
    """Raises ValueError naming the first row of `mask[rows]` with no legal action."""
    empty = ~mask[rows].any(axis=-1)
    if empty.any():
        row = int(np.flatnonzero(rows)[np.argmax(empty)])
        raise ValueError(f"{name} row {row} has no legal action; every non-terminal node needs at least one "
                         f"(mark the state terminal instead)")
