"""Replay: GameSegment (collector output), uniform / prioritized buffers and vectorised targets."""
from lzlite.buffer.game_segment import GameSegment, SegmentArrays, StepField
from lzlite.buffer.replay import Batch, PrioritizedReplayBuffer, ReanalyzeFn, ReplayBuffer
from lzlite.buffer.sum_tree import SumTree
from lzlite.buffer.targets import bootstrap_positions, gather_unrolled, nstep_value_targets, unroll_positions

__all__ = [
    "GameSegment",
    "SegmentArrays",
    "StepField",
    "Batch",
    "ReplayBuffer",
    "PrioritizedReplayBuffer",
    "ReanalyzeFn",
    "SumTree",
    "nstep_value_targets",
    "unroll_positions",
    "bootstrap_positions",
    "gather_unrolled",
]
