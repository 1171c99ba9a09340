"""DDP on CPU (gloo, 2 processes): collectives, identical learners, torchrun end to end, dead ranks.

Multi-process tests start real processes: ``ddp_worker.py`` with torchrun's environment set by hand
(free port from a bound socket), or ``python -m torch.distributed.run`` for the command line.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch

from lzlite.config import ConfigError
from lzlite.distributed import ddp

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "ddp_worker.py")
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
WORLD = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LZLITE_DDP_", "TORCHELASTIC"))}
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE"):
        env.pop(k, None)
    env.update(OMP_NUM_THREADS="1", PYTHONPATH=REPO + os.pathsep + env.get("PYTHONPATH", ""), **extra)
    return env


def _spawn(scenario: str, out_dir: str, *args: str, **extra: str) -> list:
    """Start WORLD ranks of ddp_worker.py with torchrun's environment variables."""
    port = str(_free_port())
    procs = []
    for rank in range(WORLD):
        env = _env(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, **extra)
        procs.append(subprocess.Popen([sys.executable, WORKER, scenario, out_dir, *args], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    return procs


def _wait_all(procs: list, timeout: float = 60.0) -> list:
    outs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        outs.append(out)
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-3000:]
    return outs


def _read(out_dir, rank) -> dict:
    name = f"rank{rank}" if isinstance(rank, int) else rank
    with open(os.path.join(out_dir, f"{name}.json")) as f:
        return json.load(f)


# --------------------------------------------------------------------------- single process
def test_without_torchrun_everything_is_single_process(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LZLITE_DDP_BACKEND", "LZLITE_DDP_TIMEOUT_S"):
        monkeypatch.delenv(k, raising=False)
    assert not ddp.is_ddp_enabled() and ddp.get_rank() == 0 and ddp.get_world_size() == 1
    assert ddp.get_local_rank() == 0
    ddp.check_launch(batch_size=7)  # any batch size splits over one process
    t = torch.tensor([1.5, 2.0])
    assert ddp.ddp_all_reduce_sum(t) is t and ddp.ddp_all_reduce_sum(3) == 3
    assert ddp.ddp_all_reduce_mean(4) == 4.0 and ddp.ddp_all_reduce_mean({"loss": 2}) == {"loss": 2.0}
    assert ddp.ddp_all_true(False) is False
    ddp.ddp_synchronize()  # no-op


@pytest.mark.parametrize("var, value", [("LZLITE_DDP_BACKEND", "gloo"), ("LZLITE_DDP_TIMEOUT_S", "30")])
def test_ddp_only_setting_without_torchrun_is_an_error(monkeypatch, var, value):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError, match=f"{var}.*not launched by torchrun"):
        ddp.check_launch()


def test_cli_rejects_ddp_setting_without_torchrun(tmp_path):
    cfg = _write_tiny_config(tmp_path)
    res = subprocess.run([sys.executable, "-m", "lzlite.entry", "--cfg", cfg, "--run-dir", str(tmp_path / "run")],
                         env=_env(LZLITE_DDP_BACKEND="gloo"), capture_output=True, text=True, timeout=60, cwd=REPO)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "LZLITE_DDP_BACKEND set but this process was not launched by torchrun" in res.stderr
    assert not (tmp_path / "run" / "ckpt").exists()  # no work was done


def test_batch_not_divisible_by_world_size_is_an_error_at_startup(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "1")
    with pytest.raises(ConfigError, match=r"batch_size=32 must be a positive multiple of the world size 3.*33"):
        ddp.check_launch(batch_size=32)
    ddp.check_launch(batch_size=33)


def test_bad_torchrun_environment_is_an_error(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "2")
    with pytest.raises(ConfigError, match="RANK=2.*WORLD_SIZE=2"):
        ddp.check_launch()
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LZLITE_DDP_BACKEND", "mpi")
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "1")
    with pytest.raises(ConfigError, match="LZLITE_DDP_BACKEND='mpi'"):
        ddp.check_launch()
    monkeypatch.setenv("LZLITE_DDP_BACKEND", "gloo")
    monkeypatch.setenv("LZLITE_DDP_TIMEOUT_S", "-5")
    with pytest.raises(ConfigError, match="LZLITE_DDP_TIMEOUT_S='-5'"):
        ddp.check_launch()


# --------------------------------------------------------------------------- two processes
@pytest.fixture(scope="module")
def utils_results(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("utils"))
    _wait_all(_spawn("utils", out))
    return [_read(out, r) for r in range(WORLD)]


def test_rank_and_world_size(utils_results):
    assert [r["rank"] for r in utils_results] == [0, 1]
    assert all(r["world"] == 2 and r["enabled"] for r in utils_results)
    assert [r["local_rank"] for r in utils_results] == [0, 1]


def test_all_reduce_sum_tensors_and_numbers(utils_results):
    for r in utils_results:
        assert r["int_sum"] == 3 + 4 and r["int_type"] == "int"
        assert r["big_int_sum"] == 2 * (2**53 + 1) + 1  # exact: ints reduce as int64, not float64
        assert r["float_sum"] == 0.5 + 1.0
        assert r["np_int_sum"] == 30
        assert r["tensor_sum"] == [3.0, 6.0] and r["tensor_dtype"] == "torch.float32"
    assert [r["input_unchanged"] for r in utils_results] == [[1.0], [2.0]]  # inputs are not reduced in place


def test_all_reduce_mean_and_agreement(utils_results):
    for r in utils_results:
        assert r["mean"] == 0.5
        assert r["tensor_mean"] == [1.0]
        assert r["dict_mean"] == {"acc": 0.25, "loss": 1.5}
        assert r["all_true_mixed"] is False and r["all_true_all"] is True


def test_update_per_collect_agrees_when_ranks_collect_different_counts(utils_results):
    # rank 0 collected 12 transitions, rank 1 collected 28: alone they would take 3 and 7 steps
    assert [r["upc_local"] for r in utils_results] == [3, 7]
    assert [r["upc"] for r in utils_results] == [10, 10]  # ceil((12 + 28) * 0.25)


@pytest.fixture(scope="module")
def learner_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("learner")
    _wait_all(_spawn("learner", str(out), "muzero", "alphazero"))  # one launch for both: start-up is the cost
    return out


@pytest.mark.parametrize("algo", ["muzero", "alphazero"])
def test_learner_parameters_bit_identical_across_ranks(learner_dir, algo):
    r0, r1 = (_read(learner_dir, f"{algo}_rank{r}") for r in range(WORLD))
    assert r0["train_iter"] == r1["train_iter"] == 4
    assert r0["data_fingerprint"] != r1["data_fingerprint"]  # each rank trained on its own games ...
    assert r0["losses"] != r1["losses"]
    assert r1["after_wrap_differs"] and not r0["after_wrap_differs"]  # ... from rank 0's broadcast weights
    s0, s1 = (torch.load(learner_dir / f"{algo}_rank{r}.pt") for r in range(WORLD))
    for a, b in zip(s0["params"] + s0["target"], s1["params"] + s1["target"]):
        assert torch.equal(a, b)  # bit-identical: gradients were averaged over ranks


def _write_tiny_config(tmp_path, algo: str = "muzero") -> str:
    path = tmp_path / "tiny_cfg.py"
    path.write_text(
        "import sys\n"
        f"sys.path.insert(0, {os.path.join(REPO, 'tests', 'entry')!r})\n"
        "from tiny_configs import tiny_config\n"
        f"main_config, create_config = tiny_config({algo!r}, exp_name='ddp_tiny')\n"
    )
    return str(path)


def test_torchrun_cli_writes_one_checkpoint_and_one_log(tmp_path):
    cfg = _write_tiny_config(tmp_path)
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--rdzv-backend=c10d",
           f"--rdzv-endpoint=127.0.0.1:{_free_port()}", "-m", "lzlite.entry", "--cfg", cfg,
           "--max-env-step", "120", "--run-dir", str(run_dir)]
    res = subprocess.run(cmd, env=_env(LZLITE_DDP_TIMEOUT_S="60"), capture_output=True, text=True, timeout=120,
                         cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    assert sorted(os.listdir(run_dir)) == ["ckpt", "config.py", "tb"]
    events = os.listdir(run_dir / "tb")
    assert len(events) == 1, events  # one TensorBoard event file: rank 0 logs alone
    state = torch.load(run_dir / "ckpt" / "last.pt", weights_only=True)
    # rank 0's files only (the final evaluation's weights beside last.pt), no leftover temporaries of rank 1
    assert sorted(os.listdir(run_dir / "ckpt")) == ["best.pt", "iteration_%d.pt" % state["counters"]["train_iter"],
                                                     "last.pt"]
    assert state["counters"]["env_steps"] >= 120  # counted over both ranks' games
    assert state["counters"]["train_iter"] > 0
    assert res.stdout.count("training summary") == 1  # one summary table, printed by rank 0


def _wait_for(path: str, procs: list, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p in procs):
            for p in procs:
                p.kill()
            raise AssertionError(f"ranks never got ready: {[p.communicate()[0][-1500:] for p in procs]}")
        time.sleep(0.05)


@pytest.mark.parametrize("fault", ["hung", "killed"])
def test_a_dead_rank_makes_the_others_fail_within_the_timeout(tmp_path, fault):
    timeout_s = 3.0
    procs = _spawn("hang", str(tmp_path), LZLITE_DDP_TIMEOUT_S=str(timeout_s))
    try:
        _wait_for(os.path.join(tmp_path, "ready0"), procs)
        _wait_for(os.path.join(tmp_path, "ready1"), procs)
        if fault == "killed":
            procs[1].send_signal(signal.SIGKILL)
        t0 = time.monotonic()
        out, _ = procs[0].communicate(timeout=timeout_s + 20)
        waited = time.monotonic() - t0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()
    assert procs[0].returncode == 3, out[-2000:]  # the worker's exit code for a DistributedError
    result = _read(tmp_path, 0)
    assert "rank 0/2: all_reduce_sum failed" in result["error"] and "LZLITE_DDP_TIMEOUT_S" in result["error"]
    if fault == "hung":  # a live but silent peer: only the timeout can end the wait
        assert timeout_s - 0.5 <= result["waited_s"] <= timeout_s + 5, result
    assert waited < timeout_s + 15


@pytest.mark.parametrize("where, op", [("setup", "DistributedDataParallel setup"),
                                       ("backward", "learner step")])
def test_a_peer_dying_inside_torchs_own_collectives_is_one_distributed_error(tmp_path, where, op):
    # ddp_all_reduce_* name their collective themselves; DDP's weight and buffer broadcasts and its gradient
    # all-reduce run inside torch, whose gloo error would otherwise reach the user as a raw traceback
    procs = _spawn("peer_dies", str(tmp_path), where, LZLITE_DDP_TIMEOUT_S="20")
    try:
        out = procs[0].communicate(timeout=90)[0]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()
    assert procs[0].returncode == 3, out[-3000:]
    error = _read(tmp_path, 0)["error"]
    assert error.startswith(f"rank 0/2: {op} failed (") and "Another rank probably died" in error, error


@pytest.mark.parametrize("algo", ["rezero", "unizero", "alphazero"])
def test_every_entry_function_trains_under_torchrun(tmp_path, algo):
    cfg = _write_tiny_config(tmp_path, algo)
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--rdzv-backend=c10d",
           f"--rdzv-endpoint=127.0.0.1:{_free_port()}", "-m", "lzlite.entry", "--cfg", cfg,
           "--max-env-step", "80", "--run-dir", str(run_dir)]
    res = subprocess.run(cmd, env=_env(LZLITE_DDP_TIMEOUT_S="120"), capture_output=True, text=True, timeout=240,
                         cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    state = torch.load(run_dir / "ckpt" / "last.pt", weights_only=True)
    assert state["counters"]["env_steps"] >= 80 and state["counters"]["train_iter"] > 0
