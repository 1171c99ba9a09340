"""UniZero replay ('unizero_buffer'): segment samples, scheduled reanalyze, age-aware sampling.

Storage and targets are the flat ring of :class:`lzlite.buffer.replay.ReplayBuffer` (n-step values,
rewards, policies and masks come from ``targets.py`` there). This buffer adds three things:

1. **Segment samples.** ``sample`` returns a :class:`SegmentBatch`: the Batch targets plus every
   observation of the unroll, ``obs_seq`` [Bt, K+1, *obs_shape], and ``mask_state`` [Bt, K+1],
   True where step k is a real state (t + k <= episode end, the final state included: its value
   target is 0 when terminal, or the bootstrap of a cut segment, and the move into it has a real
   reward and next observation). The transformer consumes the whole segment in one causal pass.

2. **Padded segments.** A :class:`PaddedGameSegment` (from the segment collector) carries, after its
   ``L`` own moves, up to ``P`` padding moves copied from the next piece of the same episode. Padding
   rows are stored as ordinary rows (rewards, root values, policies, observations) but are never
   sampled as starts, so unrolls and n-step targets that start near a cut read real data instead of
   stopping at the cut. The final row after the padding holds the bootstrap value.

3. **Reanalyze and age weighting.** ``reanalyze_segments(fn, num_segments)`` recomputes the stored
   root values and policy targets of the ``num_segments`` live segments whose targets are stalest
   (fewest refreshes since they were written; oldest first among equals) with ``fn`` -- the policy's
   search with the target network -- and counts one reanalyze for each of them. Sampling then
   DOWN-WEIGHTS often-reanalyzed segments:

       P(start row t) proportional to  reanalyze_weight_decay ** c_s(t)

   where c_s is the number of reanalyzes of t's segment. A segment reanalyzed many times has
   survived many rounds: its targets are fresh, but its actions (and so its rewards and n-step
   value targets) come from an old policy, so it should be replayed less than fresh data. The bias
   is intended, so the importance weights stay 1. ``reanalyze_weight_decay = 1`` samples uniformly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
from easydict import EasyDict

from lzlite.buffer.game_segment import GameSegment, SegmentArrays
from lzlite.buffer.replay import Batch, ReplayBuffer
from lzlite.buffer.sum_tree import SumTree
from lzlite.config import Range
from lzlite.registry import BUFFER_REGISTRY

__all__ = ["PaddedGameSegment", "SegmentBatch", "UniZeroBuffer", "SegmentTargetFn"]

# fn(obs [M, *obs_shape], legal_mask bool [M, A]) -> (root values [M], policy targets [M, A])
SegmentTargetFn = Callable[[np.ndarray, np.ndarray], Tuple[np.ndarray, np.ndarray]]


class PaddedGameSegment(GameSegment):
    """A fixed-length GameSegment of ``game_segment_length`` own moves plus up to ``num_padding`` more.

    ``len(seg)`` counts the own moves only (what a training loop counts as new env steps); the
    padding moves are the first moves of the episode's next segment, stored again here so that
    unrolls and n-step targets near the cut see real data.

    Args:
        action_space_size: A.
        game_segment_length: L >= 1, own moves; ``own_full`` turns True after L appends.
        num_padding: P >= 0, padding moves appended after the own moves (``is_full`` after L + P).
    """

    def __init__(self, action_space_size: int, game_segment_length: int, num_padding: int) -> None:
        if not isinstance(game_segment_length, (int, np.integer)) or game_segment_length < 1:
            raise ValueError(f"game_segment_length must be a positive int, got {game_segment_length!r}")
        if not isinstance(num_padding, (int, np.integer)) or num_padding < 0:
            raise ValueError(f"num_padding must be an int >= 0, got {num_padding!r}")
        super().__init__(action_space_size, None)  # the base length check would refuse padding appends
        self.own_length = int(game_segment_length)
        self.num_padding = int(num_padding)

    def __len__(self) -> int:
        return min(len(self._action), self.own_length)

    @property
    def num_moves(self) -> int:
        """Own plus padding moves appended so far."""
        return len(self._action)

    @property
    def own_full(self) -> bool:
        """True once the L own moves are in (later appends are padding)."""
        return len(self._action) >= self.own_length

    @property
    def is_full(self) -> bool:
        """True once all P padding moves are in too: no more appends, only the bootstrap value is missing."""
        return len(self._action) >= self.own_length + self.num_padding


@dataclass
class SegmentBatch(Batch):
    """A :class:`Batch` plus the whole observed segment (K = num_unroll_steps).

    ``obs_seq`` repeats the final observation past the episode end (masked by ``mask_state``).
    """

    obs_seq: Optional[np.ndarray] = None  # [Bt, K+1, *obs_shape] observations at t..t+K
    mask_state: Optional[np.ndarray] = None  # [Bt, K+1] bool, t+k <= episode end (real state)
    reanalyze_count: Optional[np.ndarray] = None  # [Bt] int64 reanalyzes of each start's segment


@BUFFER_REGISTRY.register("unizero_buffer")
class UniZeroBuffer(ReplayBuffer):
    """Segment replay for UniZero; see the module docstring.

    Args:
        cfg: overrides of ``default_config()`` (unknown keys are errors).
    """

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.reanalyze_weight_decay = 0.5  # sampling weight of a segment = decay ** (its reanalyze count); 1: uniform
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(super().config_ranges(), reanalyze_weight_decay=Range(0, 1, low_open=True))

    def __init__(self, cfg: Optional[Mapping] = None) -> None:
        super().__init__(cfg)
        if self.cfg.use_priority:
            raise ValueError("unizero_buffer samples by reanalyze age, not by priority; set use_priority=False")
        if not 0.0 < float(self.cfg.reanalyze_weight_decay) <= 1.0:
            raise ValueError(f"reanalyze_weight_decay must be in (0, 1], got {self.cfg.reanalyze_weight_decay}")
        self._tree = SumTree(self.capacity)
        self._rounds = 0  # reanalyze rounds so far: the "version" of freshly computed targets
        self._num_own: Dict[int, int] = {}  # id(frozen segment) -> own (sampleable) moves, during a push

    # ------------------------------------------------------------------ storage
    def _allocate(self, seg: SegmentArrays) -> None:
        super()._allocate(seg)
        C = self.capacity
        self._count = np.zeros(C, dtype=np.int64)  # reanalyzes of the row's segment
        self._version = np.zeros(C, dtype=np.int64)  # reanalyze round when the row's targets were computed
        self._final_done = np.zeros(C, dtype=np.bool_)  # final rows: the episode ended there (value stays 0)

    def push_segments(self, segments: Sequence[GameSegment]) -> None:
        """Append closed segments (plain or padded); padding rows are stored but never sampled as starts."""
        if isinstance(segments, GameSegment):
            raise TypeError("push_segments takes a list of GameSegment; wrap a single one: push_segments([seg])")
        for s in segments:
            if isinstance(s, GameSegment) and s.closed:
                self._num_own[id(s.freeze())] = len(s)
        try:
            super().push_segments(segments)
        finally:
            self._num_own.clear()

    def _write(self, segs: Sequence[SegmentArrays]) -> None:
        first = self._total
        super()._write(segs)
        lens = np.array([len(f) for f in segs], dtype=np.int64)
        seg_start = first + np.concatenate(([0], np.cumsum(lens + 1)[:-1]))
        slots = (first + np.arange(int(lens.sum()) + len(segs))) % self.capacity
        self._count[slots] = 0
        self._version[slots] = self._rounds
        self._final_done[slots] = False
        for f, s0, n_rows in zip(segs, seg_start, lens):
            own = self._num_own.get(id(f), int(n_rows))
            if own < n_rows:  # padding rows: real moves of the next segment, never a start here
                pad = (s0 + own + np.arange(n_rows - own)) % self.capacity
                self._num_live -= int(np.count_nonzero(self._sampleable[pad]))
                self._sampleable[pad] = False
            self._final_done[(s0 + n_rows) % self.capacity] = f.done
        self._refresh_weights(slots)

    def _refresh_weights(self, slots: np.ndarray) -> None:
        decay = float(self.cfg.reanalyze_weight_decay)
        w = np.where(self._sampleable[slots], decay ** self._count[slots].astype(np.float64), 0.0)
        self._tree.update(slots, w)

    _STATE_SCALARS = ReplayBuffer._STATE_SCALARS + ("_rounds",)

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        super().load_state_dict(state)
        self._tree = SumTree(self.capacity)
        if self._obs is not None:
            self._refresh_weights(np.arange(self.capacity))

    # ------------------------------------------------------------------ sampling
    def _sample_slots(self, batch_size: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """Starts drawn with probability ~ reanalyze_weight_decay ** count; IS weights 1 (intended bias)."""
        return self._tree.sample(batch_size, rng), np.ones(batch_size, dtype=np.float32)

    def sample(self, batch_size: Optional[int] = None, rng: Optional[np.random.Generator] = None,
               reanalyze_fn: Optional[Any] = None, bootstrap_fn: Optional[Any] = None) -> SegmentBatch:
        """Sample Bt segments of K + 1 states with their targets (see ``ReplayBuffer.sample``).

        Returns:
            A :class:`SegmentBatch`: the Batch fields plus ``obs_seq`` [Bt, K+1, *obs_shape],
            ``mask_state`` [Bt, K+1] and ``reanalyze_count`` [Bt].
        """
        batch = super().sample(batch_size, rng, reanalyze_fn, bootstrap_fn)
        K = int(self.cfg.num_unroll_steps)
        start = batch.indices
        end = self._end[start % self.capacity]
        raw = start[:, None] + np.arange(K + 1)
        pos = np.minimum(raw, end[:, None])
        fields = {k: getattr(batch, k) for k in Batch.__dataclass_fields__}
        return SegmentBatch(**fields, obs_seq=self._obs[pos % self.capacity], mask_state=raw <= end[:, None],
                            reanalyze_count=self._count[start % self.capacity].copy())

    # ------------------------------------------------------------------ reanalyze
    def segment_reanalyze_counts(self) -> np.ndarray:
        """int64 [S] reanalyze count of each live segment, oldest segment first."""
        first, _ = self.live_segments()
        return self._count[first % self.capacity].copy()

    def reanalyze_segments(self, fn: SegmentTargetFn, num_segments: int) -> Dict[str, float]:
        """Recompute the targets of the ``num_segments`` stalest live segments with ``fn``.

        Every move row of a chosen segment (own and padding moves, from its first live row) gets a new
        root value and policy target; the final row of a CUT segment gets a new bootstrap value
        (terminal final rows keep 0). All rows of the chosen segments count one more reanalyze.

        Args:
            fn: ``fn(obs [M, *obs_shape], legal_mask [M, A]) -> (values [M], policies [M, A])``, one
                call for all M positions (the caller batches its searches). Final rows are passed
                an all-True legal mask (only their value is used).
            num_segments: how many segments to refresh (all live ones when larger).

        Returns:
            stats: 'segments', 'positions' (rows searched), 'mean_abs_value_change' (move rows).
        """
        if int(num_segments) < 1:
            raise ValueError(f"num_segments must be >= 1, got {num_segments}")
        first, end = self.live_segments()
        if first.size == 0:
            return dict(segments=0.0, positions=0.0, mean_abs_value_change=0.0)
        C = self.capacity
        # Stalest first: lowest target version, then oldest (live_segments is in time order).
        order = np.lexsort((np.arange(first.size), self._version[first % C]))[: int(num_segments)]
        first, end = first[order], end[order]
        lens = end - first
        moves = np.repeat(first, lens) + (np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens))
        cut = end[~self._final_done[end % C]]
        positions = np.concatenate([moves, cut])
        slots = positions % C
        legal = self._legal[slots].copy()
        legal[moves.size:] = True
        values, policies = fn(self._obs[slots], legal)
        M, A = positions.size, self.action_space_size
        values = np.asarray(values, dtype=np.float32)
        policies = np.asarray(policies, dtype=np.float32)
        if values.shape != (M,) or policies.shape != (M, A):
            raise ValueError(f"reanalyze fn must return values ({M},) and policies ({M}, {A}), got "
                             f"{values.shape} and {policies.shape}")
        if not (np.all(np.isfinite(values)) and np.all(np.isfinite(policies))):
            raise ValueError("reanalyze fn returned non-finite values or policies")
        n = moves.size
        change = float(np.abs(self._value[slots[:n]] - values[:n]).mean()) if n else 0.0
        self._value[slots] = values
        self._policy[slots[:n]] = policies[:n]
        self._rounds += 1
        seg_rows = np.concatenate([moves, end]) % C  # the final rows share the segment's count
        self._count[seg_rows] += 1
        self._version[seg_rows] = self._rounds
        self._refresh_weights(seg_rows)
        return dict(segments=float(first.size), positions=float(M), mean_abs_value_change=change)
