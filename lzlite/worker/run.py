"""What every training process shares: components from a config, the run's setup, checkpoints and evaluations.

The synchronous loop (``lzlite/entry/loop.py``) and the cluster's learner (``lzlite/cluster/learner.py``) are both
built on these, so a run's directory, checkpoints, ``--resume`` and evaluations are the same whichever trains.
"""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

import numpy as np
import torch

from lzlite.buffer.augment import SymmetryAugmenter
from lzlite.config import ConfigError, compile_config, save_config
from lzlite.distributed import ddp
from lzlite.envs.vector import make_vector_env
from lzlite.registry import (BUFFER_REGISTRY, COLLECTOR_REGISTRY, ENV_REGISTRY, EVALUATOR_REGISTRY, LEARNER_REGISTRY,
                             POLICY_REGISTRY)
from lzlite.telemetry.logger import RunLogger
from lzlite.worker.checkpoint import (CheckpointError, latest_checkpoint, load_checkpoint, load_policy_weights,
                                     remove_stale_temp_files, save_checkpoint)

__all__ = ["UNLIMITED", "RunSetup", "prepare_run", "build_components", "split_input", "stop_limit",
           "schedule_horizon", "local_batch", "headline", "save_run_state", "evaluate_run", "restore_run_state",
           "set_global_seed"]

# A stop limit at or above this is no limit: LightZero's entry functions default max_train_iter and
# max_env_step to int(1e10), and its scripts pass that value explicitly.
UNLIMITED = int(1e10)


def set_global_seed(seed: int) -> None:
    """Seed Python, NumPy's legacy global generator and torch (library code itself takes generators)."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def split_input(input_cfg: Any) -> Sequence[dict]:
    if not isinstance(input_cfg, (list, tuple)) or len(input_cfg) != 2:
        raise ConfigError("input_cfg must be [main_config, create_config] (LightZero's layout)")
    return input_cfg


def stop_limit(name: str, given: Optional[int], configured: Optional[int]) -> int:
    """The argument's limit, else main_config's, else UNLIMITED; None and values >= UNLIMITED set none.

    A limit below 1 would train nothing (LightZero's scripts never pass one): a ConfigError names it.
    """
    for where, value in (("the argument", given), (f"main_config.{name}", configured)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
            raise ConfigError(f"{name} ({where}) must be a positive number of steps or None (no limit), got {value!r}")
        if int(value) < UNLIMITED:
            return int(value)
    return UNLIMITED


def schedule_horizon(pcfg: Any, max_train_iter: int, max_env_step: int) -> int:
    """Learner steps the LR schedule spans: max_train_iter, else max_env_step x replay_ratio (limits >= UNLIMITED
    are none)."""
    if max_train_iter < UNLIMITED:
        return max_train_iter
    if max_env_step < UNLIMITED and pcfg.update_per_collect is None:
        return max(1, int(max_env_step * pcfg.replay_ratio))
    if pcfg.lr_schedule != "constant":
        raise ConfigError(f"policy.lr_schedule={pcfg.lr_schedule!r} needs a known number of learner steps: set "
                          f"max_train_iter, or max_env_step with update_per_collect=None (steps = env steps x "
                          f"replay_ratio)")
    return 10**7


def build_components(cfg: Any, model: Optional[torch.nn.Module] = None) -> Dict[str, Any]:
    """Policy, vector envs, collector, evaluator and buffer for a compiled config."""
    pcfg = cfg.policy
    env_type = cfg.create.env.type
    venv = make_vector_env(cfg.env, env_type, pcfg.collector_env_num, seed=cfg.seed)
    policy = POLICY_REGISTRY.get(cfg.create.policy.type)(pcfg, model=model, value_sign=venv.value_sign)
    fields = policy.step_fields()  # the extra per-step fields its loss reads: recorded, gathered, augmented
    rng = np.random.default_rng([cfg.seed, 1])
    collector_cls = COLLECTOR_REGISTRY.get(cfg.create.collector.type or policy.collector_type)
    collector = collector_cls(policy, venv, pcfg, rng)
    evaluator_cls = EVALUATOR_REGISTRY.get(cfg.create.evaluator.type or "bot_evaluator")
    evaluator = evaluator_cls(policy, lambda n: make_vector_env(cfg.env, env_type, n, seed=cfg.seed + 7919),
                              pcfg, seed=cfg.seed)
    buffer_type = (cfg.create.replay_buffer.type or policy.buffer_type
                   or ("prioritized_game_buffer" if pcfg.use_priority else "game_buffer"))
    buffer_cls = BUFFER_REGISTRY.get(buffer_type)
    bcfg = {k: pcfg[k] for k in buffer_cls.default_config() if k in pcfg}
    bcfg.update(value_sign=int(venv.value_sign), unroll_fields=list(fields))
    buffer = buffer_cls(bcfg)
    augment = None
    if pcfg.symmetry_augmentation:
        augment = SymmetryAugmenter.for_env(ENV_REGISTRY.get(env_type), venv.obs_shape, venv.num_actions, fields)
    return dict(policy=policy, venv=venv, collector=collector, evaluator=evaluator, buffer=buffer, rng=rng,
                augment=augment)


def local_batch(batch_size: int, world_size: int) -> int:
    """One rank's share of ``batch_size`` (a ConfigError unless the ranks split it evenly)."""
    if batch_size % world_size:
        raise ConfigError(f"policy.batch_size={batch_size} must be divisible by the world size {world_size}")
    return batch_size // world_size


def headline(stats: Dict[str, float]) -> Dict[str, float]:
    """The evaluation numbers the progress bar shows: win and loss rates against each bot as first and as second
    player (``alpha_beta_win_1st``), the mean return, the optimal-move rate."""
    keep = {}
    for k, v in stats.items():
        if k.endswith(("/win_as_first", "/loss_as_first", "/win_as_second", "/loss_as_second")):
            keep[k.replace("/", "_").replace("_as_first", "_1st").replace("_as_second", "_2nd")] = round(v, 3)
        elif k in ("mean_return", "optimal_move_rate"):
            keep[k] = round(v, 3)
    return keep


def save_run_state(ckpt_dir, policy, learner, collector, buffer, rng, env_steps, best, updates_left) -> None:
    """Write ``ckpt_dir/last.pt``: weights, optimizer and schedule, counters, generators and the replay buffer."""
    # updates_left: learner steps of the last collect not taken yet (a checkpoint inside a learner phase), so
    # --resume takes them before it collects again, as the run would have
    counters = dict(env_steps=env_steps, episodes=collector.episodes, train_iter=learner.train_iter,
                    updates_left=updates_left)
    if best["score"] is not None:
        counters["best_score"] = list(best["score"])
    state = dict(
        policy=policy.state_dict(),
        learner=learner.state_dict(),
        counters=counters,
        rng=dict(sample=rng.bit_generator.state, collect=collector.rng.bit_generator.state,
                 torch=torch.get_rng_state()),
        buffer=buffer.state_dict(),  # so --resume continues exactly, sampling included
    )
    save_checkpoint(os.path.join(ckpt_dir, "last.pt"), state)


def evaluate_run(evaluator, logger, ckpt_dir, policy, learner, env_steps, best) -> Dict[str, float]:
    """One evaluation, logged. Its weights, counters and stats go to ckpt/iteration_<N>.pt under keep_eval_ckpts,
    and to ckpt/best.pt when it scores at least as well as every earlier evaluation of the run (the evaluator's
    ``score``; LightZero's ckpt_best.pth.tar), the first one included."""
    stats = evaluator.eval()
    settle = getattr(evaluator, "settle", None)  # more games when a checkpoint is too close to call against best.pt
    if settle is not None and best["score"] is not None:
        stats = settle(stats, best["score"])
    logger.scalars("eval", stats, env_steps)
    state = dict(policy=policy.state_dict(), counters=dict(env_steps=env_steps, train_iter=learner.train_iter),
                 eval={k: float(v) for k, v in stats.items()})
    if policy.cfg.keep_eval_ckpts:
        save_checkpoint(os.path.join(ckpt_dir, f"iteration_{learner.train_iter}.pt"), state)
    score_fn = getattr(evaluator, "score", None)  # a registered evaluator without one keeps no best.pt
    if score_fn is not None:
        score = tuple(float(x) for x in score_fn(stats))
        if best["score"] is None or score >= tuple(best["score"]):  # equals: the later checkpoint has trained more
            save_checkpoint(os.path.join(ckpt_dir, "best.pt"), state)
            best["score"] = score
    return stats


def restore_run_state(state, policy, learner, collector, buffer, rng) -> None:
    """Load a ``save_run_state`` checkpoint into the components (CheckpointError when it is of another config)."""
    try:
        policy.load_state_dict(state["policy"])
        learner.load_state_dict(state["learner"])
        if "buffer" in state:
            buffer.load_state_dict(state["buffer"])
    except (KeyError, RuntimeError, ValueError) as e:
        raise CheckpointError(f"checkpoint does not match this config/model: {str(e)[:300]}") from None
    rng.bit_generator.state = state["rng"]["sample"]
    collector.rng.bit_generator.state = state["rng"]["collect"]
    torch.set_rng_state(state["rng"]["torch"])
    collector.episodes = int(state["counters"]["episodes"])


@dataclass
class RunSetup:
    """A prepared run: its compiled config, components, counters and logger (``prepare_run``)."""

    cfg: Any
    run_dir: str
    ckpt_dir: str
    rank: int
    world_size: int
    own_group: bool  # this process created the DDP process group (and tears it down)
    parts: Dict[str, Any]  # build_components' policy, venv, collector, evaluator, buffer, rng, augment
    learner: Any
    sample_rng: np.random.Generator
    env_steps: int
    updates_left: int  # learner steps still to take on the last collect's data
    best: Dict[str, Any]  # the best evaluation's score so far (its weights: ckpt/best.pt)
    logger: RunLogger
    bar_in_env_steps: bool  # the progress bar counts env steps (else learner steps)
    max_train_iter: int
    max_env_step: int
    resumed: bool


def prepare_run(input_cfg: Sequence[dict], seed: int = 0, model: Optional[torch.nn.Module] = None,
                model_path: Optional[str] = None, max_train_iter: Optional[int] = None,
                max_env_step: Optional[int] = None, run_dir: Optional[str] = None, resume: bool = False,
                device: Optional[str] = None, progress: bool = True, force: bool = False) -> RunSetup:
    """Compile the config, check the run dir, join DDP, seed, build the components and the learner, load
    ``model_path`` or the checkpoint to resume, and open the logger (the arguments are ``train``'s)."""
    main_config, create_config = split_input(input_cfg)
    cfg = compile_config(main_config, create_config, seed=seed)
    if device is not None:
        cfg.policy.device = device
    max_train_iter = stop_limit("max_train_iter", max_train_iter, cfg.max_train_iter)
    max_env_step = stop_limit("max_env_step", max_env_step, cfg.max_env_step)
    run_dir = run_dir or os.path.join("runs", cfg.exp_name)
    ckpt_dir = os.path.join(run_dir, "ckpt")
    if resume:
        latest_checkpoint(ckpt_dir)  # no checkpoint: refused before anything is written
    elif not force and os.path.isfile(os.path.join(ckpt_dir, "last.pt")):
        raise ConfigError(f"run dir '{run_dir}' already holds a run ({os.path.join(ckpt_dir, 'last.pt')}): continue it "
                          f"with --resume, start a new one with another --run-dir, or overwrite it with --force")
    ddp.check_launch(cfg.policy.batch_size)  # a bad launch fails here, before any work
    own_group = ddp.setup_ddp(cfg) if ddp.is_ddp_enabled() else False
    rank, world_size = ddp.get_rank(), ddp.get_world_size()
    if rank == 0:
        remove_stale_temp_files(ckpt_dir)  # a kill during a checkpoint write leaves one behind
        if not resume:  # a resumed run writes its config once the checkpoint has loaded
            save_config(cfg, os.path.join(run_dir, "config.py"))
    cfg.seed = cfg.seed + rank  # each rank plays its own games (envs, search noise); rank 0 keeps the seed
    set_global_seed(cfg.seed)
    if cfg.policy.num_threads > 0:
        torch.set_num_threads(cfg.policy.num_threads)

    parts = build_components(cfg, model)
    policy, collector, buffer = parts["policy"], parts["collector"], parts["buffer"]
    learner_cls = LEARNER_REGISTRY.get(cfg.create.learner.type or "base_learner")
    learner = learner_cls(policy, cfg.policy, max_train_iter=schedule_horizon(cfg.policy, max_train_iter, max_env_step))
    if world_size > 1:
        # the whole loss is one DDP forward (MuZero unrolls call model methods, not forward); the
        # policy keeps the raw model for search and checkpoints. Wrapping broadcasts rank 0's weights.
        learner.compute_loss = ddp.wrap_loss(policy.model, policy.compute_loss)
        policy.update_target()
    sample_rng = np.random.default_rng([cfg.seed, rank, 2])
    env_steps = 0
    updates_left = 0
    best: Dict[str, Any] = dict(score=None)
    if model_path:
        load_policy_weights(policy, model_path, f"the config of experiment '{cfg.exp_name}'")
    if resume:
        state = load_checkpoint(latest_checkpoint(ckpt_dir))
        restore_run_state(state, policy, learner, collector, buffer, sample_rng)
        if rank == 0:
            save_config(cfg, os.path.join(run_dir, "config.py"))
        env_steps = int(state["counters"]["env_steps"])
        updates_left = int(state["counters"].get("updates_left", 0))
        best["score"] = state["counters"].get("best_score")
        if rank > 0:  # the checkpoint holds rank 0's generators: give this rank its own streams again
            sample_rng = np.random.default_rng([cfg.seed, rank, 2, learner.train_iter])
            collector.rng = np.random.default_rng([cfg.seed, 1, learner.train_iter])
            set_global_seed(cfg.seed + 7919 * learner.train_iter)

    bar_in_env_steps = max_env_step < UNLIMITED  # else the bar counts learner steps
    logger = RunLogger(run_dir, enabled=(rank == 0), progress=progress,
                       total=max_env_step if bar_in_env_steps else max_train_iter,
                       unit="env steps" if bar_in_env_steps else "iters", cfg=cfg)
    logger.update(env_steps if bar_in_env_steps else learner.train_iter)
    return RunSetup(cfg=cfg, run_dir=run_dir, ckpt_dir=ckpt_dir, rank=rank, world_size=world_size, own_group=own_group,
                    parts=parts, learner=learner, sample_rng=sample_rng, env_steps=env_steps,
                    updates_left=updates_left, best=best, logger=logger, bar_in_env_steps=bar_in_env_steps,
                    max_train_iter=max_train_iter, max_env_step=max_env_step, resumed=resume)
