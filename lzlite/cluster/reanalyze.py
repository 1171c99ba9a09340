"""Reanalyze over ZeroMQ: the learner's side (``ReanalyzeScheduler``) and the reanalyze process (``Reanalyzer``).

The learner sends batches of stored positions (their observations and legal masks) to reanalyze processes on a
PUSH socket (``cluster_port + 2``), sweeping the buffer from its oldest targets on, at
``reanalyze_positions_per_step`` positions per learner step. A reanalyzer searches them with the latest published
weights through the policy's own ``reanalyze_fn`` (the rules of the synchronous loop's ``reanalyze_ratio``: no
root noise, the stored legal masks; value and policy targets, or values only where the policy gives no policy)
and PUSHes the refreshed targets back to the learner's episode port. The learner writes them into the buffer
where the positions still hold the rows it sent (``ReplayBuffer.is_live_sampleable``) and tracks, per stored
row, the weights version its targets come from: the age of the sampled targets is logged.
"""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

import numpy as np
import zmq

from lzlite.cluster import wire
from lzlite.cluster.actor import Actor
from lzlite.config import ConfigError

__all__ = ["ReanalyzeScheduler", "Reanalyzer"]


class ReanalyzeScheduler:
    """The learner's side: which positions to send, writing replies back, the targets' age.

    Args:
        ctx: the learner's ZeroMQ context.
        address: where the request PUSH socket binds (``tcp://*:PORT+2``).
        buffer: the replay buffer.
        spec: the run's episode spec (the observation layout of requests).
        per_step: positions to send per learner step.
        batch: positions per request.
        instance: the learner's instance id (a reply to another learner's request is dropped).
    """

    def __init__(self, ctx: zmq.Context, address: str, buffer: Any, spec: wire.EpisodeSpec, per_step: float,
                 batch: int, instance: int) -> None:
        self.buffer, self.spec, self.per_step, self.batch, self.instance = buffer, spec, per_step, int(batch), instance
        self.sock = ctx.socket(zmq.PUSH)
        self.sock.setsockopt(zmq.SNDHWM, 2)  # busy reanalyzers: requests wait here, at most two
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind(address)
        self.version_at: Optional[np.ndarray] = None  # [C] int64 weights version of each row's targets
        self.cursor = 0  # absolute position the sweep continues from
        self.owed = 0.0  # positions owed to the schedule
        self.next_id = 0
        self.sent = self.written = self.stale = 0
        self.ages: List[float] = []

    def _versions(self) -> np.ndarray:
        if self.version_at is None:
            self.version_at = np.zeros(self.buffer.capacity, dtype=np.int64)
        return self.version_at

    def on_pushed(self, versions: List[int]) -> None:
        """The last ``len(versions)`` segments pushed: their rows' targets are as old as their weights."""
        first, end = self.buffer.live_segments()
        k = min(len(versions), len(first))
        at = self._versions()
        for f, e, v in zip(first[len(first) - k:], end[len(end) - k:], versions[len(versions) - k:]):
            at[np.arange(f, e + 1) % self.buffer.capacity] = v

    def maybe_send(self, steps: int, version: int) -> None:
        """After ``steps`` learner steps: send what the schedule owes (what the reanalyzers cannot take yet waits)."""
        self.owed = min(self.owed + self.per_step * steps, 4.0 * self.batch)
        while self.owed >= self.batch:
            positions = self._next_positions()
            if positions.size == 0:
                return
            rows = self.buffer.read_rows(positions)
            frame = wire.encode(wire.Kind.REANALYZE_REQUEST,
                                dict(learner_instance=self.instance, request_id=self.next_id, version=version),
                                [("positions", positions), ("obs", rows["obs"]), ("legal_mask", rows["legal_mask"])])
            try:
                self.sock.send(frame, zmq.NOBLOCK)
            except zmq.Again:
                return  # the reanalyzers are busy: the positions go again next time
            self.cursor = int(positions[-1]) + 1
            self.next_id += 1
            self.sent += positions.size
            self.owed -= positions.size

    def _next_positions(self) -> np.ndarray:
        """Up to ``batch`` sampleable positions from the cursor on, wrapping to the oldest (the stalest targets)."""
        first, end = self.buffer.live_segments()
        if first.size == 0:
            return np.zeros(0, np.int64)
        lens = end - first
        moves = np.repeat(first, lens) + (np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens))
        moves = moves[self.buffer.is_live_sampleable(moves)]
        if moves.size == 0:
            return moves
        start = int(np.searchsorted(moves, self.cursor))
        return np.concatenate([moves[start:], moves[:start]])[: self.batch]

    def apply(self, msg: wire.Message) -> None:
        """Write a reply's targets where the positions still hold the rows that were sent."""
        if msg.meta["learner_instance"] != self.instance:
            return
        pos = msg.arrays["positions"]
        live = self.buffer.is_live_sampleable(pos)
        self.stale += int((~live).sum())
        if not live.any():
            return
        policy = np.array(msg.arrays["policy"][live]) if msg.meta["has_policy"] else None
        self.buffer.write_targets(pos[live], np.array(msg.arrays["root_value"][live]), policy)
        self._versions()[pos[live] % self.buffer.capacity] = int(msg.meta["version"])
        self.written += int(live.sum())

    def note_sample(self, indices: np.ndarray, train_iter: int) -> None:
        """The age (learner steps) of the targets of a sampled batch's rows."""
        self.ages.append(float(train_iter - self._versions()[np.asarray(indices) % self.buffer.capacity].mean()))

    def stats(self) -> Dict[str, float]:
        out = dict(reanalyze_sent=float(self.sent), reanalyze_written=float(self.written),
                   reanalyze_stale=float(self.stale))
        if self.ages:
            out["target_age_mean"] = float(np.mean(self.ages))
            self.ages.clear()
        return out

    def close(self) -> None:
        self.sock.close(0)


class Reanalyzer(Actor):
    """A reanalyze process: takes requests from the learner, searches them with the latest weights, replies.

    Args: those of ``Actor`` (``actor_id`` is this reanalyzer's number).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fn = self.policy.reanalyze_fn()
        if self.fn is None:
            raise ConfigError(f"policy '{self.cfg.create.policy.type}' has no reanalyze function (reanalyze_fn): "
                              f"set num_reanalyzers=0")
        self.spec = wire.EpisodeSpec(tuple(self.parts["venv"].obs_shape), self.parts["venv"].observe().dtype,
                                     int(self.parts["venv"].num_actions), 1)
        host_port = self._learner_address.rpartition(":")
        self.pull = self.ctx.socket(zmq.PULL)
        self.pull.setsockopt(zmq.RCVHWM, 2)
        self.pull.setsockopt(zmq.LINGER, 0)
        self.pull.connect(f"{host_port[0]}:{int(host_port[2]) + 2}")
        self.replies = 0

    def run(self, max_requests: Optional[int] = None) -> int:
        """Serve requests until the learner says stop or a signal arrives; returns the requests answered."""
        self._send(wire.encode(wire.Kind.HELLO, dict(actor_id=self.actor_id, actor_instance=self.instance)), 0.0)
        poller = zmq.Poller()
        poller.register(self.pull, zmq.POLLIN)
        try:
            while not self._should_exit() and (max_requests is None or self.replies < max_requests):
                self._poll_learner()
                self._maybe_swap_weights()  # between searches only: a request is searched with one version
                if self.version < 0 or not poller.poll(100):
                    continue
                frame = self.pull.recv()
                try:
                    msg = wire.decode(frame, 1 << 30, (wire.Kind.REANALYZE_REQUEST,))
                    wire.check_reanalyze_request(msg, self.spec)
                except wire.WireError:
                    self.drops += 1
                    continue
                t0 = time.perf_counter()
                values, policies = self.fn(np.array(msg.arrays["obs"]), np.array(msg.arrays["legal_mask"]))
                self.times["play_s"] += time.perf_counter() - t0
                arrays = [("positions", np.array(msg.arrays["positions"])),
                          ("root_value", np.asarray(values, dtype=np.float32))]
                if policies is not None:
                    arrays.append(("policy", np.asarray(policies, dtype=np.float32)))
                reply = wire.encode(wire.Kind.REANALYZE_REPLY, dict(
                    learner_instance=int(msg.meta["learner_instance"]), request_id=int(msg.meta["request_id"]),
                    version=self.version, reanalyzer_id=self.actor_id, has_policy=int(policies is not None)), arrays)
                if self._send(reply):
                    self.replies += 1
        finally:
            self.pull.close(0)
            self.push.close(0)
            self.sub.close(0)
            self.ctx.term()
        return self.replies
