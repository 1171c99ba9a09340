"""`eval_muzero` / `eval_alphazero`: evaluate a trained agent (LightZero-compatible signatures).

Both load a checkpoint written by training (or take a model), then run the config's evaluator: games
against the configured zoo bots as first and second player (board games), or episodes and their mean
return (single-player envs).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import torch

from lzlite.config import compile_config
from lzlite.entry.loop import _split_input, build_components
from lzlite.worker.checkpoint import load_checkpoint

__all__ = ["eval_muzero", "eval_alphazero", "evaluate"]


def evaluate(
    input_cfg: Sequence[dict],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    model_path: Optional[str] = None,
    num_episodes: Optional[int] = None,
    **_: Any,
) -> Dict[str, float]:
    """Evaluate the experiment's policy; returns the evaluator's statistics.

    Args:
        input_cfg: ``[main_config, create_config]`` (e.g. the run's resolved ``config.py``).
        seed: seed of the evaluation (bots' tie-breaks, env resets).
        model: a model to evaluate instead of building one from the config.
        model_path: a checkpoint (``runs/<exp>/ckpt/last.pt``) whose weights are loaded.
        num_episodes: overrides ``policy.eval_episodes``.
    """
    main_config, create_config = _split_input(input_cfg)
    cfg = compile_config(main_config, create_config, seed=seed)
    if num_episodes is not None:
        cfg.policy.eval_episodes = int(num_episodes)
    parts = build_components(cfg, model)
    if model_path:
        parts["policy"].load_state_dict(load_checkpoint(model_path)["policy"])
    return parts["evaluator"].eval()


def eval_muzero(input_cfg: Sequence[dict], seed: int = 0, model: Optional[torch.nn.Module] = None,
                model_path: Optional[str] = None, num_episodes_each_seed: Optional[int] = None,
                **kwargs: Any) -> Dict[str, float]:
    """Evaluate a MuZero-family agent (muzero, gumbel_muzero, rezero, unizero); see ``evaluate``."""
    return evaluate(input_cfg, seed, model, model_path, num_episodes_each_seed, **kwargs)


def eval_alphazero(input_cfg: Sequence[dict], seed: int = 0, model: Optional[torch.nn.Module] = None,
                   model_path: Optional[str] = None, num_episodes_each_seed: Optional[int] = None,
                   **kwargs: Any) -> Dict[str, float]:
    """Evaluate an AlphaZero agent; see ``evaluate``."""
    return evaluate(input_cfg, seed, model, model_path, num_episodes_each_seed, **kwargs)
