"""The learner of an actor / learner run: episodes in over ZeroMQ, learner steps at the replay ratio, weights out.

Threads (each owns its sockets; ZeroMQ sockets are not shared between threads):

- the receiver PULLs frames, decodes and validates them (``wire``) and puts episodes into a bounded queue; a
  full queue stops it reading, so ZeroMQ's high-water marks push back on the actors (bounded memory);
- the publisher sends the control state (run / pause / stop) as a heartbeat every ``HEARTBEAT_S`` and every
  frame the learner loop hands it (weights announcements and weights), and re-sends the latest weights to an
  actor that says hello;
- the learner loop (the caller's thread) moves episodes into the replay buffer, trains when the rate limiter
  allows, publishes weights every ``publish_freq`` learner steps, evaluates and checkpoints as the synchronous
  loop does (``lzlite.worker.run``).
"""
from __future__ import annotations

import collections
import os
import queue
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

import numpy as np
import torch
import zmq

from lzlite.cluster import wire
from lzlite.cluster.reanalyze import ReanalyzeScheduler
from lzlite.config import ConfigError
from lzlite.distributed import ddp
from lzlite.worker.checkpoint import remove_stale_temp_files, save_checkpoint
from lzlite.worker.run import RunSetup, evaluate_run, headline, local_batch, save_run_state

__all__ = ["RateLimiter", "Receiver", "Publisher", "episode_spec", "run_learner", "weights_path", "HEARTBEAT_S"]

HEARTBEAT_S = 0.5  # control state re-sent this often: a late SUB joiner hears it, and actors know the learner lives
LOG_EVERY_S = 2.0  # cluster metrics to the logger this often


def weights_path(run_dir: str) -> str:
    """The file the learner publishes weights to (atomically) and local actors watch."""
    return os.path.join(run_dir, "weights", "latest.pt")


@dataclass
class RateLimiter:
    """Holds learner steps per new env step at ``ratio`` (the idea of Reverb's SampleToInsertRatio).

    Counted from where this learner started (a resumed run starts afresh): with x = env_steps x ratio the
    learner may step while steps < x + band and actors are told to pause once steps < x - band (resumed when
    the deficit is under band / 2); band = max(tolerance x x, slack).
    """

    ratio: float
    tolerance: float
    slack: float

    def band(self, env_steps: int) -> float:
        return max(self.tolerance * env_steps * self.ratio, self.slack)

    def can_train(self, steps: int, env_steps: int) -> bool:
        return steps < env_steps * self.ratio + self.band(env_steps)

    def should_pause(self, steps: int, env_steps: int, paused: bool) -> bool:
        deficit = env_steps * self.ratio - steps
        return deficit > (self.band(env_steps) / 2 if paused else self.band(env_steps))


def episode_spec(parts: Dict[str, Any], pcfg: Any) -> wire.EpisodeSpec:
    """What an episode of this run looks like (the learner checks every message against it)."""
    venv, policy, collector = parts["venv"], parts["policy"], parts["collector"]
    venv.reset()
    records = policy.record_step(venv, np.arange(1))  # the policy's per-step records: name -> [1, *shape]
    padding = int(getattr(collector, "num_padding", 0))
    return wire.EpisodeSpec(obs_shape=tuple(venv.obs_shape), obs_dtype=venv.observe().dtype,
                            action_space_size=int(venv.num_actions), max_steps=int(pcfg.game_segment_length) + padding,
                            extras={k: tuple(np.asarray(v).shape[1:]) for k, v in records.items()},
                            padded=hasattr(collector, "num_padding"))


class Receiver(threading.Thread):
    """PULLs frames on ``address``; valid episodes go into ``episodes``, everything else is counted in ``drops``."""

    def __init__(self, ctx: zmq.Context, address: str, spec: wire.EpisodeSpec, queue_size: int, hwm: int) -> None:
        super().__init__(name="lzlite-receiver", daemon=True)
        self.spec = spec
        self.episodes: "queue.Queue[Tuple[Any, wire.EpisodeInfo, int]]" = queue.Queue(maxsize=queue_size)
        self.replies: "queue.Queue[wire.Message]" = queue.Queue(maxsize=16)  # reanalyzed targets (REANALYZE_REPLY)
        self.hellos: Deque[int] = collections.deque(maxlen=256)  # actor ids that asked for weights
        self.status: Dict[int, Tuple[float, Dict[str, float]]] = {}  # actor id -> (heard at, ACTOR_STATUS fields)
        self.drops: Dict[str, int] = collections.Counter()
        self.received = 0
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.sock = ctx.socket(zmq.PULL)
        self.sock.setsockopt(zmq.RCVHWM, hwm)
        self.sock.setsockopt(zmq.LINGER, 0)
        # ZeroMQ itself refuses frames far past any valid one (it drops that connection); the decoder's tighter cap
        # counts the rest
        self.sock.setsockopt(zmq.MAXMSGSIZE, 4 * spec.max_bytes)
        self.sock.bind(address)

    def statuses(self) -> List[Tuple[float, Dict[str, float]]]:
        """(heard at, fields) of the last ACTOR_STATUS of every actor id (a snapshot: the thread writes the dict)."""
        with self.lock:
            return list(self.status.values())

    def drop_counts(self) -> Dict[str, int]:
        with self.lock:
            return dict(self.drops)

    def count_drop(self, reason: str) -> None:
        with self.lock:
            self.drops[reason] += 1

    def _put(self, q: "queue.Queue[Any]", item: Any) -> None:
        while not self.stopping.is_set():  # a full queue: stop reading, the HWMs push back
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def run(self) -> None:
        kinds = (wire.Kind.EPISODE, wire.Kind.HELLO, wire.Kind.ACTOR_STATUS, wire.Kind.REANALYZE_REPLY)
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        try:
            while not self.stopping.is_set():
                if not poller.poll(100):
                    continue
                frame = self.sock.recv()
                self.received += 1
                try:
                    msg = wire.decode(frame, self.spec.max_bytes, kinds)
                    if msg.kind == wire.Kind.EPISODE:
                        seg, info = self.spec.to_segment(msg)
                        self._put(self.episodes, (seg, info, len(frame)))
                    elif msg.kind == wire.Kind.REANALYZE_REPLY:
                        wire.check_reanalyze_reply(msg, self.spec.action_space_size)
                        msg.arrays = {k: np.array(v) for k, v in msg.arrays.items()}  # (own the bytes)
                        self._put(self.replies, msg)
                    elif msg.kind == wire.Kind.HELLO:
                        self.hellos.append(int(msg.meta["actor_id"]))
                    else:
                        with self.lock:
                            self.status[int(msg.meta["actor_id"])] = (time.monotonic(), dict(msg.meta))
                except wire.WireError as e:
                    self.count_drop(e.reason)
        finally:
            self.sock.close(0)


class Publisher(threading.Thread):
    """Owns the PUB socket: heartbeats the control state and sends the frames the learner loop queues."""

    def __init__(self, ctx: zmq.Context, address: str, instance: int, hwm: int, hellos: Deque[int]) -> None:
        super().__init__(name="lzlite-publisher", daemon=True)
        self.instance = instance
        self.state = wire.Control.RUN
        self.version = 0
        self.outbox: "queue.Queue[bytes]" = queue.Queue()
        self.latest_weights: Optional[bytes] = None
        self.hellos = hellos
        self.stopping = threading.Event()
        self.sock = ctx.socket(zmq.PUB)
        self.sock.setsockopt(zmq.SNDHWM, hwm)
        self.sock.setsockopt(zmq.LINGER, 500)
        self.sock.bind(address)
        self._seq = 0

    def control_frame(self) -> bytes:
        self._seq += 1
        return wire.encode(wire.Kind.CONTROL, dict(learner_instance=self.instance, state=self.state,
                                                   version=self.version, seq=self._seq, sent_at=time.time()))

    def run(self) -> None:
        last_beat, last_resend = 0.0, 0.0
        try:
            while True:
                try:
                    frame = self.outbox.get(timeout=0.05)
                    self.sock.send(frame)
                    continue
                except queue.Empty:
                    pass
                now = time.monotonic()
                if self.hellos and self.latest_weights is not None and now - last_resend > 0.5:
                    self.hellos.clear()  # one re-send answers every actor that asked since the last one
                    self.sock.send(self.latest_weights)
                    last_resend = now
                if now - last_beat >= HEARTBEAT_S or self.stopping.is_set():
                    self.sock.send(self.control_frame())
                    last_beat = now
                if self.stopping.is_set() and self.outbox.empty():
                    break
        finally:
            self.sock.close()


def _publish(run: RunSetup, pub: Publisher, path: str) -> float:
    """Write the weights atomically (temp + rename; ``weights_only``-loadable) and announce them; seconds taken."""
    t0 = time.perf_counter()
    policy, version = run.parts["policy"], int(run.learner.train_iter)
    model_state = policy.state_dict()["model"]
    published_at = time.time()
    if run.rank == 0:  # (every rank publishes the same weights on its own PUB socket; rank 0 writes the file)
        save_checkpoint(path, dict(policy=dict(model=model_state), weights_version=version,
                                   learner_instance=pub.instance, published_at=published_at))
    frame = wire.encode_weights(wire.Kind.WEIGHTS, pub.instance, version, published_at, model_state)
    pub.latest_weights = frame
    pub.version = version
    pub.outbox.put(wire.encode_weights(wire.Kind.WEIGHTS_ANNOUNCE, pub.instance, version, published_at))
    pub.outbox.put(frame)
    return time.perf_counter() - t0


def run_learner(run: RunSetup, should_stop: Callable[[], bool], bind_host: str = "*",
                on_ready: Optional[Callable[[int], None]] = None) -> Tuple[bool, Dict[str, float], Dict[str, Any]]:
    """Train from the episodes actors send until a stop limit or ``should_stop()``.

    Returns:
        (stopped by ``should_stop``, the last evaluation's stats, the run's summary: env steps, learner steps,
        rates, achieved replay ratio, learner idle fraction, episodes, drops).

    Args:
        run: the prepared run (``lzlite.worker.run.prepare_run``). Under torchrun every rank runs this with its own
            sockets on ``cluster_port + 3 x rank`` (episodes) and + 1 (PUB; weights are the same on every rank) and
            its own actors and buffer; the ranks agree on every learner step with one all-reduce per iteration.
        should_stop: asked before every learner step and every wait (SIGINT / SIGTERM).
        bind_host: the interface the sockets bind ('*': all).
        on_ready: called with the episode port once both sockets are bound and the first weights are out.
    """
    cfg, pcfg, learner, logger = run.cfg, run.cfg.policy, run.learner, run.logger
    policy, buffer, evaluator, collector = (run.parts[k] for k in ("policy", "buffer", "evaluator", "collector"))
    augment = run.parts["augment"]
    rank, world_size = run.rank, run.world_size
    port = int(pcfg.cluster_port) + 3 * rank
    spec = episode_spec(run.parts, pcfg)
    reanalyzing = pcfg.reanalyze_positions_per_step > 0
    if reanalyzing and world_size > 1:
        raise ConfigError("policy.reanalyze_positions_per_step > 0 under torchrun: reanalyze processes serve one "
                          "learner process; set it to 0 or run the learner without torchrun")
    if reanalyzing and policy.reanalyze_fn() is None:
        raise ConfigError(f"policy.reanalyze_positions_per_step={pcfg.reanalyze_positions_per_step}: policy "
                          f"'{cfg.create.policy.type}' has no reanalyze function; set it to 0")
    ctx = zmq.Context()
    instance = random.SystemRandom().getrandbits(63)  # tells actors that a learner was restarted
    try:
        receiver = Receiver(ctx, f"tcp://{bind_host}:{port}", spec, int(pcfg.ingest_queue_size),
                            int(pcfg.socket_hwm))
        publisher = Publisher(ctx, f"tcp://{bind_host}:{port + 1}", instance, int(pcfg.socket_hwm), receiver.hellos)
        scheduler = None
        if reanalyzing:
            scheduler = ReanalyzeScheduler(ctx, f"tcp://{bind_host}:{port + 2}", buffer, spec,
                                           float(pcfg.reanalyze_positions_per_step),
                                           int(pcfg.reanalyze_batch_positions), instance)
    except zmq.ZMQError as e:
        ctx.destroy(linger=0)
        raise ConfigError(f"policy.cluster_port={pcfg.cluster_port}: the learner cannot bind its ports {port}-"
                          f"{port + 2} ({e}); another run holds them: pick another cluster_port") from None
    path = weights_path(run.run_dir)
    if rank == 0:
        remove_stale_temp_files(os.path.dirname(path))  # a learner killed inside a publication leaves one behind
    limiter = RateLimiter(float(pcfg.replay_ratio), float(pcfg.replay_ratio_tolerance), float(pcfg.rate_limit_slack))
    batch_size = local_batch(pcfg.batch_size, world_size)
    steps0, env0 = learner.train_iter, run.env_steps
    env_steps = run.env_steps
    accepted = int(collector.episodes)  # the checkpoint's episode counter (a resumed run goes on counting)
    lags: List[int] = []
    held: List[Tuple[Any, wire.EpisodeInfo, int]] = []  # an episode the idle wait took off the queue
    ingest_bytes = ingested = lag_total = lag_max = 0
    last_eval: Dict[str, float] = {}
    lstats: Dict[str, float] = {}
    idle_s = publish_s = 0.0
    ready_idle_s, t_ready = 0.0, None  # idle time once the buffer first held a batch, and when that was
    t_start = last_log = time.perf_counter()
    window = dict(t=t_start, idle=0.0, steps=learner.train_iter, env=env_steps)
    stopped = False
    final: Dict[str, Any] = {}
    receiver.start()
    publisher.start()
    try:
        publish_s += _publish(run, publisher, path)
        if on_ready is not None:
            on_ready(port)
        reanalyze = policy.reanalyze_fn() if pcfg.reanalyze_ratio > 0 else None
        bootstrap = policy.bootstrap_fn()
        while learner.train_iter < run.max_train_iter:
            local_stop = should_stop()
            pushed_versions: List[int] = []
            added = 0
            while True:  # everything that arrived, into the buffer
                try:
                    seg, info, nbytes = held.pop() if held else receiver.episodes.get_nowait()
                except queue.Empty:
                    break
                lag = learner.train_iter - info.version_min
                if lag > pcfg.max_policy_lag:
                    receiver.count_drop("policy_lag")
                    continue
                try:
                    buffer.push_segments([seg])
                except ValueError:  # the buffer checks once more (shapes fixed by its first segment): nothing written
                    receiver.count_drop("buffer_refused")
                    continue
                pushed_versions.append(info.version_min)
                accepted += 1
                added += info.env_steps
                lags.append(max(0, lag))  # (a resumed learner can be behind the weights an actor still plays)
                lag_total += max(0, lag)
                lag_max = max(lag_max, lag)
                ingest_bytes += nbytes
                ingested += 1
            if pushed_versions:
                policy.after_collect(buffer, learner.train_iter)  # e.g. ReZero's whole-buffer reanalyze schedule
                if scheduler is not None:
                    scheduler.on_pushed(pushed_versions)
            while scheduler is not None and not receiver.replies.empty():
                scheduler.apply(receiver.replies.get_nowait())
            # every rank's new env steps, whether some rank's buffer lacks a batch, whether some rank was signalled:
            # one collective (without DDP the numbers come back as they are), so all ranks decide alike
            agreed = ddp.ddp_all_reduce_sum(torch.tensor([added, int(buffer.num_transitions < batch_size),
                                                          int(local_stop)], dtype=torch.int64))
            env_steps += int(agreed[0])
            all_ready = int(agreed[1]) == 0
            if int(agreed[2]):
                stopped = True
                break
            steps, new_env = learner.train_iter - steps0, env_steps - env0
            # done at the env-step limit once the steps those env steps are owed are taken (none without one batch)
            finished = env_steps >= run.max_env_step and (steps >= new_env * limiter.ratio or not all_ready)
            if finished:
                break
            if env_steps >= run.max_env_step:
                publisher.state = wire.Control.STOP  # enough env steps: the learner takes the steps they are owed
            else:
                publisher.state = (wire.Control.PAUSE if limiter.should_pause(
                    steps, new_env, publisher.state == wire.Control.PAUSE) else wire.Control.RUN)
            if all_ready and t_ready is None:
                t_ready = time.perf_counter()
            if all_ready and limiter.can_train(steps, new_env):
                batch = buffer.sample(batch_size, run.sample_rng, reanalyze_fn=reanalyze, bootstrap_fn=bootstrap)
                if augment is not None:
                    batch = augment(batch, run.sample_rng)
                lstats = learner.train(batch)
                if pcfg.use_priority and learner.last_priorities is not None:
                    buffer.update_priorities(batch.indices, learner.last_priorities)
                if scheduler is not None:
                    scheduler.note_sample(batch.indices, learner.train_iter)
                    scheduler.maybe_send(1, publisher.version)
                if learner.train_iter % pcfg.publish_freq == 0:
                    publish_s += _publish(run, publisher, path)
                if rank == 0 and learner.train_iter % pcfg.eval_freq == 0:
                    last_eval = evaluate_run(evaluator, logger, run.ckpt_dir, policy, learner, env_steps, run.best)
                if rank == 0 and learner.train_iter % pcfg.save_ckpt_freq == 0:
                    collector.episodes = accepted
                    save_run_state(run.ckpt_dir, policy, learner, collector, buffer, run.sample_rng, env_steps,
                                   run.best, 0)
            else:  # waiting for actors: this is the learner's idle time
                t0 = time.perf_counter()
                try:
                    held.append(receiver.episodes.get(timeout=0.05))  # the next drain takes it first
                except queue.Empty:
                    pass
                idle_s += time.perf_counter() - t0
                if all_ready:
                    ready_idle_s += time.perf_counter() - t0
            now = time.perf_counter()
            if now - last_log >= LOG_EVERY_S:
                last_log = now
                stats = _cluster_stats(receiver, publisher, lags, idle_s, window, now, learner.train_iter, env_steps,
                                       steps, new_env, ingest_bytes / max(ingested, 1), accepted)
                lags.clear()
                if scheduler is not None:
                    stats.update(scheduler.stats())
                logger.scalars("cluster", stats, env_steps)
                logger.status(env_steps=env_steps, train_iter=learner.train_iter, buffer_size=buffer.num_transitions,
                              weights_version=publisher.version, actors_alive=int(stats["actors_alive"]),
                              **({"policy_lag": stats["policy_lag_mean"]} if "policy_lag_mean" in stats else {}))
                if lstats:
                    logger.scalars("learn", lstats, env_steps)
                logger.update(env_steps if run.bar_in_env_steps else learner.train_iter,
                              dict(iter=learner.train_iter, loss=lstats.get("loss", float("nan")),
                                   ratio=stats["achieved_replay_ratio"], idle=stats["learner_idle_fraction"],
                                   **headline(last_eval)))
        t_loop_end = time.perf_counter()
        stopped = stopped or bool(ddp.ddp_all_reduce_sum(int(should_stop())))  # a signal in the last step
        publisher.state = wire.Control.STOP
        collector.episodes = accepted
        if not stopped:
            publish_s += _publish(run, publisher, path)
        # the final state: the periodic write above may predate the last learner steps and publish
        logger.status(env_steps=env_steps, train_iter=learner.train_iter, buffer_size=buffer.num_transitions,
                      weights_version=publisher.version)
        if rank == 0:
            if not stopped:
                last_eval = evaluate_run(evaluator, logger, run.ckpt_dir, policy, learner, env_steps, run.best)
            save_run_state(run.ckpt_dir, policy, learner, collector, buffer, run.sample_rng, env_steps, run.best, 0)
        elapsed = time.perf_counter() - t_start
        new_env = env_steps - env0
        final = dict(env_steps=env_steps, train_iter=learner.train_iter, wall_minutes=elapsed / 60.0,
                     env_steps_per_s=new_env / max(elapsed, 1e-9),
                     learner_steps_per_s=(learner.train_iter - steps0) / max(elapsed, 1e-9),
                     achieved_replay_ratio=(learner.train_iter - steps0) / max(new_env, 1),
                     learner_idle_fraction=idle_s / max(elapsed, 1e-9),
                     learner_idle_fraction_after_first_batch=(ready_idle_s / max(t_loop_end - t_ready, 1e-9)
                                                    if t_ready is not None else float("nan")),
                     learner_publish_fraction=publish_s / max(elapsed, 1e-9), episodes=accepted,
                     dropped=sum(receiver.drop_counts().values()), policy_lag_mean=lag_total / max(ingested, 1),
                     policy_lag_max=lag_max, bytes_per_episode=ingest_bytes / max(ingested, 1),
                     **_actor_time(receiver), **last_eval)
        if scheduler is not None:
            final.update(scheduler.stats())
        run.env_steps = env_steps
        if not stopped:
            logger.summary(final)
    finally:
        if scheduler is not None:
            scheduler.close()
        receiver.stopping.set()
        publisher.stopping.set()
        publisher.join(timeout=2.0)
        receiver.join(timeout=2.0)
        ctx.term()
    return stopped, last_eval, final


def _cluster_stats(receiver: Receiver, publisher: Publisher, lags: List[int], idle_s: float, window: Dict[str, float],
                   now: float, train_iter: int, env_steps: int, steps: int, new_env: int, bytes_per_episode: float,
                   accepted: int) -> Dict[str, float]:
    """The learner's view of the run since the last log (rates and idle time) and since it started (ratio, drops)."""
    dt = max(now - window["t"], 1e-9)
    drops = receiver.drop_counts()
    alive = [s for heard, s in receiver.statuses() if time.monotonic() - heard < 10.0]
    stats = dict(
        achieved_replay_ratio=steps / max(new_env, 1),
        learner_idle_fraction=(idle_s - window["idle"]) / dt,
        learner_steps_per_s=(train_iter - window["steps"]) / dt,
        env_steps_per_s=(env_steps - window["env"]) / dt,
        queue_depth=float(receiver.episodes.qsize()),
        episodes=float(accepted),
        dropped=float(sum(drops.values())),
        paused=float(publisher.state == wire.Control.PAUSE),
        weights_version=float(publisher.version),
        actors_alive=float(len(alive)),
        bytes_per_episode=bytes_per_episode,
    )
    if lags:
        stats.update(policy_lag_mean=float(np.mean(lags)), policy_lag_max=float(np.max(lags)))
    for reason, n in drops.items():
        stats[f"dropped/{reason}"] = float(n)
    stats.update(_actor_time(receiver))
    window.update(t=now, idle=idle_s, steps=train_iter, env=env_steps)
    return stats


def _actor_time(receiver: Receiver) -> Dict[str, float]:
    """Where the actors heard from spend their time (their last ACTOR_STATUS): playing, paused, waiting to send,
    loading weights, as fractions of the sum; and their mean weights pick-up latency."""
    heard = [s for _, s in receiver.statuses()]
    total = sum(s["play_s"] + s["paused_s"] + s["send_wait_s"] + s["load_s"] for s in heard)
    out: Dict[str, float] = {}
    if total > 0:
        for part in ("play_s", "paused_s", "send_wait_s", "load_s"):
            out[f"actor_{part[:-2]}_fraction"] = sum(s[part] for s in heard) / total
    latencies = [s["pickup_latency_s"] for s in heard if s["pickup_latency_s"] >= 0]
    if latencies:
        out["weights_pickup_latency_s"] = float(np.mean(latencies))
    return out
