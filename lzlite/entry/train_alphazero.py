"""`train_alphazero`: AlphaZero on a zoo board game (LightZero-compatible signature)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from lzlite.entry.loop import train

__all__ = ["train_alphazero"]


def train_alphazero(
    input_cfg: Sequence[dict],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    model_path: Optional[str] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    **kwargs: Any,
) -> Any:
    """Train AlphaZero; see ``lzlite.entry.loop.train`` for the arguments. Returns the policy."""
    return train(input_cfg, seed=seed, model=model, model_path=model_path, max_train_iter=max_train_iter,
                 max_env_step=max_env_step, **kwargs)
