"""An actor: plays games with the config's collector and the latest published weights, PUSHes each episode.

The actor runs whichever collector the config names and only calls ``collector.collect(...)``; new weights are
loaded between collects and, for collectors whose ``progress`` callback runs between searches
(``progress_between_searches``: the lock-step collectors), between moves too; never inside a search (the engine
collector's searches are always under way, so its actor loads weights between collects only). Then
``collector.weights_updated()`` when the collector has one. Weights come from the learner's weights file (a stat poll: the file is replaced atomically) or, with no
file, from the learner's PUB socket. A learner that goes quiet (no heartbeat for ``learner_timeout_s``) makes the
actor stop playing and wait: ZeroMQ reconnects by itself, and at most one collect's episodes wait to be sent.
"""
from __future__ import annotations

import os
import random
import signal
import time
from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch
import zmq

from lzlite.cluster import wire
from lzlite.config import ConfigError, compile_config, load_config_file
from lzlite.telemetry.logger import RunLogger
from lzlite.worker.checkpoint import CheckpointError, load_checkpoint
from lzlite.worker.run import build_components, set_global_seed

__all__ = ["Actor", "run_actor", "derived_ports"]


def derived_ports(address: str) -> tuple:
    """``tcp://HOST:PORT`` -> (episode address, weights / control address on PORT + 1)."""
    if not address.startswith("tcp://") or ":" not in address[len("tcp://"):]:
        raise ConfigError(f"--learner must look like tcp://HOST:PORT, got {address!r}")
    host, _, port = address[len("tcp://"):].rpartition(":")
    if not port.isdigit() or not 1 <= int(port) <= 65534:
        raise ConfigError(f"--learner port must be in [1, 65534], got {port!r}")
    return f"tcp://{host}:{port}", f"tcp://{host}:{int(port) + 1}"


def episode_versions(seg: Any, v_min: int, v_max: int) -> Tuple[int, int]:
    """(oldest, newest) weights version of a segment returned by a collect that played with versions v_min..v_max; a
    segment begun in an earlier collect (``seg.played_from``: UniZero's run on across calls) reaches back to it."""
    oldest = min(v_min, v_max)
    if seg.played_from is not None:
        oldest = min(oldest, int(seg.played_from))
    return oldest, max(v_min, v_max)


class Actor:
    """One self-play process.

    Args:
        cfg: a compiled config (the learner's).
        learner: ``tcp://HOST:PORT`` of the learner's episode socket.
        actor_id: this actor's number (logs and the learner's per-actor status).
        weights_file: the learner's weights file when this host shares its file system; None: weights over PUB.
        parent_pid: exit when this process (the supervisor) is gone.
    """

    def __init__(self, cfg: Any, learner: str, actor_id: int, weights_file: Optional[str] = None,
                 parent_pid: Optional[int] = None, logger: Optional[RunLogger] = None) -> None:
        self.cfg, self.pcfg = cfg, cfg.policy
        self.logger = logger  # Redis only: this actor's status and spectated games under the learner's run id
        self.actor_id = int(actor_id)
        self.instance = random.SystemRandom().getrandbits(63)
        self.weights_file = weights_file
        self.parent_pid = parent_pid
        self.parts = build_components(cfg)
        self.policy, self.collector = self.parts["policy"], self.parts["collector"]
        push_addr, sub_addr = derived_ports(learner)
        self._learner_address = push_addr
        self.ctx = zmq.Context()
        self.push = self.ctx.socket(zmq.PUSH)
        self.push.setsockopt(zmq.SNDHWM, int(self.pcfg.socket_hwm))
        self.push.setsockopt(zmq.IMMEDIATE, 1)  # queue only to a live connection: a gone learner makes sends wait
        self.push.setsockopt(zmq.LINGER, 0)
        self.push.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
        self.push.connect(push_addr)
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.RCVHWM, 8)  # a slow actor loses old weights frames, never piles them up
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
        kinds = [wire.Kind.CONTROL, wire.Kind.WEIGHTS_ANNOUNCE] + ([] if weights_file else [wire.Kind.WEIGHTS])
        for kind in kinds:
            self.sub.setsockopt(zmq.SUBSCRIBE, wire.kind_prefix(kind))
        self.sub.connect(sub_addr)
        self.model_state = {k: v for k, v in self.policy.state_dict()["model"].items()}
        self.version = -1  # the weights version playing now (-1: none yet)
        self.learner_instance: Optional[int] = None
        self.control = wire.Control.PAUSE  # until the learner is heard
        self.heard_at = 0.0
        self.file_stamp: Optional[tuple] = None
        self.pending_weights: Optional[Dict[str, np.ndarray]] = None
        self.pending_meta: Dict[str, float] = {}
        self.stop_requested = False
        self.episode_seq = 0
        self.env_steps = 0
        self.episodes = 0
        self.pickup_latency = -1.0
        self.times = dict(play_s=0.0, paused_s=0.0, send_wait_s=0.0, load_s=0.0)
        self.drops = 0
        self.max_bytes = 64 * 1024 * 1024 + sum(v.numel() * v.element_size() for v in self.model_state.values()) * 2

    # ------------------------------------------------------------------ learner messages
    def _poll_learner(self) -> None:
        """Read every waiting frame from the learner's PUB socket (control, announcements, weights)."""
        while True:
            try:
                frame = self.sub.recv(zmq.NOBLOCK)
            except zmq.Again:
                break
            try:
                msg = wire.decode(frame, self.max_bytes,
                                  (wire.Kind.CONTROL, wire.Kind.WEIGHTS_ANNOUNCE, wire.Kind.WEIGHTS))
                if msg.kind == wire.Kind.CONTROL:
                    self.control = int(msg.meta["state"])
                    self.heard_at = time.monotonic()
                    if self.learner_instance != msg.meta["learner_instance"]:
                        self.learner_instance = int(msg.meta["learner_instance"])
                        self._send(wire.encode(wire.Kind.HELLO, dict(actor_id=self.actor_id,
                                                                     actor_instance=self.instance)), wait_s=0.0)
                elif msg.kind == wire.Kind.WEIGHTS and not self.weights_file:
                    if (msg.meta["learner_instance"], msg.meta["version"]) != (self.learner_instance, self.version):
                        self.pending_weights = wire.decode_weights(msg, self.model_state)
                        self.pending_meta = dict(msg.meta)
            except wire.WireError:
                self.drops += 1

    def _check_weights_file(self) -> None:
        """A stat per call; the file is replaced atomically, so a changed stamp is a whole new file."""
        try:
            st = os.stat(self.weights_file)
        except FileNotFoundError:
            return
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self.file_stamp:
            return
        try:
            state = load_checkpoint(self.weights_file)
        except CheckpointError:  # (a file that disappeared between the stat and the read: the next poll sees it)
            return
        self.file_stamp = stamp
        self.pending_weights = state["policy"]["model"]
        self.pending_meta = dict(version=int(state["weights_version"]), published_at=float(state["published_at"]),
                                 learner_instance=int(state["learner_instance"]))

    def _maybe_swap_weights(self) -> bool:
        """Load weights that arrived (between moves or collects: never inside a search); True if it did."""
        if self.weights_file:
            self._check_weights_file()
        if self.pending_weights is None:
            return False
        t0 = time.perf_counter()
        weights = {k: torch.as_tensor(v) for k, v in self.pending_weights.items()}
        self.policy.load_state_dict(dict(model=weights))
        updated = getattr(self.collector, "weights_updated", None)
        if updated is not None:  # a collector that caches predictions drops them
            updated()
        if self.version < 0:  # the supervisor's tests and a user's terminal read this line
            print(f"actor {self.actor_id}: playing, weights version {int(self.pending_meta['version'])}", flush=True)
        self.version = int(self.pending_meta["version"])
        self.pickup_latency = max(0.0, time.time() - float(self.pending_meta["published_at"]))
        self.pending_weights = None
        self.times["load_s"] += time.perf_counter() - t0
        return True

    def _learner_gone(self) -> bool:
        return time.monotonic() - self.heard_at > float(self.pcfg.learner_timeout_s)

    def _should_exit(self) -> bool:
        if self.parent_pid is not None and os.getppid() != self.parent_pid:
            return True  # the supervisor died (kill -9): nobody would stop this actor
        return self.stop_requested or self.control == wire.Control.STOP

    def _wait_while_paused(self) -> None:
        """Block while the learner says pause, or is not heard from (then its reconnect is ZeroMQ's job)."""
        t0 = time.perf_counter()
        while not self._should_exit() and (self.control == wire.Control.PAUSE or self._learner_gone()
                                           or self.version < 0):
            time.sleep(0.02)
            self._poll_learner()
            self._maybe_swap_weights()
        self.times["paused_s"] += time.perf_counter() - t0

    def _send(self, frame: bytes, wait_s: Optional[float] = None) -> bool:
        """PUSH a frame; wait while the learner is away (None: until sent or the actor must exit)."""
        t0 = time.perf_counter()
        try:
            while True:
                try:
                    self.push.send(frame, zmq.NOBLOCK)
                    return True
                except zmq.Again:
                    if wait_s is not None and time.perf_counter() - t0 >= wait_s or self._should_exit():
                        return False
                    time.sleep(0.01)
                    self._poll_learner()
        finally:
            self.times["send_wait_s"] += time.perf_counter() - t0

    # ------------------------------------------------------------------ the loop
    def run(self, max_collects: Optional[int] = None) -> int:
        """Collect and send until the learner says stop, a signal arrives or ``max_collects``; returns episodes sent."""
        self._send(wire.encode(wire.Kind.HELLO, dict(actor_id=self.actor_id, actor_instance=self.instance)), 0.0)
        collects = 0
        try:
            while not self._should_exit() and (max_collects is None or collects < max_collects):
                self._poll_learner()
                self._maybe_swap_weights()
                self._wait_while_paused()
                if self._should_exit():
                    break
                v_min = v_max = self.version

                swap_inside = getattr(self.collector, "progress_between_searches", True)  # (a user's collector)

                def between_moves(_moves: int) -> None:
                    nonlocal v_max
                    self._poll_learner()
                    if swap_inside and self._maybe_swap_weights():
                        v_max = self.version
                    if self.control == wire.Control.PAUSE:
                        self._wait_while_paused()

                t0 = time.perf_counter()
                paused_before = self.times["paused_s"] + self.times["load_s"]
                segments, _ = self.collector.collect(train_iter=max(self.version, 0), should_stop=self._should_exit,
                                                     progress=between_moves,
                                                     on_move=self.logger.move_hook if self.logger else None)
                self.times["play_s"] += time.perf_counter() - t0 - (self.times["paused_s"] + self.times["load_s"]
                                                                     - paused_before)
                if self._should_exit():
                    break  # a collect cut short is dropped whole
                for seg in segments:
                    frame = wire.encode_episode(seg, self.actor_id, self.instance, self.episode_seq,
                                                *episode_versions(seg, v_min, v_max))
                    if not self._send(frame):
                        break
                    self.episode_seq += 1
                    self.episodes += 1
                    self.env_steps += len(seg)
                self._send(wire.encode(wire.Kind.ACTOR_STATUS, dict(
                    actor_id=self.actor_id, actor_instance=self.instance, env_steps=self.env_steps,
                    episodes=self.episodes, version=self.version, pickup_latency_s=self.pickup_latency,
                    **self.times)), wait_s=0.0)
                if self.logger is not None:
                    self.logger.status(env_steps=self.env_steps, weights_version=max(self.version, 0))
                collects += 1
        finally:
            self.push.close(0)
            self.sub.close(0)
            self.ctx.term()
        return self.episodes


def run_actor(cfg_path: str, learner: str, actor_id: int, seed: Optional[int] = None,
              weights_file: Optional[str] = None, parent_pid: Optional[int] = None, device: Optional[str] = None,
              role: str = "actor", run_id: Optional[str] = None) -> int:
    """``python -m lzlite.entry --role actor`` (or ``reanalyzer``): an actor / a reanalyze process for the learner at
    ``learner``; returns its exit code.

    SIGINT / SIGTERM end it after the move (or the reanalyze request) in hand (a collect cut short is not sent).
    """
    main_config, create_config = load_config_file(cfg_path)
    cfg = compile_config(main_config, create_config, seed=seed)
    if device is not None:
        cfg.policy.device = device
    set_global_seed(cfg.seed)
    if cfg.policy.num_threads > 0:
        torch.set_num_threads(cfg.policy.num_threads)
    cls = Actor
    if role == "reanalyzer":
        from lzlite.cluster.reanalyze import Reanalyzer  # (it subclasses Actor: imported here, not at the top)

        cls = Reanalyzer
    logger = None
    if role == "actor" and run_id and cfg.logger.redis_url:  # the learner's run id: report under its run
        logger = RunLogger(os.path.dirname(os.path.abspath(cfg_path)), cfg=cfg, role="actor", actor_id=actor_id,
                           run_id=run_id, progress=False)
    actor = cls(cfg, learner, actor_id, weights_file=weights_file, parent_pid=parent_pid, logger=logger)

    def on_signal(signum: int, _frame: Any) -> None:
        actor.stop_requested = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    try:
        actor.run()
    finally:
        if logger is not None:
            logger.close()
    return 0
