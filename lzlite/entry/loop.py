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

import torch

from lzlite.config import ConfigError
from lzlite.distributed import ddp
from lzlite.entry.stop import StopSignal, TrainingStopped
from lzlite.entry.utils import calculate_update_per_collect
from lzlite.worker.run import (UNLIMITED, build_components, evaluate_run, headline, local_batch, prepare_run,
                               save_run_state)
from lzlite.worker.run import schedule_horizon as _schedule_horizon  # noqa: F401 (LightZero-compat tests read them)
from lzlite.worker.run import stop_limit as _stop_limit  # noqa: F401

__all__ = ["train", "build_components", "UNLIMITED"]


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
    role: Optional[str] = None,
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
        role: None: the synchronous loop when ``policy.num_actors`` is 0, else a learner and that many actor
            processes (``lzlite/cluster``); 'learner': a learner alone, which actors join
            (``python -m lzlite.entry --role actor --learner tcp://HOST:PORT``).

    Raises:
        TrainingStopped: after SIGINT or SIGTERM (a KeyboardInterrupt). The run ends within a move of a collect
            or a learner step; a collect cut short is dropped whole, so ``ckpt/last.pt`` holds the state before
            it (or the state after the last learner step), and ``resume=True`` continues as if no stop had been.
            The final evaluation is skipped. The signal handlers in place before are restored either way.
    """
    run = prepare_run(input_cfg, seed=seed, model=model, model_path=model_path, max_train_iter=max_train_iter,
                      max_env_step=max_env_step, run_dir=run_dir, resume=resume, device=device, progress=progress,
                      force=force)
    cfg, ckpt_dir, rank, world_size, own_group = run.cfg, run.ckpt_dir, run.rank, run.world_size, run.own_group
    parts, learner, sample_rng, logger, best = run.parts, run.learner, run.sample_rng, run.logger, run.best
    policy, collector, evaluator, buffer = parts["policy"], parts["collector"], parts["evaluator"], parts["buffer"]
    augment = parts["augment"]
    env_steps, updates_left = run.env_steps, run.updates_left
    max_train_iter, max_env_step, bar_in_env_steps = run.max_train_iter, run.max_env_step, run.bar_in_env_steps
    if role not in (None, "learner"):
        raise ConfigError(f"role must be None or 'learner' (an actor is run_actor's), got {role!r}")
    if role == "learner" or cfg.policy.num_actors > 0:
        return _train_async(run, 0 if role == "learner" else int(cfg.policy.num_actors), device)

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
                batch_rows = local_batch(pcfg.batch_size, world_size)
                if buffer.is_full and buffer.num_transitions < batch_rows:
                    raise ConfigError(
                        f"policy.replay_buffer_size={pcfg.replay_buffer_size} rows hold only {buffer.num_transitions} "
                        f"moves of these games (every stored game also takes a row for its final state), fewer than "
                        f"one batch of {batch_rows}: the run would collect forever and train nothing; raise "
                        f"replay_buffer_size or lower batch_size")
                if not ddp.ddp_all_true(buffer.num_transitions >= batch_rows):
                    updates_left = 0  # too little data for one minibatch yet (on some rank): keep collecting
            lstats: Dict[str, float] = {}
            reanalyze = policy.reanalyze_fn() if pcfg.reanalyze_ratio > 0 else None
            bootstrap = policy.bootstrap_fn()  # None: bootstrap from the root values stored at collection
            while updates_left and learner.train_iter < max_train_iter:
                if _stop_agreed(stop):
                    stopped = True
                    break
                batch = buffer.sample(local_batch(pcfg.batch_size, world_size), sample_rng, reanalyze_fn=reanalyze,
                                      bootstrap_fn=bootstrap)
                if augment is not None:  # a random board symmetry per row (drawn from sample_rng: resume stays exact)
                    batch = augment(batch, sample_rng)
                lstats = learner.train(batch)
                updates_left -= 1
                if pcfg.use_priority and learner.last_priorities is not None:
                    buffer.update_priorities(batch.indices, learner.last_priorities)
                if rank == 0 and learner.train_iter % pcfg.eval_freq == 0:
                    last_eval = evaluate_run(evaluator, logger, ckpt_dir, policy, learner, env_steps, best)
                if rank == 0 and learner.train_iter % pcfg.save_ckpt_freq == 0:
                    save_run_state(ckpt_dir, policy, learner, collector, buffer, sample_rng, env_steps, best,
                                   updates_left)
            if world_size > 1 and lstats:  # every rank took the same steps, so all hold the same keys
                lstats = ddp.ddp_all_reduce_mean(lstats)
            logger.scalars("learn", lstats, env_steps)
            logger.status(env_steps=env_steps, train_iter=learner.train_iter, buffer_size=buffer.num_transitions,
                          weights_version=learner.train_iter)
            logger.update(env_steps if bar_in_env_steps else learner.train_iter,
                          dict(iter=learner.train_iter, loss=lstats.get("loss", float("nan")), **headline(last_eval)))
            if stopped:
                break
        stopped = stopped or _stop_agreed(stop)  # a signal in the last learner step skips the final evaluation
        if rank == 0:
            if not stopped:  # (a stop skips it: an evaluation can take minutes)
                last_eval = evaluate_run(evaluator, logger, ckpt_dir, policy, learner, env_steps, best)
            save_run_state(ckpt_dir, policy, learner, collector, buffer, sample_rng, env_steps, best, updates_left)
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


def _train_async(run: Any, num_actors: int, device: Optional[str]) -> Any:
    """The learner of an actor / learner run, with ``num_actors`` supervised local actors (``lzlite/cluster``).

    Under torchrun each rank is a learner with its own sockets (``cluster_port + 3 x rank``) and buffer; rank 0's
    supervisor starts the actors and gives actor k to rank k mod world_size.
    """
    # (imported here: pyzmq and the cluster's threads are for runs with actors only)
    from lzlite.cluster.learner import run_learner, weights_path
    from lzlite.cluster.supervisor import Supervisor

    supervisor: Optional[Supervisor] = None
    base_port = int(run.cfg.policy.cluster_port)

    def start_actors(port: int) -> None:
        nonlocal supervisor
        if num_actors and run.rank == 0:
            addresses = [f"tcp://127.0.0.1:{base_port + 3 * r}" for r in range(run.world_size)]
            supervisor = Supervisor(os.path.join(run.run_dir, "config.py"), addresses, num_actors, run.cfg.seed,
                                    weights_path(run.run_dir), os.path.join(run.run_dir, "actors"), device=device,
                                    num_reanalyzers=int(run.cfg.policy.num_reanalyzers), run_id=run.logger.run_id)
            supervisor.start()

    stop = StopSignal()
    with stop:  # SIGINT / SIGTERM: the learner step in hand ends, last.pt is written, the actors are stopped
        try:
            stopped, last_eval, _ = run_learner(run, stop.requested, on_ready=start_actors)
        finally:
            if supervisor is not None:
                supervisor.stop()
            run.logger.close()
        if run.world_size > 1:
            ddp.ddp_synchronize()  # nobody exits before rank 0's final checkpoint is written
            if run.own_group:
                ddp.teardown_ddp()
    policy = run.parts["policy"]
    if stopped:
        raise TrainingStopped(stop.signal_number or signal.SIGTERM,
                              os.path.join(run.ckpt_dir, "last.pt") if run.rank == 0 else None, run.env_steps,
                              run.learner.train_iter)
    policy.final_eval.update(last_eval)
    return policy


def _stop_agreed(stop: StopSignal) -> bool:
    """Whether a stop was requested (on any rank: under DDP one collective, so all ranks stop at the same point)."""
    return not ddp.ddp_all_true(not stop.requested())


def _collect_state(collector) -> Dict[str, Any]:
    """What a collect changes of the state ``save_run_state`` writes (cheap: two generator states and a count)."""
    return dict(collect=collector.rng.bit_generator.state, torch=torch.get_rng_state(), episodes=collector.episodes)


def _rewind(collector, before: Dict[str, Any]) -> None:
    """Undo a dropped collect's draws, so the checkpoint holds the state before it and --resume replays it."""
    collector.rng.bit_generator.state = before["collect"]
    torch.set_rng_state(before["torch"])
    collector.episodes = before["episodes"]
