"""Slow learning checks of actor / learner runs.

    python -m pytest -q -m slow tests/cluster/test_cluster_learning_slow.py

The synchronous default experiment's bar (tests/entry/test_learning_slow.py) with a learner and 2 actors.
"""
import os

import pytest

from lzlite.config import load_config_file
from lzlite.entry import train_alphazero, train_muzero

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
@pytest.mark.parametrize("config, entry", [
    ("config.py", train_alphazero),  # the default experiment
    ("gumbel_muzero_config.py", train_muzero),
])
def test_tictactoe_with_two_actors_reaches_perfect_play(tmp_path, config, entry):
    """>= 99% optimal moves over all reachable positions, and no losing line from either side."""
    main, create = load_config_file(os.path.join(REPO, "zoo", "tictactoe", config))
    main["policy"]["num_actors"] = 2
    policy = entry([main, create], seed=0, run_dir=str(tmp_path), progress=False)
    ev = policy.final_eval
    assert ev["optimal_move_rate"] >= 0.99, ev
    assert ev["losing_lines_as_first"] == 0 and ev["losing_lines_as_second"] == 0, ev
    assert ev["perfect/loss"] == 0, ev


@pytest.mark.slow
def test_ddp_learner_ranks_each_take_their_actors(tmp_path):
    """torchrun with 2 learner ranks and 2 actors: actor k joins rank k mod 2 (cluster_port + 3 x rank); the ranks
    count each other's env steps and stop together; rank 0 alone prints the summary."""
    import re
    import subprocess
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(REPO, "tests", "entry"))
    from test_wire import free_port
    from tiny_configs import tiny_config

    from lzlite.config import compile_config, save_config

    port = free_port(6)
    cfg_path = str(tmp_path / "tiny.py")
    save_config(compile_config(*tiny_config("alphazero", cluster_port=port), seed=0), cfg_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH", "")) if p))
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m",
                          "lzlite.entry", "--cfg", cfg_path, "--actors", "2", "--max-env-step", "1200", "--run-dir",
                          str(tmp_path / "run")], capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    s = {m.group(1): float(m.group(2)) for m in re.finditer(r"^\s+(\w[\w/]*)\s+(-?[\d.e+-]+)\s*$", out.stdout, re.M)}
    assert s["env_steps"] >= 1200
    # rank 0's own actor played at most 9 moves an episode: the rest of the env steps came from rank 1's actor
    assert s["env_steps"] > 9 * s["episodes"]
    sup = (tmp_path / "run" / "actors" / "supervisor.log").read_text()
    assert "actor 0 started" in sup and "actor 1 started" in sup
