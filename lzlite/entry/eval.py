"""`eval_muzero` / `eval_alphazero`: evaluate a trained agent (LightZero-compatible signatures).

Both load a checkpoint written by training (or take a model), then run the config's evaluator: games
against the configured zoo bots as first and second player (board games), or episodes and their mean
return (single-player envs). From the shell:

    python -m lzlite.entry.eval --cfg runs/connect4_alphazero/config.py \
        --ckpt runs/connect4_alphazero/ckpt/last.pt --episodes 200 --simulations 400 --bots alpha_beta
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Optional, Sequence

import torch

from lzlite.config import ConfigError, compile_config, load_config_file
from lzlite.worker.run import build_components, split_input
from lzlite.entry.utils import debug_tracebacks
from lzlite.registry import RegistryError
from lzlite.worker.checkpoint import CheckpointError, load_policy_weights

__all__ = ["eval_muzero", "eval_alphazero", "evaluate"]


def evaluate(
    input_cfg: Sequence[dict],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    model_path: Optional[str] = None,
    num_episodes: Optional[int] = None,
    *,
    num_simulations: Optional[int] = None,
    bots: Optional[Sequence[str]] = None,
    bot_depth: Optional[int] = None,
    device: Optional[str] = None,
    **_: Any,
) -> Dict[str, float]:
    """Evaluate the experiment's policy; returns the evaluator's statistics.

    Args:
        input_cfg: ``[main_config, create_config]`` (e.g. the run's resolved ``config.py``).
        seed: seed of the evaluation (bots' tie-breaks, env resets).
        model: a model to evaluate instead of building one from the config.
        model_path: a checkpoint (``runs/<exp>/ckpt/last.pt``) whose weights are loaded.
        num_episodes: overrides ``policy.eval_episodes``.
        num_simulations: overrides the evaluation search's simulations (``policy.eval_num_simulations``).
        bots: overrides ``policy.eval_bots`` (zoo bot kinds, e.g. ``['alpha_beta']``).
        bot_depth: overrides ``policy.eval_bot_depth`` (the alpha-beta bot's depth).
        device: overrides ``policy.device`` (evaluate a GPU run's checkpoint on a CPU with ``'cpu'``).
    """
    main_config, create_config = split_input(input_cfg)
    cfg = compile_config(main_config, create_config, seed=seed)
    if num_episodes is not None:
        cfg.policy.eval_episodes = int(num_episodes)
    if num_simulations is not None:
        cfg.policy.eval_num_simulations = int(num_simulations)
    if bots is not None:
        cfg.policy.eval_bots = list(bots)
    if bot_depth is not None:
        cfg.policy.eval_bot_depth = int(bot_depth)
    if device is not None:
        cfg.policy.device = device
    parts = build_components(cfg, model)
    if model_path:
        load_policy_weights(parts["policy"], model_path, f"the config of experiment '{cfg.exp_name}'")
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


# ------------------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lzlite.entry.eval",
        description="Evaluate a trained lzlite agent: games against zoo bots (half as each side), or the mean "
                    "return of single-player episodes.")
    p.add_argument("--cfg", required=True, metavar="FILE",
                   help="the experiment's config file (e.g. runs/<exp_name>/config.py written by training)")
    p.add_argument("--ckpt", required=True, metavar="CKPT", help="checkpoint, e.g. runs/<exp_name>/ckpt/last.pt")
    p.add_argument("--episodes", type=int, default=None, metavar="N",
                   help="games per bot, half as each side (default: the config's eval_episodes)")
    p.add_argument("--simulations", type=int, default=None, metavar="N",
                   help="search simulations per agent move (default: eval_num_simulations, else num_simulations)")
    p.add_argument("--bots", nargs="+", default=None, metavar="KIND",
                   help="bots to play: random, rule, alpha_beta, perfect (default: the config's eval_bots)")
    p.add_argument("--bot-depth", type=int, default=None, metavar="D", help="alpha-beta depth (default: the config's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bots' tie-breaks and the search")
    p.add_argument("--device", default=None, help="torch device, e.g. cpu or cuda:0 (default: the config's)")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    """Run the eval CLI; prints one line per statistic. Returns 0, or 2 for a bad config/checkpoint/argument."""
    args = build_parser().parse_args(argv)
    try:
        for name, value in (("--episodes", args.episodes), ("--simulations", args.simulations)):
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be at least 1, got {value}")
        stats = evaluate(load_config_file(args.cfg), seed=args.seed, model_path=args.ckpt,
                         num_episodes=args.episodes, num_simulations=args.simulations, bots=args.bots,
                         bot_depth=args.bot_depth, device=args.device)
    except (ConfigError, RegistryError, CheckpointError, ValueError) as e:
        if debug_tracebacks():  # LZLITE_DEBUG=1: the traceback instead of one line
            raise
        print(f"lzlite.eval: error: {e}", file=sys.stderr)
        return 2
    width = max(len(k) for k in stats)
    for k, v in stats.items():
        print(f"{k:<{width}}  {v:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
