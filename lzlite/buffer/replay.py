"""Replay buffers over transitions: uniform ('game_buffer') and prioritized ('prioritized_game_buffer').

Storage is a set of flat, preallocated ring arrays over transitions, so every training target is a
numpy gather (see ``targets.py``), with no per-episode objects and no Python loop over the batch.
A pushed segment of L moves occupies L + 1 consecutive rows: its L positions (sampleable) and the
final state after the last move (never sampled as a start; its value is 0 when terminal, or the
segment's bootstrap value when cut). Every row knows the absolute position of its episode's final
row (``end``). Absolute position p lives in slot ``p % C``.

Eviction never corrupts targets: a segment is written whole, so for a live row p (p >= total - C)
every position it reads, p..end, was written before ``total`` and is newer than p, hence also live.
Segments longer than the capacity are refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch
from easydict import EasyDict

from lzlite.buffer import targets as T
from lzlite.buffer.game_segment import GameSegment, SegmentArrays
from lzlite.buffer.sum_tree import SumTree
from lzlite.config import ConfigError, Range, at_least, between, merge_strict
from lzlite.registry import BUFFER_REGISTRY

__all__ = ["Batch", "ReplayBuffer", "PrioritizedReplayBuffer", "ReanalyzeFn"]

# reanalyze_fn(obs [M, *obs_shape], legal_mask bool [M, A]) -> (values [M], policies [M, A] or None)
ReanalyzeFn = Callable[[np.ndarray, np.ndarray], Tuple[np.ndarray, Optional[np.ndarray]]]
# bootstrap_fn(obs [M, *obs_shape]) -> values [M]
BootstrapFn = Callable[[np.ndarray], np.ndarray]


@dataclass
class Batch:
    """One sampled minibatch with its targets. Bt = batch size, K = num_unroll_steps, A = actions.

    Step k of row b is position t_b + k. ``mask_unroll[b, k]`` is True where a move was made there
    (t_b + k < episode end). Beyond the end: actions are random (uniform over [0, A)), rewards 0,
    values 0, policies all-zero (so a cross-entropy against them is 0 even unmasked), legal masks
    all False, to_play -1. At the final state itself (t_b + k == end) the value target is 0 for a
    terminal state, or the bootstrap value of a cut segment.
    """

    obs: np.ndarray  # [Bt, *obs_shape] observation at t (uint8 or float32)
    actions: np.ndarray  # [Bt, K] int64 actions at t..t+K-1
    mask_unroll: np.ndarray  # [Bt, K+1] bool, real steps
    target_reward: np.ndarray  # [Bt, K] float32 reward of the move at t+k (mover's view)
    target_value: np.ndarray  # [Bt, K+1] float32 n-step value at t+k (view of the player to move there)
    target_policy: np.ndarray  # [Bt, K+1, A] float32
    legal_mask: np.ndarray  # [Bt, K+1, A] bool legal actions at t+k
    to_play: np.ndarray  # [Bt, K+1] int64 player to move at t+k (-1 beyond the end / single-player)
    indices: np.ndarray  # [Bt] int64 absolute positions t, for update_priorities
    weights: np.ndarray  # [Bt] float32 importance-sampling weights (1 for uniform sampling)
    # the fields named in the buffer's ``unroll_fields`` at positions t..t+K: name -> [Bt, K+1, *shape]; beyond the
    # end they repeat the final state's row (observations: the final observation; a segment's extras: zeros)
    unrolled: Dict[str, np.ndarray] = field(default_factory=dict)


@BUFFER_REGISTRY.register("game_buffer")
class ReplayBuffer:
    """Uniform replay over transitions with vectorised MuZero/AlphaZero targets.

    Args:
        cfg: overrides of ``default_config()`` (unknown keys are errors).
    """

    #: keys the training loop sets from the env and the policy (not offered in a training config)
    wired_keys = ("value_sign", "unroll_fields")

    @classmethod
    def default_config(cls) -> EasyDict:
        return EasyDict(
            replay_buffer_size=20000,  # capacity in rows: transitions plus one final-state row per segment
            batch_size=256,  # minibatch size (split across ranks under DDP)
            num_unroll_steps=5,  # K: steps unrolled through the dynamics model (MuZero; AlphaZero fixes 0)
            td_steps=9,  # n of the n-step value target (>= the episode length: Monte-Carlo)
            discount_factor=0.997,  # gamma of the value targets and of the search's backups (board games: 1.0)
            value_sign=1,  # +1 single-player; -1 two-player alternating zero-sum (negate the next value)
            use_priority=False,  # prioritized sampling; needs 'prioritized_game_buffer'
            priority_prob_alpha=0.6,  # sampling probability is proportional to priority ** alpha
            priority_prob_beta=0.4,  # importance-sampling exponent (1 fully corrects the bias)
            priority_epsilon=1e-6,  # floor added to updated priorities so no transition starves
            reanalyze_ratio=0.0,  # fraction of each batch whose targets the policy's search recomputes (Reanalyse)
            reanalyze_policy=True,  # also recompute the policy targets of reanalysed rows
            # per-step fields returned at the unrolled positions in Batch.unrolled: 'obs' (the stored observations)
            #  or the name of a record the segments carry in their extras (the training loop sets it from the
            #  policy's ``step_fields``)
            unroll_fields=[],
        )

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(
            replay_buffer_size=at_least(2),  # at least one move and its segment's final state (see check_config)
            batch_size=at_least(1),
            num_unroll_steps=at_least(0),
            td_steps=at_least(1),
            discount_factor=between(0, 1),
            priority_prob_alpha=at_least(0),  # 0: uniform
            priority_prob_beta=between(0, 1),
            priority_epsilon=at_least(0),
            reanalyze_ratio=between(0, 1),
        )

    @classmethod
    def check_config(cls, cfg: Mapping, path: str) -> None:
        """A compiled section's buffer must hold more than one batch: the training loop samples only once
        ``batch_size`` moves are stored, and every stored segment also takes a row for its final state."""
        if cfg.replay_buffer_size <= cfg.batch_size:
            raise ConfigError(f"config key '{path}.replay_buffer_size' must be greater than {path}.batch_size="
                              f"{cfg.batch_size} (each stored segment also holds its final state), got "
                              f"{cfg.replay_buffer_size}: a run would collect forever and train nothing; raise "
                              f"replay_buffer_size (a few batches at least) or lower batch_size")

    def __init__(self, cfg: Optional[Mapping] = None) -> None:
        self.cfg = merge_strict(self.default_config(), cfg, type(self).__name__)
        c = self.cfg
        for key in ("replay_buffer_size", "batch_size", "td_steps"):
            if int(c[key]) < 1:
                raise ValueError(f"{key} must be >= 1, got {c[key]}")
        if int(c.num_unroll_steps) < 0:
            raise ValueError(f"num_unroll_steps must be >= 0, got {c.num_unroll_steps}")
        if c.value_sign not in (1, -1):
            raise ValueError(f"value_sign must be +1 (single-player) or -1 (two-player zero-sum), got {c.value_sign}")
        if not 0.0 <= c.discount_factor <= 1.0:
            raise ValueError(f"discount_factor must be in [0, 1], got {c.discount_factor}")
        if not 0.0 <= c.reanalyze_ratio <= 1.0:
            raise ValueError(f"reanalyze_ratio must be in [0, 1], got {c.reanalyze_ratio}")
        if c.use_priority and not isinstance(self, PrioritizedReplayBuffer):
            raise ValueError("use_priority=True needs the 'prioritized_game_buffer' buffer type, not 'game_buffer'")
        self.capacity = int(c.replay_buffer_size)
        self._total = 0  # rows ever written; the next row's absolute position
        self._next_segment = 0
        self._num_live = 0  # sampleable live rows
        self._max_len = 0  # longest segment stored (bounds the n-step reward window)
        self._obs: Optional[np.ndarray] = None  # allocated on the first push, when shapes are known
        self._extras: Dict[str, np.ndarray] = {}  # name -> [C, *shape] float32: the segments' per-step records

    # ------------------------------------------------------------------ storage
    def _allocate(self, seg: SegmentArrays) -> None:
        C, A = self.capacity, seg.policy.shape[1]
        self.obs_shape: Tuple[int, ...] = tuple(seg.obs.shape[1:])
        self.action_space_size = A
        # np.zeros maps untouched pages lazily, so a large, mostly empty buffer costs little memory.
        self._obs = np.zeros((C,) + self.obs_shape, dtype=seg.obs.dtype)
        self._action = np.zeros(C, dtype=np.int64)
        self._reward = np.zeros(C, dtype=np.float32)
        self._value = np.zeros(C, dtype=np.float32)
        self._policy = np.zeros((C, A), dtype=np.float32)
        self._legal = np.zeros((C, A), dtype=np.bool_)
        self._to_play = np.full(C, -1, dtype=np.int64)
        self._end = np.zeros(C, dtype=np.int64)  # absolute position of the episode's final row
        self._pos = np.full(C, -1, dtype=np.int64)  # absolute position held by the slot (-1: empty)
        self._segment = np.full(C, -1, dtype=np.int64)  # id of the segment the row belongs to
        self._sampleable = np.zeros(C, dtype=np.bool_)  # False for final-state rows and empty slots
        # the per-step records of a policy, when the collector takes them (fixed by the first segment pushed)
        self._extras = {name: np.zeros((C,) + x.shape[1:], dtype=np.float32) for name, x in seg.extras.items()}

    def _check_segment(self, i: int, seg: SegmentArrays) -> None:
        if seg.obs.shape[1:] != self.obs_shape or seg.obs.dtype != self._obs.dtype:
            raise ValueError(
                f"segment {i}: obs {seg.obs.shape[1:]} {seg.obs.dtype} does not match the buffer's "
                f"{self.obs_shape} {self._obs.dtype} (fixed by the first segment pushed)"
            )
        if seg.policy.shape[1] != self.action_space_size:
            raise ValueError(
                f"segment {i}: action space {seg.policy.shape[1]} does not match the buffer's {self.action_space_size}"
            )
        shapes = {name: x.shape[1:] for name, x in seg.extras.items()}
        stored = {name: x.shape[1:] for name, x in self._extras.items()}
        if shapes != stored:
            raise ValueError(f"segment {i}: extras {shapes} (name: per-step shape), but the first segment pushed had "
                             f"{stored}; every segment of a buffer carries the same records")
        if len(seg) + 1 > self.capacity:
            raise ValueError(
                f"segment {i} needs {len(seg) + 1} rows but replay_buffer_size is {self.capacity}; "
                f"raise replay_buffer_size or use shorter segments (game_segment_length)"
            )

    def push_segments(self, segments: Sequence[GameSegment]) -> None:
        """Append closed segments; the oldest rows are overwritten once the buffer is full."""
        if isinstance(segments, GameSegment):
            raise TypeError("push_segments takes a list of GameSegment; wrap a single one: push_segments([seg])")
        frozen = []
        for i, s in enumerate(segments):
            if not isinstance(s, GameSegment):
                raise TypeError(f"push_segments: item {i} is {type(s).__name__}, expected GameSegment")
            frozen.append(s.freeze())
        if not frozen:
            return
        if self._obs is None:
            self._allocate(frozen[0])
        for i, f in enumerate(frozen):
            self._check_segment(i, f)
        # Write segments in chunks that fit the ring, so no chunk overwrites its own rows.
        chunk, rows = [], 0
        for f in frozen:
            if rows + len(f) + 1 > self.capacity:
                self._write(chunk)
                chunk, rows = [], 0
            chunk.append(f)
            rows += len(f) + 1
        self._write(chunk)

    def _write(self, segs: Sequence[SegmentArrays]) -> None:
        lens = np.array([len(f) for f in segs], dtype=np.int64)
        n_rows = int(lens.sum() + len(segs))
        pos = self._total + np.arange(n_rows, dtype=np.int64)
        slots = pos % self.capacity
        # Rows per segment: its L moves then its final state.
        seg_start = self._total + np.concatenate(([0], np.cumsum(lens + 1)[:-1]))
        seg_end = seg_start + lens
        final_obs = [
            np.zeros(self.obs_shape, self._obs.dtype)[None] if f.final_obs is None else f.final_obs[None] for f in segs
        ]
        zeros_a = np.zeros((1, self.action_space_size), np.float32)
        cat = np.concatenate
        self._num_live -= int(np.count_nonzero(self._sampleable[slots]))
        self._obs[slots] = cat([x for f, fo in zip(segs, final_obs) for x in (f.obs, fo)])
        self._action[slots] = cat([x for f in segs for x in (f.action, [0])])
        self._reward[slots] = cat([x for f in segs for x in (f.reward, [0.0])])
        self._value[slots] = cat([x for f in segs for x in (f.root_value, [f.bootstrap_value])])
        self._policy[slots] = cat([x for f in segs for x in (f.policy, zeros_a)])
        self._legal[slots] = cat([x for f in segs for x in (f.legal_mask, zeros_a.astype(bool))])
        self._to_play[slots] = cat([x for f in segs for x in (f.to_play, [-1])])
        for name, ring in self._extras.items():  # the final-state row of a record: zeros
            zeros_r = np.zeros((1,) + ring.shape[1:], np.float32)
            ring[slots] = cat([x for f in segs for x in (f.extras[name], zeros_r)])
        self._end[slots] = np.repeat(seg_end, lens + 1)
        self._pos[slots] = pos
        self._segment[slots] = np.repeat(self._next_segment + np.arange(len(segs)), lens + 1)
        sampleable = pos < self._end[slots]
        self._sampleable[slots] = sampleable
        self._num_live += int(np.count_nonzero(sampleable))
        self._on_write(slots, sampleable)
        self._total += n_rows
        self._next_segment += len(segs)
        self._max_len = max(self._max_len, int(lens.max()))

    # ------------------------------------------------------------------ state
    _STATE_SCALARS = ("_total", "_next_segment", "_num_live", "_max_len")

    def state_dict(self) -> Dict[str, Any]:
        """Everything needed to resume sampling exactly: tensors and numbers only (weights_only-safe)."""
        state: Dict[str, Any] = {k: getattr(self, k) for k in self._STATE_SCALARS}
        if self._obs is not None:
            state["obs_shape"] = list(self.obs_shape)
            state["action_space_size"] = self.action_space_size
            state["arrays"] = {k: torch.from_numpy(v.copy()) for k, v in vars(self).items() if isinstance(v, np.ndarray)}
            state["extras"] = {k: torch.from_numpy(v.copy()) for k, v in self._extras.items()}
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore a ``state_dict``; the capacity must match the checkpoint's."""
        for k in self._STATE_SCALARS:
            setattr(self, k, int(state[k]))
        if "arrays" not in state:
            return
        arrays = {k: v.numpy() for k, v in state["arrays"].items()}
        extras = {k: v.numpy() for k, v in state.get("extras", {}).items()}
        if len(arrays["_pos"]) != self.capacity:
            raise ValueError(f"checkpoint buffer holds {len(arrays['_pos'])} rows but replay_buffer_size is "
                             f"{self.capacity}; resume with the same replay_buffer_size")
        self.obs_shape = tuple(state["obs_shape"])
        self.action_space_size = int(state["action_space_size"])
        for k, v in arrays.items():
            setattr(self, k, v.copy())
        self._extras = {k: v.copy() for k, v in extras.items()}

    def _on_write(self, slots: np.ndarray, sampleable: np.ndarray) -> None:
        """Hook for subclasses: rows ``slots`` were (over)written."""

    # ------------------------------------------------------------------ sizes
    def __len__(self) -> int:
        return self._num_live

    @property
    def num_transitions(self) -> int:
        """Live sampleable positions (moves), excluding final-state rows."""
        return self._num_live

    @property
    def is_full(self) -> bool:
        """True once every row has been written: storing more evicts the oldest."""
        return self._total >= self.capacity

    @property
    def num_episodes(self) -> int:
        """Segments (episodes or episode pieces) with at least one sampleable position still stored."""
        if self._total == 0:
            return 0
        oldest = max(0, self._total - self.capacity) % self.capacity
        # A segment whose moves were all evicted may still have its final row: don't count it.
        return int(self._next_segment - self._segment[oldest] - (not self._sampleable[oldest]))

    # ------------------------------------------------------------------ sampling
    def _sample_slots(self, batch_size: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """Uniform over sampleable live rows: [Bt] slots and [Bt] IS weights (all 1).

        Final-state rows are at most half of the rows, so redrawing them converges in a few rounds.
        """
        filled = min(self._total, self.capacity)
        slots = rng.integers(0, filled, size=batch_size)
        bad = ~self._sampleable[slots]
        while bad.any():
            slots[bad] = rng.integers(0, filled, size=int(bad.sum()))
            bad = ~self._sampleable[slots]
        return slots, np.ones(batch_size, dtype=np.float32)

    def sample(
        self,
        batch_size: Optional[int] = None,
        rng: Optional[np.random.Generator] = None,
        reanalyze_fn: Optional[ReanalyzeFn] = None,
        bootstrap_fn: Optional[BootstrapFn] = None,
    ) -> Batch:
        """Sample a minibatch (with replacement) and build its targets.

        Args:
            batch_size: Bt (default ``cfg.batch_size``); at most ``num_transitions``.
            rng: the generator that draws positions and padding actions (required: explicit seeding).
            reanalyze_fn: optional ``fn(obs [M, *obs_shape], legal_mask [M, A]) -> (values [M], policies
                [M, A] or None)``
                called once per batch when ``reanalyze_ratio > 0``: the first
                ``round(reanalyze_ratio * Bt)`` rows (a random subset, as rows are drawn at random) get
                their in-episode bootstrap values v_{t+k+n} and, with ``reanalyze_policy``, their
                policy targets at real steps replaced by its outputs. Terminal and cut-end bootstraps
                are never reanalysed.
            bootstrap_fn: optional ``fn(obs [M, *obs_shape]) -> values [M]`` called once per batch on
                every in-episode bootstrap position: fresh bootstrap values v_{t+k+n} (e.g. the target
                network's value, LightZero's default) instead of the root values stored at collection.
                Rows ``reanalyze_fn`` covers are then overwritten by its (search) values.

        Returns:
            A ``Batch``.
        """
        c = self.cfg
        Bt = int(c.batch_size if batch_size is None else batch_size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"sample() needs rng=np.random.Generator (e.g. np.random.default_rng(seed)), got {rng!r}")
        if self._num_live == 0:
            raise ValueError("cannot sample from an empty replay buffer; push_segments() first")
        if not 1 <= Bt <= self._num_live:
            raise ValueError(
                f"batch_size {Bt} must be in [1, num_transitions={self._num_live}]; collect more data "
                f"before training (or lower batch_size)"
            )
        K, n = int(c.num_unroll_steps), int(c.td_steps)
        slots, weights = self._sample_slots(Bt, rng)
        start, end = self._pos[slots], self._end[slots]
        pos, mask = T.unroll_positions(start, end, K)  # [Bt, K+1]
        ring = pos % self.capacity
        end2 = end[:, None]
        boot, inside = T.bootstrap_positions(pos, end2, n)
        boot_value = self._value[boot % self.capacity]
        policy = T.gather_unrolled(self._policy, pos, mask, 0.0)

        m = int(round(c.reanalyze_ratio * Bt)) if reanalyze_fn is not None else 0
        fresh = inside.copy()
        fresh[:m] = False  # the reanalysed rows get search values below
        if bootstrap_fn is not None and fresh.any():
            uniq, inv = np.unique(boot[fresh], return_inverse=True)
            values = np.asarray(bootstrap_fn(self._obs[uniq % self.capacity]), dtype=np.float32)
            if values.shape != uniq.shape:
                raise ValueError(f"bootstrap_fn returned values of shape {values.shape}, expected {uniq.shape}")
            boot_value[fresh] = values[inv]
        if m > 0:
            self._reanalyze(reanalyze_fn, m, pos, mask, boot, inside, boot_value, policy)

        value = T.nstep_value_targets(
            self._reward, self._value, pos, end2, n, c.discount_factor, c.value_sign,
            beyond_end=start[:, None] + np.arange(K + 1) > end2,
            boot_value=boot_value, max_horizon=self._max_len,
        )
        real_a = mask[:, :K]
        actions = np.where(real_a, self._action[ring[:, :K]], rng.integers(0, self.action_space_size, (Bt, K)))
        batch = Batch(
            obs=self._obs[slots],
            actions=actions,
            mask_unroll=mask,
            target_reward=T.gather_unrolled(self._reward, pos[:, :K], real_a, 0.0),
            target_value=value,
            target_policy=policy,
            legal_mask=T.gather_unrolled(self._legal, pos, mask, False),
            to_play=T.gather_unrolled(self._to_play, pos, mask, -1),
            indices=start.copy(),
            weights=weights,
        )
        for name in c.unroll_fields:
            batch.unrolled[name] = self._field(name)[ring]
        return batch

    def _field(self, name: str) -> np.ndarray:
        """The ring array [C, ...] of a per-step field named in ``unroll_fields``."""
        if name == "obs":
            return self._obs
        if name not in self._extras:
            raise ValueError(f"unroll_fields names {name!r}, but the buffer's segments carry no such record (they "
                             f"carry {sorted(self._extras) or 'none'}): the policy's step_fields must be recorded by "
                             f"the collector (Policy.record_step)")
        return self._extras[name]

    def _reanalyze(
        self,
        fn: ReanalyzeFn,
        m: int,
        pos: np.ndarray,
        mask: np.ndarray,
        boot: np.ndarray,
        inside: np.ndarray,
        boot_value: np.ndarray,
        policy: np.ndarray,
    ) -> None:
        """Recompute bootstrap values (and policies) of the first ``m`` rows in place, one fn call."""
        v_sel = np.zeros_like(inside)
        v_sel[:m] = inside[:m]
        p_sel = np.zeros_like(mask)
        if self.cfg.reanalyze_policy:
            p_sel[:m] = mask[:m]
        need = np.concatenate([boot[v_sel], pos[p_sel]])
        if need.size == 0:
            return
        # Bootstrap and unroll positions overlap when n <= K: search each position once.
        uniq, inv = np.unique(need, return_inverse=True)
        ring = uniq % self.capacity
        values, policies = fn(self._obs[ring], self._legal[ring])
        M = uniq.size
        values = np.asarray(values, dtype=np.float32)
        if values.shape != (M,):
            raise ValueError(f"reanalyze_fn returned values of shape {values.shape}, expected ({M},)")
        n_v = int(v_sel.sum())
        boot_value[v_sel] = values[inv[:n_v]]
        if policies is not None and self.cfg.reanalyze_policy:
            policies = np.asarray(policies, dtype=np.float32)
            if policies.shape != (M, self.action_space_size):
                raise ValueError(
                    f"reanalyze_fn returned policies of shape {policies.shape}, expected ({M}, {self.action_space_size})"
                )
            policy[p_sel] = policies[inv[n_v:]]

    def update_priorities(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """No-op for uniform sampling (validated, so the learner can call it for any buffer)."""
        _check_priorities(indices, priorities)

    # ------------------------------------------------------------ whole-buffer reanalyze (ReZero)
    def live_segments(self) -> Tuple[np.ndarray, np.ndarray]:
        """Stored segments with at least one sampleable row, oldest first.

        Eviction overwrites the oldest rows first, so the live sampleable rows of a segment are
        always a contiguous suffix ``first .. end - 1`` of its moves, followed by its final row ``end``.

        Returns:
            ``(first [S], end [S])`` int64 absolute positions: the first live sampleable row and the
            final-state row of each segment (``end - first`` >= 1 positions each), in time order.
        """
        if self._total == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty.copy()
        pos = np.arange(max(0, self._total - self.capacity), self._total, dtype=np.int64)
        slots = pos % self.capacity
        ok = self._sampleable[slots]
        pos, seg = pos[ok], self._segment[slots[ok]]
        if pos.size == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty.copy()
        # Rows of one segment are consecutive positions, so a segment starts where the id changes.
        starts = np.flatnonzero(np.concatenate(([True], seg[1:] != seg[:-1])))
        first = pos[starts]
        return first, self._end[first % self.capacity].copy()

    def read_rows(self, positions: np.ndarray) -> Dict[str, np.ndarray]:
        """Copies of the stored fields of live absolute ``positions`` [M].

        Returns:
            dict with ``obs`` [M, *obs_shape], ``action`` [M], ``reward`` [M], ``root_value`` [M]
            (for a final-state row: its bootstrap value, 0 when terminal), ``policy`` [M, A],
            ``legal_mask`` [M, A], ``to_play`` [M], ``end`` [M] (the row's final-state position).
        """
        slots = self._live_slots(positions, "read_rows", final_ok=True)
        return dict(obs=self._obs[slots], action=self._action[slots], reward=self._reward[slots],
                    root_value=self._value[slots], policy=self._policy[slots], legal_mask=self._legal[slots],
                    to_play=self._to_play[slots], end=self._end[slots])

    def write_targets(self, positions: np.ndarray, root_values: np.ndarray,
                      policies: Optional[np.ndarray] = None) -> None:
        """Overwrite the stored root values [M] (and policy targets [M, A]) of sampleable ``positions`` [M].

        Later samples build their n-step value targets and policy targets from the new numbers.
        Final-state rows (bootstrap values) are refused: they are not search results.
        """
        slots = self._live_slots(positions, "write_targets", final_ok=False)
        values = np.asarray(root_values, dtype=np.float32)
        if values.shape != slots.shape or not np.all(np.isfinite(values)):
            raise ValueError(f"write_targets: root_values must be {slots.shape} finite floats, got shape {values.shape}")
        if policies is not None:
            policies = np.asarray(policies, dtype=np.float32)
            if policies.shape != (slots.size, self.action_space_size):
                raise ValueError(f"write_targets: policies must have shape {(slots.size, self.action_space_size)}, "
                                 f"got {policies.shape}")
            self._policy[slots] = policies
        self._value[slots] = values

    def is_live_sampleable(self, positions: np.ndarray) -> np.ndarray:
        """bool [M]: which absolute ``positions`` [M] still hold a sampleable row (not evicted, not a final-state
        or padding row): the positions ``write_targets`` takes. Targets computed elsewhere for positions read
        earlier are written only where this holds."""
        idx = np.asarray(positions, dtype=np.int64).ravel()
        if self._obs is None:
            return np.zeros(idx.shape, dtype=bool)
        slots = idx % self.capacity
        return (idx >= 0) & (self._pos[slots] == idx) & self._sampleable[slots]

    def _live_slots(self, positions: np.ndarray, who: str, final_ok: bool) -> np.ndarray:
        if self._obs is None:
            raise ValueError(f"{who}: the buffer is empty; push_segments() first")
        idx = np.asarray(positions, dtype=np.int64).ravel()
        slots = idx % self.capacity
        ok = (idx >= 0) & (self._pos[slots] == idx)
        if not final_ok:
            ok &= self._sampleable[slots]
        if not ok.all():
            bad = int(idx[np.flatnonzero(~ok)[0]])
            kind = "live" if final_ok else "live sampleable (not a final-state row)"
            raise ValueError(f"{who}: position {bad} is not a {kind} row; take positions from live_segments()")
        return slots


def _check_priorities(indices: np.ndarray, priorities: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    idx = np.asarray(indices, dtype=np.int64).ravel()
    pr = np.asarray(priorities, dtype=np.float64).ravel()
    if idx.shape != pr.shape:
        raise ValueError(f"update_priorities: {idx.size} indices but {pr.size} priorities; pass one per index")
    if not np.all(np.isfinite(pr)) or np.any(pr < 0):
        raise ValueError(f"update_priorities: priorities must be finite and >= 0, got min {pr.min()}")
    return idx, pr


@BUFFER_REGISTRY.register("prioritized_game_buffer")
class PrioritizedReplayBuffer(ReplayBuffer):
    """Prioritized replay: P(i) = p_i^alpha / sum_j p_j^alpha, IS weight (N P(i))^-beta / max over the batch.

    New transitions get the largest priority seen so far. With ``use_priority=False`` it samples
    uniformly (through the same tree) and returns weights of 1.
    """

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.use_priority = True
        return cfg

    def __init__(self, cfg: Optional[Mapping] = None) -> None:
        super().__init__(cfg)
        self._tree = SumTree(self.capacity)
        self._max_priority = 1.0
        self._alpha = float(self.cfg.priority_prob_alpha) if self.cfg.use_priority else 0.0

    def state_dict(self) -> Dict[str, Any]:
        state = super().state_dict()
        state["max_priority"] = float(self._max_priority)
        state["tree"] = torch.from_numpy(self._tree._tree.copy())
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        super().load_state_dict(state)
        self._max_priority = float(state["max_priority"])
        self._tree._tree[:] = state["tree"].numpy()

    def _on_write(self, slots: np.ndarray, sampleable: np.ndarray) -> None:
        self._tree.update(slots, np.where(sampleable, self._max_priority**self._alpha, 0.0))

    def _sample_slots(self, batch_size: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        slots = self._tree.sample(batch_size, rng)
        if not self.cfg.use_priority:
            return slots, np.ones(batch_size, dtype=np.float32)
        prob = self._tree.get(slots) / self._tree.total
        w = (self._num_live * prob) ** (-float(self.cfg.priority_prob_beta))
        return slots, (w / w.max()).astype(np.float32)

    def update_priorities(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """Set the priorities of absolute positions ``indices`` (Batch.indices) [M] to ``priorities`` [M].

        Positions evicted since they were sampled are ignored.
        """
        idx, pr = _check_priorities(indices, priorities)
        pr = pr + float(self.cfg.priority_epsilon)
        slots = idx % self.capacity
        live = (self._pos[slots] == idx) & self._sampleable[slots] if self._obs is not None else idx < 0
        if not live.any():
            return
        self._max_priority = max(self._max_priority, float(pr[live].max()))
        self._tree.update(slots[live], pr[live] ** self._alpha)

    def priorities(self, indices: np.ndarray) -> np.ndarray:
        """Current sampling weights p^alpha of absolute positions ``indices`` [M] (0 if evicted)."""
        idx = np.asarray(indices, dtype=np.int64)
        slots = idx % self.capacity
        return np.where(self._pos[slots] == idx, self._tree.get(slots), 0.0)
