"""Every zoo config runs through the real command line: `python -m lzlite.entry --cfg FILE`.

A zoo config's first collect is sized for a long run (Connect Four: 128 games x 100 simulations), minutes
on a test machine, so each run goes through a two-line wrapper config beside the run: the zoo file loaded
with ``load_config_file`` (which also puts the zoo folder on sys.path for its ``import_names``) and
``SHRINK`` merged over its policy, the same pattern a zoo variant config uses over its base. Everything
else (policy type, import_names, env, model, search rule, collect bots, evaluation bots) is the zoo
file's own, so a new config or a config naming a user's policy subclass is covered without a change here.
"""
import glob
import os
import subprocess
import sys

import pytest

from lzlite.config import compile_config, load_config_file
from lzlite.worker.checkpoint import load_checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
from test_wire import free_port  # noqa: E402
ZOO_CONFIGS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "zoo", "*", "*config.py")))

# The tiny budget, set for each key the config's policy has: two games (or segments) per collect, few
# simulations, a batch small enough that the first collect already trains, two evaluation games per bot.
SHRINK = dict(
    collector_env_num=2,
    n_episode=2,
    num_segments=2,
    num_simulations=4,
    max_num_considered_actions=4,
    batch_size=4,
    eval_episodes=2,
    replay_buffer_size=1000,
)


def _tiny_wrapper(zoo_config: str, folder) -> str:
    main, create = load_config_file(os.path.join(ROOT, zoo_config))
    policy_keys = compile_config(main, create, seed=0).policy
    shrink = {k: v for k, v in SHRINK.items() if k in policy_keys}
    if policy_keys.get("num_actors", 0) > 0:  # a recipe with actors: its learner's ports must be free here
        shrink["cluster_port"] = free_port()
    path = folder / "tiny_config.py"
    path.write_text(
        f"# {zoo_config} with the tiny budget of tests/entry/test_zoo_configs.py\n"
        "from lzlite.config import deep_update, load_config_file\n"
        f"main_config, create_config = load_config_file({os.path.join(ROOT, zoo_config)!r})\n"
        f"main_config = deep_update(main_config, dict(policy={shrink!r}))\n"
    )
    return str(path)


def test_every_game_folder_has_configs():
    assert {p.split(os.sep)[1] for p in ZOO_CONFIGS} >= {"tictactoe", "connect4", "gomoku", "cartpole"}
    assert all(os.path.basename(p) == "config.py" or p.endswith("_config.py") for p in ZOO_CONFIGS)


@pytest.mark.parametrize("zoo_config", ZOO_CONFIGS)
def test_zoo_config_runs_through_the_command_line(tmp_path, zoo_config):
    cfg_file = _tiny_wrapper(zoo_config, tmp_path)
    run_dir = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    proc = subprocess.run(
        [sys.executable, "-m", "lzlite.entry", "--cfg", cfg_file, "--max-env-step", "1", "--seed", "0",
         "--run-dir", str(run_dir)],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{zoo_config} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert (run_dir / "config.py").is_file()
    state = load_checkpoint(str(run_dir / "ckpt" / "last.pt"))
    assert state["counters"]["env_steps"] >= 1
    assert state["counters"]["train_iter"] > 0, "the first collect should already train (batch_size is tiny)"
