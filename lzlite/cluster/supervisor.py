"""The supervisor: starts N actor (and M reanalyze) processes beside the learner and restarts any that dies.

A process that exits with code 0 left on the learner's STOP and is not restarted; any other exit (a crash, a
kill) is restarted at once.

Each actor is ``python -m lzlite.entry --cfg RUN_DIR/config.py --role actor ...`` in its own process group (a
Ctrl-C in the terminal reaches the learner only; the learner saves, then the supervisor stops the actors with SIGTERM and,
after a grace period, SIGKILL). Its output goes to ``RUN_DIR/actors/actor_<k>.log``; starts, exits and restarts are
written to ``RUN_DIR/actors/supervisor.log`` with process ids and times.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import List, Optional, Sequence

from lzlite.config.compile import MAX_SEED

__all__ = ["Supervisor", "actor_seed"]

_SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds lzlite/


def actor_seed(seed: int, actor_id: int, start: int) -> int:
    """A seed per actor and per start of it: a restarted actor does not replay the games it played before."""
    return (seed + 7919 * (actor_id + 1) + 104729 * start) % MAX_SEED


class Supervisor:
    """Runs ``num_actors`` actors for the learner at ``addresses`` and keeps them running until ``stop``.

    Args:
        cfg_path: the run's resolved config (``RUN_DIR/config.py``).
        addresses: the learner's ``tcp://HOST:PORT``, one per DDP rank: actor k joins rank k mod their number
            (reanalyze processes join rank 0).
        num_actors: how many.
        seed: the run's seed (each actor's is derived from it, ``actor_seed``).
        weights_file: the learner's weights file (the actors share its file system).
        log_dir: where the actors' logs and the supervisor's log go.
        device: a torch device for the actors (None: the config's).
    """

    def __init__(self, cfg_path: str, addresses: Sequence[str], num_actors: int, seed: int, weights_file: str,
                 log_dir: str, device: Optional[str] = None, num_reanalyzers: int = 0,
                 run_id: Optional[str] = None) -> None:
        self.cfg_path, self.addresses = cfg_path, list(addresses)
        self.run_id = run_id  # the learner's run id in Redis: actors report their status and games under it
        self.num_actors, self.seed = int(num_actors), int(seed)
        self.weights_file, self.log_dir, self.device = weights_file, log_dir, device
        # (role, its number): actors 0..N-1, then the reanalyze processes
        self.roles = [("actor", k) for k in range(self.num_actors)] + [("reanalyzer", k)
                                                                        for k in range(int(num_reanalyzers))]
        self.procs: List[Optional[subprocess.Popen]] = [None] * len(self.roles)
        self.starts = [0] * len(self.roles)
        self.restarts = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="lzlite-supervisor", daemon=True)
        os.makedirs(log_dir, exist_ok=True)
        self._log = open(os.path.join(log_dir, "supervisor.log"), "a", encoding="utf-8")

    def _note(self, text: str) -> None:
        self._log.write(f"{time.time():.3f} {text}\n")
        self._log.flush()

    def _spawn(self, i: int) -> None:
        role, k = self.roles[i]
        address = self.addresses[k % len(self.addresses)] if role == "actor" else self.addresses[0]
        cmd = [sys.executable, "-m", "lzlite.entry", "--cfg", self.cfg_path, "--role", role, "--learner",
               address, "--actor-id", str(k), "--seed", str(actor_seed(self.seed, i, self.starts[i])),
               "--weights-file", self.weights_file, "--parent-pid", str(os.getpid())]
        if self.device is not None:
            cmd += ["--device", self.device]
        if self.run_id is not None:
            cmd += ["--run-id", self.run_id]
        env = dict(os.environ)  # the actors import this lzlite and zoo, installed or not
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_SOURCE_ROOT, env.get("PYTHONPATH", "")) if p)
        with open(os.path.join(self.log_dir, f"{role}_{k}.log"), "ab") as out:
            self.procs[i] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                             start_new_session=True, env=env)
        self.starts[i] += 1
        self._note(f"{role} {k} started pid {self.procs[i].pid}")

    def start(self) -> None:
        for i in range(len(self.roles)):
            self._spawn(i)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.wait(0.1):
            for i, proc in enumerate(self.procs):
                # exit code 0: the process left on the learner's STOP (the run's env steps are in); no restart
                if proc is None or proc.poll() in (None, 0) or self._stopping.is_set():
                    continue
                role, k = self.roles[i]
                self._note(f"{role} {k} pid {proc.pid} exited with {proc.returncode}; restarting")
                self.restarts += 1
                self._spawn(i)

    def pids(self) -> List[int]:
        return [p.pid for p in self.procs if p is not None]

    def stop(self, grace_s: float = 10.0, own_exit_s: float = 3.0) -> None:
        """Give the actors ``own_exit_s`` to exit on the learner's STOP, then SIGTERM the rest, wait up to
        ``grace_s`` and SIGKILL what is left."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        deadline = time.monotonic() + own_exit_s
        while time.monotonic() < deadline and any(p is not None and p.poll() is None for p in self.procs):
            time.sleep(0.05)
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for k, proc in enumerate(self.procs):
            if proc is None:
                continue
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self._note(f"{self.roles[k][0]} {self.roles[k][1]} pid {proc.pid} stopped ({proc.returncode})")
        self._log.close()
