"""logger.wandb: the same scalars as TensorBoard, the resolved config and the final evaluation, offline without a
key; the package missing is one warning. The logger section's keys are checked like every other config key."""
import glob
import os
import sys
import time
import warnings

import pytest

from lzlite.config import ConfigError, compile_config
from lzlite.entry import train_alphazero
from lzlite.telemetry.wandb import wandb_mode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "entry"))
from tiny_configs import tiny_config  # noqa: E402


def _train(tmp_path, name, **logger):
    cfg = tiny_config("alphazero")
    cfg[0]["logger"] = logger
    return train_alphazero(cfg, seed=0, max_env_step=60, run_dir=str(tmp_path / name), progress=False)


def _tensorboard_tags(run_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(os.path.join(run_dir, "tb"))
    acc.Reload()
    return set(acc.Tags()["scalars"])


def test_wandb_missing_is_one_warning_and_the_run_trains(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` raises ImportError
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        policy = _train(tmp_path, "nowandb", wandb=True)
    ours = [str(w.message) for w in caught if "logger.wandb" in str(w.message)]
    assert len(ours) == 1 and "not installed" in ours[0]
    assert policy.final_eval and _tensorboard_tags(str(tmp_path / "nowandb"))


def test_wandb_offline_logs_tensorboards_scalars_the_config_and_the_final_evaluation(tmp_path, monkeypatch):
    pytest.importorskip("wandb", reason="the wandb package is not installed (pip install -e '.[wandb]')")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc: no key configured
    assert wandb_mode() == "offline"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _train(tmp_path, "wb", wandb=True)
    assert not [w for w in caught if "logger.wandb" in str(w.message)]
    files = glob.glob(str(tmp_path / "wb" / "wandb" / "offline-run-*" / "run-*.wandb"))
    assert len(files) == 1
    tags = _tensorboard_tags(str(tmp_path / "wb"))
    assert {"learn/loss", "collect/env_steps", "eval/random/win"} <= tags
    wanted = [tag.encode() for tag in tags] + [b"final/random/win", b"num_simulations"]
    deadline = time.monotonic() + 20.0
    while True:  # W&B's service process may still be writing its record log when finish() returns
        record = open(files[0], "rb").read()  # keys are stored in it as plain UTF-8
        missing = [key for key in wanted if key not in record]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert missing == []


def test_wandb_mode_follows_the_users_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    assert wandb_mode() == "online"
    monkeypatch.delenv("WANDB_API_KEY")
    (tmp_path / ".netrc").write_text("machine api.wandb.ai\n  login user\n  password " + "y" * 40 + "\n")
    os.chmod(tmp_path / ".netrc", 0o600)
    assert wandb_mode() == "online"
    monkeypatch.setenv("WANDB_MODE", "disabled")
    assert wandb_mode() is None  # the user's choice: W&B reads it


@pytest.mark.parametrize("logger, message", [
    (dict(spectate_games=-1), r"main_config.logger.spectate_games' must be in \[0, inf\)"),
    (dict(redis_url="localhost:6379"), "must be a Redis URL"),
    (dict(redis_url=6379), "must be a Redis URL"),
    (dict(wandb="yes"), "expects bool"),
    (dict(redis=None), "Did you mean 'redis_url'"),
])
def test_bad_logger_keys_are_one_line_errors(logger, message):
    main, create = tiny_config("alphazero")
    main["logger"] = logger
    with pytest.raises(ConfigError, match=message):
        compile_config(main, create)


def test_logger_defaults():
    cfg = compile_config(*tiny_config("alphazero"))
    assert cfg.logger == dict(wandb=False, wandb_project="lzlite", redis_url=None, spectate_games=2)


@pytest.mark.slow
def test_wandb_without_network_falls_back_to_offline(tmp_path, monkeypatch):
    """A key but no server (a closed port): one warning after W&B's 20 s init timeout, the run logged offline."""
    pytest.importorskip("wandb", reason="the wandb package is not installed (pip install -e '.[wandb]')")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_API_KEY", "k" * 40)
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:9")  # the discard port: nothing answers
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        policy = _train(tmp_path, "nonet", wandb=True)
    ours = [str(w.message) for w in caught if "logger.wandb" in str(w.message)]
    assert len(ours) == 1 and "logging offline" in ours[0] and "\n" not in ours[0]
    assert policy.final_eval
    assert glob.glob(str(tmp_path / "nonet" / "wandb" / "offline-run-*" / "run-*.wandb"))
