"""A graceful stop: SIGTERM / SIGINT write last.pt and end the run within seconds; --resume continues exactly.
The progress bar moves during a collect."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

import lzlite
from lzlite.config import compile_config
from lzlite.entry import train_alphazero
from lzlite.entry.loop import build_components
from lzlite.entry.stop import TrainingStopped
from lzlite.telemetry.logger import RunLogger
from lzlite.worker.checkpoint import load_checkpoint
from lzlite.worker.collector import Collector
from lzlite.worker.learner import Learner
from tiny_configs import tiny_config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A run that would not end by itself and writes no checkpoint of its own: the only last.pt is the stop's.
_ENDLESS_CONFIG = f"""
import sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from tiny_configs import tiny_config

main_config, create_config = tiny_config("alphazero", exp_name="endless", save_ckpt_freq=10**6, eval_freq=10**6)
main_config["max_env_step"] = 10**8
"""


def _params(policy):
    return [p.detach().clone() for p in policy.model.parameters()]


def _entry(args, cwd, **kwargs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "lzlite.entry", *args], cwd=cwd, env=env, **kwargs)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_writes_a_resumable_checkpoint_and_exits_within_seconds(tmp_path, signum, code):
    (tmp_path / "endless.py").write_text(_ENDLESS_CONFIG)
    run = tmp_path / "run"
    args = ["--cfg", "endless.py", "--run-dir", str(run)]
    with open(tmp_path / "stderr.txt", "w") as err:
        proc = _entry(args, tmp_path, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 120
        # learning has started once the bar's postfix shows a learner step
        while not re.search(r"iter=[1-9]", (tmp_path / "stderr.txt").read_text()):
            assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()[-2000:]
            assert time.monotonic() < deadline, "the run did not start learning"
            time.sleep(0.2)
        proc.send_signal(signum)
        t0 = time.monotonic()
        rc = proc.wait(timeout=60)
        took = time.monotonic() - t0
    stderr = (tmp_path / "stderr.txt").read_text()
    assert rc == code, stderr[-2000:]
    assert took < 10, f"took {took:.1f} s to stop"
    last = stderr.strip().splitlines()[-1]
    assert f"stopped by {signal.Signals(signum).name}" in last and str(run / "ckpt" / "last.pt") in last
    assert "python -m lzlite.entry --cfg endless.py --run-dir" in last and last.endswith("--resume"), last
    assert not [f for f in os.listdir(run / "ckpt") if ".tmp" in f]
    first = load_checkpoint(str(run / "ckpt" / "last.pt"))["counters"]
    assert first["train_iter"] > 0 and first["env_steps"] > 0

    # --resume continues from it (told to stop a few learner steps later)
    r = _entry(args + ["--resume", "--max-train-iter", str(first["train_iter"] + 20)], tmp_path,
               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = r.communicate(timeout=300)
    assert r.returncode == 0, err[-2000:]
    second = load_checkpoint(str(run / "ckpt" / "last.pt"))["counters"]
    assert second["train_iter"] == first["train_iter"] + 20 and second["env_steps"] > first["env_steps"]


def _stop_at(monkeypatch, cls, method, when):
    """Raise SIGTERM in this process right after ``cls.method`` returns whenever ``when(self, calls)`` holds."""
    original = getattr(cls, method)
    calls = []

    def spy(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        calls.append(1)
        if when(self, len(calls)):
            signal.raise_signal(signal.SIGTERM)
        return out

    monkeypatch.setattr(cls, method, spy)


def test_a_stop_between_learner_steps_resumes_exactly(tmp_path, monkeypatch):
    full = train_alphazero(tiny_config("alphazero"), seed=1, max_env_step=100, run_dir=str(tmp_path / "full"),
                           progress=False)
    before = signal.getsignal(signal.SIGTERM)
    with monkeypatch.context() as m:
        _stop_at(m, Learner, "train", lambda learner, calls: learner.train_iter == 5)  # inside the first phase
        with pytest.raises(TrainingStopped) as e:
            train_alphazero(tiny_config("alphazero"), seed=1, max_env_step=100, run_dir=str(tmp_path / "split"),
                            progress=False)
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are restored
    assert e.value.exit_code == 143 and e.value.train_iter == 5 and isinstance(e.value, lzlite.TrainingStopped)
    counters = load_checkpoint(e.value.checkpoint)["counters"]
    assert counters["train_iter"] == 5 and counters["updates_left"] > 0  # the phase's other steps come first
    resumed = train_alphazero(tiny_config("alphazero"), seed=1, max_env_step=100, run_dir=str(tmp_path / "split"),
                              resume=True, progress=False)
    assert all(torch.equal(x, y) for x, y in zip(_params(full), _params(resumed)))


def test_a_stop_during_a_collect_drops_it_and_resumes_exactly(tmp_path, monkeypatch):
    full = train_alphazero(tiny_config("alphazero"), seed=1, max_env_step=150, run_dir=str(tmp_path / "full"),
                           progress=False)
    moves = []
    original = Collector.collect

    def collect(self, *args, progress=None, **kwargs):  # a SIGTERM after the 3rd move of the second collect
        moves.append([])

        def count(n):
            moves[-1].append(n)
            progress(n)
            if len(moves) == 2 and len(moves[-1]) == 3:
                signal.raise_signal(signal.SIGTERM)

        return original(self, *args, progress=count, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(Collector, "collect", collect)
        with pytest.raises(TrainingStopped) as e:
            train_alphazero(tiny_config("alphazero"), seed=1, max_env_step=150, run_dir=str(tmp_path / "split"),
                            progress=False)
    assert len(moves) == 2 and len(moves[1]) == 3  # no move after the signal
    counters = load_checkpoint(e.value.checkpoint)["counters"]
    assert counters["env_steps"] == moves[0][-1] and counters["updates_left"] == 0  # the state before the collect
    resumed = train_alphazero(tiny_config("alphazero"), seed=1, max_env_step=150, run_dir=str(tmp_path / "split"),
                              resume=True, progress=False)
    assert all(torch.equal(x, y) for x, y in zip(_params(full), _params(resumed)))


def test_should_stop_ends_a_collect_at_the_next_move_and_progress_counts_its_moves():
    parts = build_components(compile_config(*tiny_config("alphazero", n_episode=10**6), seed=0))
    seen = []
    segments, stats = parts["collector"].collect(should_stop=lambda: len(seen) >= 3, progress=seen.append)
    assert seen == [8, 16, 24] and stats["env_steps"] == 24  # 8 games, 3 moves each: none finished
    assert segments == []
    seen.clear()
    segments, stats = parts["collector"].collect(n_episode=8, progress=seen.append)  # to the end
    assert seen == sorted(seen) and seen[-1] == stats["env_steps"] == sum(len(s) for s in segments)


def test_the_progress_bar_moves_during_a_collect(tmp_path, monkeypatch):
    positions, during = [], []
    original_update, original_collect = RunLogger.update, Collector.collect

    def update(self, n, postfix=None):
        positions.append(n)
        return original_update(self, n, postfix)

    def collect(self, *args, **kwargs):
        start = len(positions)
        out = original_collect(self, *args, **kwargs)
        during.append(positions[start:])
        return out

    monkeypatch.setattr(RunLogger, "update", update)
    monkeypatch.setattr(Collector, "collect", collect)
    train_alphazero(tiny_config("alphazero"), seed=0, max_env_step=100, run_dir=str(tmp_path), progress=True)
    first = during[0]
    assert len(first) > 3 and first == sorted(first) and 0 < first[0] < first[-1]
    assert np.all(np.diff(during[1]) > 0) and during[1][0] > first[-1]
