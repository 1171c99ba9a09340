"""`train_unizero_segment`: UniZero trained on fixed-length segments (LightZero-compatible signature)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from lzlite.entry.loop import train

__all__ = ["train_unizero_segment"]


def train_unizero_segment(
    input_cfg: Sequence[dict],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    model_path: Optional[str] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    **kwargs: Any,
) -> Any:
    """Train UniZero (policy type 'unizero' or a subclass); see ``lzlite.entry.loop.train`` for the arguments.

    The loop is the shared one; the policy names its components: the 'segment_collector' (fixed-length
    padded segments from games that keep running across collects) and the 'unizero_buffer' (segment
    samples, scheduled reanalyze in ``policy.after_collect``, age-weighted sampling). Returns the policy
    (``policy.last_reanalyze`` holds the stats of the latest scheduled reanalyze).
    """
    return train(input_cfg, seed=seed, model=model, model_path=model_path, max_train_iter=max_train_iter,
                 max_env_step=max_env_step, **kwargs)
