"""Replay: GameSegment (collector output), uniform / prioritized / segment buffers and vectorised targets."""
from lzlite.buffer.game_segment import GameSegment, SegmentArrays, StepField
from lzlite.buffer.replay import Batch, PrioritizedReplayBuffer, ReanalyzeFn, ReplayBuffer
from lzlite.buffer.sum_tree import SumTree
from lzlite.buffer.targets import bootstrap_positions, gather_unrolled, nstep_value_targets, unroll_positions
from lzlite.buffer.unizero_buffer import UniZeroBuffer

__all__ = [
    "GameSegment",
    "SegmentArrays",
    "StepField",
    "Batch",
    "ReplayBuffer",
    "PrioritizedReplayBuffer",
    "UniZeroBuffer",
    "ReanalyzeFn",
    "SumTree",
    "nstep_value_targets",
    "unroll_positions",
    "bootstrap_positions",
    "gather_unrolled",
]
