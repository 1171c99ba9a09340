"""THE training loop every entry function wires: collect -> push -> learn -> evaluate -> checkpoint.

Entry functions (train_muzero, train_alphazero, ...) are thin: they name the defaults they expect and
call ``train``. Components come from the registries by name, so a user's registered policy runs
through this same loop unchanged.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Any, Dict, Optional, Sequence

import numpy as np
import torch

from lzlite.buffer.augment import SymmetryAugmenter
from lzlite.config import ConfigError, compile_config, save_config
from lzlite.entry.utils import calculate_update_per_collect, set_global_seed
from lzlite.envs.vector import make_vector_env
from lzlite.registry import (BUFFER_REGISTRY, COLLECTOR_REGISTRY, ENV_REGISTRY, EVALUATOR_REGISTRY, LEARNER_REGISTRY,
                             POLICY_REGISTRY)
from lzlite.distributed import ddp
from lzlite.entry.stop import StopSignal, TrainingStopped
from lzlite.telemetry.logger import RunLogger
from lzlite.worker.checkpoint import (CheckpointError, latest_checkpoint, load_checkpoint, load_policy_weights,
                                     remove_stale_temp_files, save_checkpoint)

__all__ = ["train", "build_components", "UNLIMITED"]

# A stop limit at or above this is no limit: LightZero's entry functions default max_train_iter and
# max_env_step to int(1e10), and its scripts pass that value explicitly.
UNLIMITED = int(1e10)


def _split_input(input_cfg: Any) -> Sequence[dict]:
    if not isinstance(input_cfg, (list, tuple)) or len(input_cfg) != 2:
        raise ConfigError("input_cfg must be [main_config, create_config] (LightZero's layout)")
    return input_cfg


def _stop_limit(name: str, given: Optional[int], configured: Optional[int]) -> int:
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


def _schedule_horizon(pcfg: Any, max_train_iter: int, max_env_step: int) -> int:
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


def train(
    input_cfg: Sequence[dict],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    model_path: Optional[str] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    run_dir: Optional[str] = None,
    resume: bool = False,
    device: Optional[str] = None,
    progress: bool = True,
    force: bool = False,
) -> Any:
    """Train the experiment ``input_cfg`` describes and return the trained policy.

    Args:
        input_cfg: ``[main_config, create_config]``.
        seed: random seed (overrides main_config.seed).
        model: an already-built network to train instead of the config's.
        model_path: a checkpoint whose weights initialise the model.
        max_train_iter / max_env_step: stop limits (default: main_config's, else unlimited). None and values
            >= ``UNLIMITED`` (LightZero's ``int(1e10)``) mean the same: main_config's limit, else none.
        run_dir: where the resolved config, TensorBoard logs and checkpoints go (runs/<exp_name>).
        resume: continue from ``run_dir/ckpt/last.pt`` (weights, optimizer, schedule, counters, RNG). A refused
            resume (no checkpoint, or one of another config) changes no file.
        force: start afresh in a run dir that already holds a run's checkpoints, overwriting them (without it,
            that is a ConfigError: nothing trained is overwritten by accident).
        device: torch device overriding the config.
        progress: show a tqdm progress bar (it moves during a collect too).

    Raises:
        TrainingStopped: after SIGINT or SIGTERM (a KeyboardInterrupt). The run ends within a move of a collect
            or a learner step; a collect cut short is dropped whole, so ``ckpt/last.pt`` holds the state before
            it (or the state after the last learner step), and ``resume=True`` continues as if no stop had been.
            The final evaluation is skipped. The signal handlers in place before are restored either way.
    """
    main_config, create_config = _split_input(input_cfg)
    cfg = compile_config(main_config, create_config, seed=seed)
    if device is not None:
        cfg.policy.device = device
    max_train_iter = _stop_limit("max_train_iter", max_train_iter, cfg.max_train_iter)
    max_env_step = _stop_limit("max_env_step", max_env_step, cfg.max_env_step)
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
    policy, collector, evaluator, buffer = parts["policy"], parts["collector"], parts["evaluator"], parts["buffer"]
    augment = parts["augment"]
    learner_cls = LEARNER_REGISTRY.get(cfg.create.learner.type or "base_learner")
    learner = learner_cls(policy, cfg.policy, max_train_iter=_schedule_horizon(cfg.policy, max_train_iter, max_env_step))
    if world_size > 1:
        # the whole loss is one DDP forward (MuZero unrolls call model methods, not forward); the
        # policy keeps the raw model for search and checkpoints. Wrapping broadcasts rank 0's weights.
        learner.compute_loss = ddp.wrap_loss(policy.model, policy.compute_loss)
        policy.update_target()
    sample_rng = np.random.default_rng([cfg.seed, rank, 2])
    env_steps = 0
    updates_left = 0  # learner steps still to take on the last collect's data
    best: Dict[str, Any] = dict(score=None)  # the best evaluation's score so far (its weights: ckpt/best.pt)
    if model_path:
        load_policy_weights(policy, model_path, f"the config of experiment '{cfg.exp_name}'")
    if resume:
        state = load_checkpoint(latest_checkpoint(ckpt_dir))
        _restore(state, policy, learner, collector, buffer, sample_rng)
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

    def show_collect(moves: int) -> None:  # called after every move of a collect: a Connect Four collect takes minutes
        if bar_in_env_steps:
            logger.update(env_steps + moves)
        else:
            logger.update(learner.train_iter, dict(env_steps=env_steps + moves))
        logger.status(env_steps=env_steps + moves)

    pcfg = cfg.policy
    last_eval: Dict[str, float] = {}
    t_start = time.perf_counter()
    stop = StopSignal()
    stopped = False
    with stop:  # SIGINT / SIGTERM: end the current move or learner step, write last.pt, raise TrainingStopped
        while (updates_left or env_steps < max_env_step) and learner.train_iter < max_train_iter:
            if not updates_left:  # (a run resumed in the middle of a learner phase first finishes it)
                before = _collect_state(collector)
                segments, cstats = collector.collect(train_iter=learner.train_iter, should_stop=stop.requested,
                                                     progress=show_collect, on_move=logger.move_hook)
                if _stop_agreed(stop):  # the collect may be cut short: drop it whole, and save the state before it
                    _rewind(collector, before)
                    stopped = True
                    break
                buffer.push_segments(segments)
                policy.after_collect(buffer, learner.train_iter)  # e.g. ReZero's whole-buffer reanalyze schedule
                new_steps = int(sum(len(s) for s in segments))
                # Under DDP every decision below is agreed by all ranks (a collective each), else some rank
                # would wait in a gradient all-reduce the others never join. Without DDP these are no-ops.
                updates_left = calculate_update_per_collect(cfg, new_steps, world_size)  # sums over ranks
                env_steps += int(ddp.ddp_all_reduce_sum(new_steps))  # all ranks' games: every rank stops together
                logger.scalars("collect", cstats, env_steps)
                local_batch = _local_batch(pcfg.batch_size, world_size)
                if buffer.is_full and buffer.num_transitions < local_batch:
                    raise ConfigError(
                        f"policy.replay_buffer_size={pcfg.replay_buffer_size} rows hold only {buffer.num_transitions} "
                        f"moves of these games (every stored game also takes a row for its final state), fewer than "
                        f"one batch of {local_batch}: the run would collect forever and train nothing; raise "
                        f"replay_buffer_size or lower batch_size")
                if not ddp.ddp_all_true(buffer.num_transitions >= local_batch):
                    updates_left = 0  # too little data for one minibatch yet (on some rank): keep collecting
            lstats: Dict[str, float] = {}
            reanalyze = policy.reanalyze_fn() if pcfg.reanalyze_ratio > 0 else None
            bootstrap = policy.bootstrap_fn()  # None: bootstrap from the root values stored at collection
            while updates_left and learner.train_iter < max_train_iter:
                if _stop_agreed(stop):
                    stopped = True
                    break
                batch = buffer.sample(_local_batch(pcfg.batch_size, world_size), sample_rng, reanalyze_fn=reanalyze,
                                      bootstrap_fn=bootstrap)
                if augment is not None:  # a random board symmetry per row (drawn from sample_rng: resume stays exact)
                    batch = augment(batch, sample_rng)
                lstats = learner.train(batch)
                updates_left -= 1
                if pcfg.use_priority and learner.last_priorities is not None:
                    buffer.update_priorities(batch.indices, learner.last_priorities)
                if rank == 0 and learner.train_iter % pcfg.eval_freq == 0:
                    last_eval = _evaluate(evaluator, logger, ckpt_dir, policy, learner, env_steps, best)
                if rank == 0 and learner.train_iter % pcfg.save_ckpt_freq == 0:
                    _save(ckpt_dir, policy, learner, collector, buffer, sample_rng, env_steps, best, updates_left)
            if world_size > 1 and lstats:  # every rank took the same steps, so all hold the same keys
                lstats = ddp.ddp_all_reduce_mean(lstats)
            logger.scalars("learn", lstats, env_steps)
            logger.status(env_steps=env_steps, train_iter=learner.train_iter, buffer_size=buffer.num_transitions,
                          weights_version=learner.train_iter)
            logger.update(env_steps if bar_in_env_steps else learner.train_iter,
                          dict(iter=learner.train_iter, loss=lstats.get("loss", float("nan")), **_headline(last_eval)))
            if stopped:
                break
        stopped = stopped or _stop_agreed(stop)  # a signal in the last learner step skips the final evaluation
        if rank == 0:
            if not stopped:  # (a stop skips it: an evaluation can take minutes)
                last_eval = _evaluate(evaluator, logger, ckpt_dir, policy, learner, env_steps, best)
            _save(ckpt_dir, policy, learner, collector, buffer, sample_rng, env_steps, best, updates_left)
            if not stopped:
                elapsed = time.perf_counter() - t_start
                logger.summary(dict(env_steps=env_steps, train_iter=learner.train_iter, wall_minutes=elapsed / 60.0,
                                    env_steps_per_s=env_steps / max(elapsed, 1e-9), **last_eval))
        logger.close()
        if world_size > 1:
            ddp.ddp_synchronize()  # nobody exits before rank 0's final checkpoint is written
            if own_group:
                ddp.teardown_ddp()
    if stopped:  # the handlers that were installed before are back: a Python caller gets a KeyboardInterrupt
        raise TrainingStopped(stop.signal_number or signal.SIGTERM,  # (a DDP rank stopped by another's signal)
                              os.path.join(ckpt_dir, "last.pt") if rank == 0 else None, env_steps, learner.train_iter)
    policy.final_eval.update(last_eval)  # the documented Policy.final_eval (rank 0's; empty on other ranks)
    return policy


def _stop_agreed(stop: StopSignal) -> bool:
    """Whether a stop was requested (on any rank: under DDP one collective, so all ranks stop at the same point)."""
    return not ddp.ddp_all_true(not stop.requested())


def _collect_state(collector) -> Dict[str, Any]:
    """What a collect changes of the state ``_save`` writes (cheap: two generator states and a count)."""
    return dict(collect=collector.rng.bit_generator.state, torch=torch.get_rng_state(), episodes=collector.episodes)


def _rewind(collector, before: Dict[str, Any]) -> None:
    """Undo a dropped collect's draws, so the checkpoint holds the state before it and --resume replays it."""
    collector.rng.bit_generator.state = before["collect"]
    torch.set_rng_state(before["torch"])
    collector.episodes = before["episodes"]


def _local_batch(batch_size: int, world_size: int) -> int:
    if batch_size % world_size:
        raise ConfigError(f"policy.batch_size={batch_size} must be divisible by the world size {world_size}")
    return batch_size // world_size


def _headline(stats: Dict[str, float]) -> Dict[str, float]:
    keep = {}
    for k, v in stats.items():
        if k.endswith(("/win", "/loss")) or k in ("mean_return", "optimal_move_rate"):
            keep[k.replace("/", "_")] = round(v, 3)
    return keep


def _save(ckpt_dir, policy, learner, collector, buffer, rng, env_steps, best, updates_left) -> None:
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


def _evaluate(evaluator, logger, ckpt_dir, policy, learner, env_steps, best) -> Dict[str, float]:
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


def _restore(state, policy, learner, collector, buffer, rng) -> None:
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
