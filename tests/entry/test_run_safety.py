"""Runs lose nothing by accident: no silent no-op limits, no overwritten runs, no file changed by a refused resume,
no leftover temporary checkpoints; bad limits and seeds are one-line errors."""
from __future__ import annotations

import hashlib
import os

import pytest

from lzlite.config import ConfigError
from lzlite.entry import train_alphazero
from lzlite.entry.__main__ import main
from lzlite.worker.checkpoint import CheckpointError
from tiny_configs import tiny_config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _digest(folder) -> dict:
    """name -> sha256 of every file under ``folder`` (TensorBoard logs aside: a refused run opens none)."""
    out = {}
    for dp, _, files in os.walk(folder):
        for f in files:
            path = os.path.join(dp, f)
            if os.sep + "tb" + os.sep not in path:
                out[os.path.relpath(path, folder)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return out


@pytest.mark.parametrize("args, message", [
    (["--max-env-step", "0"], "argument --max-env-step: must be >= 1"),
    (["--max-env-step", "-5"], "argument --max-env-step: must be >= 1"),
    (["--max-train-iter", "-1"], "argument --max-train-iter: must be >= 1"),
    (["--seed", "-5"], "argument --seed: must be in [0, 2147483647]"),
    (["--seed", "9" * 2000], "argument --seed: must be in [0, 2147483647]"),
])
def test_bad_limits_and_seeds_are_one_line_cli_errors(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--cfg", os.path.join(REPO, "zoo", "tictactoe", "config.py"), *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()[-1]) < 200


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_env_step=0), r"max_env_step \(the argument\) must be a positive number"),
    (dict(max_train_iter=-1), r"max_train_iter \(the argument\) must be a positive number"),
    (dict(seed=-5), r"seed must be an int in \[0, 2147483647\]"),
    (dict(seed=2**40), r"seed must be an int in \[0, 2147483647\]"),
])
def test_bad_limits_and_seeds_in_python_are_config_errors(tmp_path, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        train_alphazero(tiny_config("alphazero"), run_dir=str(tmp_path), progress=False, **kwargs)
    assert not os.listdir(tmp_path), "a refused run writes nothing"
    main_config, create_config = tiny_config("alphazero")
    main_config["max_env_step"] = -5
    with pytest.raises(ConfigError, match=r"max_env_step \(main_config.max_env_step\) must be a positive number"):
        train_alphazero([main_config, create_config], run_dir=str(tmp_path), progress=False)


def test_a_trained_run_is_not_overwritten_and_a_refused_resume_changes_no_file(tmp_path):
    run = str(tmp_path / "run")
    train_alphazero(tiny_config("alphazero"), seed=0, max_env_step=40, run_dir=run, progress=False)
    before = _digest(run)
    assert "ckpt/last.pt" in before and "config.py" in before
    with pytest.raises(ConfigError, match="already holds a run .*--resume.*--run-dir.*--force"):
        train_alphazero(tiny_config("alphazero"), seed=0, max_env_step=40, run_dir=run, progress=False)
    assert _digest(run) == before
    # a resume the checkpoint does not fit (another network) is refused and leaves config.py as it was
    other = tiny_config("alphazero")
    other[0]["policy"]["model"]["num_channels"] = 16
    with pytest.raises(CheckpointError, match="does not match"):
        train_alphazero(other, seed=0, max_env_step=80, run_dir=run, resume=True, progress=False)
    assert _digest(run) == before
    # a resume with nothing to resume writes nothing
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train_alphazero(tiny_config("alphazero"), max_env_step=80, run_dir=str(tmp_path / "empty"), resume=True,
                        progress=False)
    assert not (tmp_path / "empty").exists()
    # --force starts afresh
    train_alphazero(tiny_config("alphazero"), seed=1, max_env_step=40, run_dir=run, progress=False, force=True)
    assert _digest(run)["ckpt/last.pt"] != before["ckpt/last.pt"]


def test_leftover_temporary_checkpoints_are_removed_at_start(tmp_path):
    run = tmp_path / "run"
    train_alphazero(tiny_config("alphazero"), seed=0, max_env_step=40, run_dir=str(run), progress=False)
    stale = run / "ckpt" / "last.pt.tmp.4242"  # what a kill -9 during a checkpoint write leaves
    stale.write_bytes(b"half a checkpoint")
    train_alphazero(tiny_config("alphazero"), seed=0, max_env_step=80, run_dir=str(run), resume=True, progress=False)
    assert not stale.exists()
    assert not [f for f in os.listdir(run / "ckpt") if ".tmp." in f]
