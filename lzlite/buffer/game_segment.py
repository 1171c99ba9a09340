"""GameSegment: what a collector produces for one game, or a fixed-length piece of one.

A segment of L steps holds, for every step t (the position *before* the move at t):

    obs         [L, *obs_shape]  observation (float32 or uint8), from the view of the player to move
    action      [L]      int64   action taken at t (an index into the full action space)
    reward      [L]      float32 reward of the move at t, from the view of the player who made it
    to_play     [L]      int64   player to move at t (-1 for single-player games)
    legal_mask  [L, A]   bool    legal actions at t
    root_value  [L]      float32 search value at t, from the view of the player to move
    policy      [L, A]   float32 policy target at t (visit distribution or improved policy)
    predicted_value [L]  float32 optional network value at t (for priorities / diagnostics)
    extras      {name: [L, *shape] float32}  the per-step records a policy declared (``Policy.step_fields``)
                and the collector took from ``Policy.record_step``; the same names and shapes at every step

and, once closed, the state reached after its last move:

    final_obs   [*obs_shape] or None   observation after the last move (None: stored as zeros)
    done        bool                   the episode ended with the last move (the final state is terminal)
    bootstrap_value float              value of the final state for the player to move there:
                                       0 when done; required when the segment was cut before the end

The collector calls ``append`` once per move and ``close`` once; the buffer reads ``freeze()``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

__all__ = ["GameSegment", "SegmentArrays", "StepField"]


@dataclass(frozen=True)
class StepField:
    """How the buffer gathers and augments one per-step field that a policy's loss reads (``Policy.step_fields``).

    The buffer returns the field at the unrolled positions t..t+K of each sampled row (``Batch.unrolled``);
    symmetry augmentation transforms it as declared here.

    Attributes:
        observation: the field is an observation [C, H, W]: board symmetries move its cells like ``Batch.obs``.
        action_axes: axes of one step's array that run over the action space: board symmetries permute them
            like the policy target's.
    """

    observation: bool = False
    action_axes: Tuple[int, ...] = ()


@dataclass(frozen=True)
class SegmentArrays:
    """The numpy form of a closed GameSegment (see the module docstring for the fields' meaning)."""

    obs: np.ndarray  # [L, *obs_shape] float32 or uint8
    action: np.ndarray  # [L] int64
    reward: np.ndarray  # [L] float32
    to_play: np.ndarray  # [L] int64
    legal_mask: np.ndarray  # [L, A] bool
    root_value: np.ndarray  # [L] float32
    policy: np.ndarray  # [L, A] float32
    predicted_value: Optional[np.ndarray]  # [L] float32, or None when never given
    final_obs: Optional[np.ndarray]  # [*obs_shape], or None
    done: bool
    bootstrap_value: float
    extras: Dict[str, np.ndarray] = field(default_factory=dict)  # name -> [L, *shape] float32

    def __len__(self) -> int:
        return int(self.action.shape[0])


class GameSegment:
    """Per-step records of one game (or a piece of one), appended by a collector.

    Args:
        action_space_size: A, the size of the full action space.
        game_segment_length: when given, at most this many steps fit (fixed-length segments for
            UniZero-style training); ``is_full`` tells the collector to close it and start another.

    Example:
        >>> seg = GameSegment(action_space_size=9)
        >>> seg.append(obs, action=4, reward=0.0, to_play=1, legal_mask=mask, root_value=0.1, policy=pi)
        >>> seg.close(final_obs, done=True)
        >>> buffer.push_segments([seg])
    """

    def __init__(self, action_space_size: int, game_segment_length: Optional[int] = None) -> None:
        if not isinstance(action_space_size, (int, np.integer)) or action_space_size < 1:
            raise ValueError(f"action_space_size must be a positive int, got {action_space_size!r}")
        if game_segment_length is not None and (
            not isinstance(game_segment_length, (int, np.integer)) or game_segment_length < 1
        ):
            raise ValueError(
                f"game_segment_length must be a positive int or None (unbounded), got {game_segment_length!r}"
            )
        self.action_space_size = int(action_space_size)
        self.game_segment_length = None if game_segment_length is None else int(game_segment_length)
        # the learner step (weights version) a collector was given when it played this segment's first move, set
        # by collectors whose segments run on across collect calls; None: within the collect that returned it
        self.played_from: Optional[int] = None
        self._obs: List[np.ndarray] = []
        self._action: List[int] = []
        self._reward: List[float] = []
        self._to_play: List[int] = []
        self._legal: List[np.ndarray] = []
        self._root_value: List[float] = []
        self._policy: List[np.ndarray] = []
        self._pred: List[Optional[float]] = []
        self._extras: Dict[str, List[np.ndarray]] = {}
        self._obs_shape: Optional[Tuple[int, ...]] = None
        self._obs_dtype: Optional[np.dtype] = None
        self.final_obs: Optional[np.ndarray] = None
        self.done = False
        self.bootstrap_value: Optional[float] = None
        self.closed = False
        self._frozen: Optional[SegmentArrays] = None

    def __len__(self) -> int:
        return len(self._action)

    @property
    def is_full(self) -> bool:
        """True when a fixed-length segment holds ``game_segment_length`` steps."""
        return self.game_segment_length is not None and len(self) >= self.game_segment_length

    def append(
        self,
        obs: Any,
        action: int,
        reward: float,
        to_play: int,
        legal_mask: Any,
        root_value: float,
        policy: Any,
        predicted_value: Optional[float] = None,
        extras: Optional[Mapping[str, Any]] = None,
    ) -> None:
        """Record one move: the position before it, the move, its reward and the search results.

        Args:
            obs: [*obs_shape] observation at t (float32 or uint8; other floats are cast to float32).
            action: the action played at t, in [0, A) and legal.
            reward: reward of this move from the view of its mover.
            to_play: the player to move at t (-1 for single-player games).
            legal_mask: [A] bool legal actions at t.
            root_value: search value at t from the view of the player to move.
            policy: [A] policy target (non-negative; typically the visit distribution).
            predicted_value: optional network value at t.
            extras: optional per-step records of a policy (``Policy.record_step``): name -> finite array;
                the same names and shapes at every step of a segment.
        """
        if self.closed:
            raise ValueError("append() on a closed GameSegment; start a new segment for the next game")
        if self.is_full:
            raise ValueError(
                f"GameSegment is full (game_segment_length={self.game_segment_length}); close it and "
                f"start a new one (check `is_full` before appending)"
            )
        step = len(self)
        A = self.action_space_size
        o = np.asarray(obs)
        if o.dtype != np.uint8:
            o = o.astype(np.float32, copy=False)
        if self._obs_shape is None:
            self._obs_shape, self._obs_dtype = o.shape, o.dtype
        elif o.shape != self._obs_shape or o.dtype != self._obs_dtype:
            raise ValueError(
                f"step {step}: obs has shape {o.shape} dtype {o.dtype}, but earlier steps had "
                f"{self._obs_shape} {self._obs_dtype}; every step of a segment needs the same obs layout"
            )
        mask = np.asarray(legal_mask)
        if mask.shape != (A,) or mask.dtype != np.bool_:
            raise ValueError(
                f"step {step}: legal_mask must be a bool array of shape ({A},), got {mask.dtype} {mask.shape}"
            )
        pi = np.asarray(policy, dtype=np.float32)
        if pi.shape != (A,):
            raise ValueError(f"step {step}: policy must have shape ({A},) (full action space), got {pi.shape}")
        if not np.all(np.isfinite(pi)) or np.any(pi < 0):
            raise ValueError(f"step {step}: policy must be finite and non-negative, got {pi}")
        a = int(action)
        if not 0 <= a < A:
            raise ValueError(f"step {step}: action {a} is outside [0, {A})")
        if not mask[a]:
            raise ValueError(f"step {step}: action {a} is illegal under legal_mask {np.flatnonzero(mask).tolist()}")
        records = {name: np.asarray(x, dtype=np.float32) for name, x in (extras or {}).items()}
        if step > 0 and sorted(records) != sorted(self._extras):
            raise ValueError(f"step {step}: extras {sorted(records)}, but earlier steps had {sorted(self._extras)}; "
                             f"give the same records at every step of a segment")
        for name, x in records.items():
            want = self._extras[name][0].shape if step > 0 else x.shape
            if x.shape != want or not np.all(np.isfinite(x)):
                raise ValueError(f"step {step}: extras[{name!r}] must be a finite array of shape {want} (as at "
                                 f"step 0), got shape {x.shape}")
        for name, v in (("reward", reward), ("root_value", root_value)):
            if not np.isfinite(v):
                raise ValueError(f"step {step}: {name} must be finite, got {v!r}")
        self._obs.append(o.copy())
        self._action.append(a)
        self._reward.append(float(reward))
        self._to_play.append(int(to_play))
        self._legal.append(mask.copy())
        self._root_value.append(float(root_value))
        self._policy.append(pi.copy())
        self._pred.append(None if predicted_value is None else float(predicted_value))
        for name, x in records.items():
            self._extras.setdefault(name, []).append(x.copy())

    def close(self, final_obs: Any = None, *, done: bool, bootstrap_value: Optional[float] = None) -> None:
        """Finish the segment.

        Args:
            final_obs: [*obs_shape] observation after the last move (used for consistency losses and
                to reanalyse a cut segment's last bootstrap); None stores zeros.
            done: True when the last move ended the episode (the final state is terminal, value 0).
            bootstrap_value: value of the final state for its player to move; required when
                ``done`` is False (the segment was cut), ignored (must be None or 0) when done.
        """
        if self.closed:
            raise ValueError("GameSegment.close() called twice")
        if len(self) == 0:
            raise ValueError("cannot close an empty GameSegment: append at least one step first")
        if done:
            if bootstrap_value not in (None, 0, 0.0):
                raise ValueError(
                    f"bootstrap_value={bootstrap_value!r} with done=True: a terminal state has value 0; "
                    f"pass done=False if the episode continues after this segment"
                )
            bootstrap_value = 0.0
        elif bootstrap_value is None or not np.isfinite(bootstrap_value):
            raise ValueError(
                f"a segment cut before the episode ended (done=False) needs a finite bootstrap_value "
                f"(the search value of the state after its last move), got {bootstrap_value!r}"
            )
        if final_obs is not None:
            fo = np.asarray(final_obs).astype(self._obs_dtype, copy=True)
            if fo.shape != self._obs_shape:
                raise ValueError(f"final_obs has shape {fo.shape}, expected the steps' obs shape {self._obs_shape}")
            self.final_obs = fo
        self.done = bool(done)
        self.bootstrap_value = float(bootstrap_value)
        self.closed = True

    def freeze(self) -> SegmentArrays:
        """Return the segment as numpy arrays (cached); the segment must be closed."""
        if not self.closed:
            raise ValueError(
                f"GameSegment of {len(self)} steps is not closed; call close(final_obs, done=...) first"
            )
        if self._frozen is None:
            pred = None
            if any(p is not None for p in self._pred):
                pred = np.array([np.nan if p is None else p for p in self._pred], dtype=np.float32)
            self._frozen = SegmentArrays(
                obs=np.stack(self._obs),
                action=np.array(self._action, dtype=np.int64),
                reward=np.array(self._reward, dtype=np.float32),
                to_play=np.array(self._to_play, dtype=np.int64),
                legal_mask=np.stack(self._legal),
                root_value=np.array(self._root_value, dtype=np.float32),
                policy=np.stack(self._policy),
                predicted_value=pred,
                final_obs=self.final_obs,
                done=self.done,
                bootstrap_value=float(self.bootstrap_value),
                extras={name: np.stack(xs) for name, xs in self._extras.items()},
            )
        return self._frozen

    def to_arrays(self) -> Dict[str, Any]:
        """The frozen segment as a plain dict of its fields."""
        f = self.freeze()
        return {k: getattr(f, k) for k in SegmentArrays.__dataclass_fields__}
