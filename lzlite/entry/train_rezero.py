"""`train_rezero`: ReZero, MuZero with scheduled whole-buffer backward-view reanalyze (LightZero-compatible signature)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from lzlite.entry.loop import train

__all__ = ["train_rezero"]


def train_rezero(
    input_cfg: Sequence[dict],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    model_path: Optional[str] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    **kwargs: Any,
) -> Any:
    """Train ReZero (policy type 'rezero' or a subclass); see ``lzlite.entry.loop.train`` for the arguments.

    The training loop is MuZero's; the policy's ``after_collect`` hook reanalyzes the whole buffer on
    its schedule (``policy.reanalyze_interval``). Returns the policy (``policy.last_reanalyze`` holds
    the stats of the latest reanalyze).
    """
    return train(input_cfg, seed=seed, model=model, model_path=model_path, max_train_iter=max_train_iter,
                 max_env_step=max_env_step, **kwargs)
