"""Small helpers shared by every entry function: update-per-collect, seeding, run directories.

The DDP helpers that LightZero's ``lzero.entry.utils`` exposes (``is_ddp_enabled``, ``ddp_synchronize``,
``ddp_all_reduce_sum``) are importable from here too; they live in ``lzlite.distributed.ddp``. One difference:
lzlite's ``is_ddp_enabled`` reads torchrun's WORLD_SIZE (true before the process group exists), LightZero's asks
whether torch.distributed is initialised; the collectives are no-ops until it is, in both.
"""
from __future__ import annotations

import math
import os
from typing import Any, Mapping

import numpy as np
import torch

from lzlite.distributed.ddp import ddp_all_reduce_mean, ddp_all_reduce_sum, ddp_synchronize, is_ddp_enabled
from lzlite.worker.run import set_global_seed  # (it lives with the run setup that seeds; re-exported here)

__all__ = ["calculate_update_per_collect", "set_global_seed", "make_run_dir", "debug_tracebacks", "is_ddp_enabled",
           "ddp_synchronize", "ddp_all_reduce_sum", "ddp_all_reduce_mean"]

#: environment variable: set to 1, the command lines re-raise a user error with its traceback instead of one line
DEBUG_ENV = "LZLITE_DEBUG"


def calculate_update_per_collect(cfg: Mapping[str, Any], new_data: Any, world_size: int = 1) -> int:
    """Number of learner steps after one collect.

    The configured ``policy.update_per_collect`` when it is set (not None); otherwise the number of
    transitions just collected, summed over all ranks, times ``policy.replay_ratio`` (at least 1).
    Under DDP every rank passes its own count; the sum is all-reduced so that every rank takes the same
    number of steps (ranks that disagree would hang in the gradient all-reduce).

    Args:
        cfg: the compiled config (``cfg.policy`` is read) or the policy section itself.
        new_data: the collected GameSegments (their lengths are summed), LightZero's collector output
            ``[game_segments, meta_list]`` (the segments' lengths are summed), or a transition count.
        world_size: number of DDP ranks; > 1 triggers the all-reduce.
    """
    policy_cfg = cfg["policy"] if "policy" in cfg else cfg
    fixed = policy_cfg.get("update_per_collect")
    if fixed is not None:
        if int(fixed) < 1:
            raise ValueError(f"policy.update_per_collect must be >= 1 or None, got {fixed}")
        return int(fixed)
    if isinstance(new_data, (int, np.integer)):
        count = int(new_data)
    else:
        segments = new_data[0] if _is_lightzero_collect(new_data) else new_data
        count = int(sum(len(seg) for seg in segments))
    if world_size > 1:
        count = int(ddp_all_reduce_sum(count))
    ratio = float(policy_cfg.get("replay_ratio", 0.25))
    return max(1, int(math.ceil(count * ratio)))


def _is_lightzero_collect(new_data: Any) -> bool:
    """True for LightZero's ``[game_segments, meta_list]``: two sequences, the second of per-segment meta dicts."""
    return (isinstance(new_data, (list, tuple)) and len(new_data) == 2
            and all(isinstance(part, (list, tuple)) for part in new_data)
            and all(isinstance(meta, Mapping) for meta in new_data[1]))


def debug_tracebacks() -> bool:
    """Whether ``LZLITE_DEBUG`` asks the command lines for tracebacks (any value but '', '0', 'false', 'no')."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def make_run_dir(root: str, exp_name: str) -> str:
    """Create and return ``root/exp_name``."""
    path = os.path.join(root, exp_name)
    os.makedirs(path, exist_ok=True)
    return path
