"""Symmetry augmentation: train on a random symmetry of each sampled position.

A board game whose rules are invariant under a board symmetry (tic-tac-toe and gomoku: the 8 rotations
and reflections of the square; Connect Four: the left-right mirror) gives, for each stored position, as
many equally valid training examples: the board transformed, the actions and policy targets permuted the
same way, values and rewards unchanged (AlphaGo Zero trained on random symmetries the same way).

A symmetry g is a permutation of the H x W cells, ``cell_perms[g]``, read as a gather: the transformed
board holds at cell p what the original held at cell ``cell_perms[g][p]``; ``action_perms[g]`` does the
same for the action space (equal to the cell permutation where an action is a cell, a column permutation
for Connect Four). Env classes name their group with a ``symmetry`` class attribute.

Besides the standard Batch fields, the per-step fields a policy declared (``Batch.unrolled``, described by
``StepField``s) are transformed as their declarations say.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional

import numpy as np

from lzlite.buffer.game_segment import StepField

__all__ = ["SymmetryAugmenter", "board_symmetries"]

# Batch fields holding observations [..., C, H, W], actions [..., ] and per-action arrays [..., A].
_OBS_FIELDS = ("obs", "obs_seq")
_ACTION_FIELDS = ("actions",)
_PER_ACTION_FIELDS = ("target_policy", "legal_mask")


def board_symmetries(kind: str, height: int, width: int, num_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """(cell_perms int [G, H*W], action_perms int [G, A]) of a symmetry group; index 0 is the identity.

    Args:
        kind: 'dihedral' (the 8 rotations and reflections; square boards) or 'mirror' (left-right).
        height, width: board size (the observation's last two dims).
        num_actions: A; an action is a cell (A = H*W) or a column (A = W).
    """
    grid = np.arange(height * width).reshape(height, width)
    if kind == "dihedral":
        if height != width:
            raise ValueError(f"'dihedral' symmetry needs a square board, got {height}x{width}")
        boards = [np.rot90(grid, k)[:, ::-1] if flip else np.rot90(grid, k) for k in range(4) for flip in (False, True)]
    elif kind == "mirror":
        boards = [grid, grid[:, ::-1]]
    else:
        raise ValueError(f"unknown symmetry {kind!r}; expected 'dihedral' or 'mirror'")
    cells = np.stack([b.reshape(-1) for b in boards]).astype(np.int64)
    if num_actions == height * width:
        actions = cells
    elif num_actions == width and kind == "mirror":
        actions = np.stack([np.arange(width), np.arange(width)[::-1]]).astype(np.int64)
    else:
        raise ValueError(f"cannot map {num_actions} actions onto a {height}x{width} board under {kind!r} symmetry")
    return cells, actions


class SymmetryAugmenter:
    """Replaces each row of a sampled batch by one of its symmetries, drawn uniformly (identity included).

    Args:
        cell_perms: int [G, H*W] gather permutations of the board cells (see the module docstring).
        action_perms: int [G, A] gather permutations of the action space.
        fields: how to transform each field of ``Batch.unrolled`` (a policy's ``step_fields``).
    """

    def __init__(self, cell_perms: np.ndarray, action_perms: np.ndarray,
                 fields: Optional[Mapping[str, StepField]] = None) -> None:
        self.fields = dict(fields or {})
        self.cell_perms = np.asarray(cell_perms, dtype=np.int64)
        self.action_perms = np.asarray(action_perms, dtype=np.int64)
        if self.cell_perms.ndim != 2 or self.action_perms.ndim != 2 or len(self.cell_perms) != len(self.action_perms):
            raise ValueError("cell_perms [G, H*W] and action_perms [G, A] must be 2-D with the same G")
        for perms in (self.cell_perms, self.action_perms):
            if not (np.sort(perms, axis=1) == np.arange(perms.shape[1])).all():
                raise ValueError("every row of cell_perms / action_perms must be a permutation")
        # where each original action goes: new action = action_dest[g, old action]
        self.action_dest = np.argsort(self.action_perms, axis=1)

    @classmethod
    def for_env(cls, env_cls: Any, obs_shape: tuple, num_actions: int,
                fields: Optional[Mapping[str, StepField]] = None) -> "SymmetryAugmenter":
        """The augmenter of an env class's ``symmetry`` ('dihedral' / 'mirror'); a clear error if it has none."""
        kind: Optional[str] = getattr(env_cls, "symmetry", None)
        if kind is None:
            raise ValueError(f"policy.symmetry_augmentation=True but env {env_cls.__name__} declares no board "
                             f"symmetry (class attribute `symmetry`); set symmetry_augmentation=False")
        if len(obs_shape) != 3:
            raise ValueError(f"symmetry augmentation needs [C, H, W] observations, got shape {tuple(obs_shape)}")
        return cls(*board_symmetries(kind, int(obs_shape[1]), int(obs_shape[2]), int(num_actions)), fields=fields)

    @property
    def num_symmetries(self) -> int:
        return len(self.cell_perms)

    def __call__(self, batch: Any, rng: np.random.Generator, g: Optional[np.ndarray] = None) -> Any:
        """A copy of ``batch`` (a Batch dataclass) with row b transformed by symmetry ``g[b]`` (default: random)."""
        B = batch.obs.shape[0]
        g = rng.integers(0, self.num_symmetries, B) if g is None else np.asarray(g, dtype=np.int64)
        changes = {}
        cells = self.cell_perms[g]  # [B, H*W]
        acts = self.action_perms[g]  # [B, A]
        for name in _OBS_FIELDS:
            x = getattr(batch, name, None)
            if x is not None:
                changes[name] = _move_cells(x, cells)
        for name in _ACTION_FIELDS:
            x = getattr(batch, name, None)
            if x is not None:
                changes[name] = np.take_along_axis(self.action_dest[g], x.reshape(B, -1), axis=1).reshape(x.shape)
        for name in _PER_ACTION_FIELDS:
            x = getattr(batch, name, None)
            if x is not None:
                changes[name] = _permute_axis(x, acts, x.ndim - 1)
        unrolled = dict(getattr(batch, "unrolled", None) or {})
        for name, spec in self.fields.items():
            x = unrolled.get(name)
            if x is None:
                continue
            if spec.observation:
                x = _move_cells(x, cells)
            for axis in spec.action_axes:  # an axis of one step's array; the batch adds [B, K+1] in front
                x = _permute_axis(x, acts, 2 + axis % (x.ndim - 2))
            unrolled[name] = x
        if unrolled:
            changes["unrolled"] = unrolled
        return dataclasses.replace(batch, **changes)


def _move_cells(x: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Observations x [B, ..., C, H, W] with row b's cells gathered through ``cells[b]`` [H*W]."""
    flat = x.reshape(*x.shape[:-2], -1)  # [B, ..., C, H*W]
    idx = cells.reshape(len(cells), *([1] * (flat.ndim - 2)), -1)
    return np.take_along_axis(flat, idx, axis=-1).reshape(x.shape)


def _permute_axis(x: np.ndarray, acts: np.ndarray, axis: int) -> np.ndarray:
    """x [B, ...] with its action axis ``axis`` gathered through row b's permutation ``acts[b]`` [A]."""
    shape = [1] * x.ndim
    shape[0], shape[axis] = len(acts), acts.shape[1]
    idx = np.broadcast_to(acts.reshape(shape), x.shape[:axis] + (acts.shape[1],) + x.shape[axis + 1:])
    return np.take_along_axis(x, idx, axis=axis)
