"""LightZero compatibility where users call it: int(1e10) stop limits, LightZero's collected-data shape in
calculate_update_per_collect, the DDP helpers in lzlite.entry.utils, and one-line errors for missing extras."""
import os
import sys

import pytest
import torch
from easydict import EasyDict

from lzlite.entry import train_alphazero
from lzlite.entry.loop import UNLIMITED, _schedule_horizon, _stop_limit
from lzlite.entry.utils import calculate_update_per_collect
from lzlite.worker.checkpoint import load_checkpoint
from tiny_configs import tiny_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIGHTZERO_NO_LIMIT = int(1e10)  # the default of max_train_iter / max_env_step in LightZero's train_* functions


class Seg:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


@pytest.mark.parametrize("given, configured, expected", [
    (None, None, UNLIMITED), (500, None, 500), (None, 700, 700), (500, 700, 500),
    (LIGHTZERO_NO_LIMIT, None, UNLIMITED), (LIGHTZERO_NO_LIMIT, 700, 700), (int(1e12), None, UNLIMITED),
    (None, LIGHTZERO_NO_LIMIT, UNLIMITED),
])
def test_stop_limits_at_or_above_1e10_are_no_limit(given, configured, expected):
    assert _stop_limit("max_train_iter", given, configured) == expected


@pytest.mark.parametrize("max_train_iter, max_env_step, update_per_collect, expected", [
    (300, UNLIMITED, None, 300),
    (UNLIMITED, 1000, None, 250),  # env steps x replay_ratio 0.25
    (_stop_limit("max_train_iter", LIGHTZERO_NO_LIMIT, None), 1000, None, 250),  # LightZero's explicit int(1e10): not a horizon
])
def test_schedule_horizon(max_train_iter, max_env_step, update_per_collect, expected):
    pcfg = EasyDict(update_per_collect=update_per_collect, replay_ratio=0.25, lr_schedule="cosine")
    assert _schedule_horizon(pcfg, max_train_iter, max_env_step) == expected


def test_lightzero_style_call_decays_the_cosine_schedule_over_the_env_steps(tmp_path):
    # train_muzero([main_config, create_config], seed=0, max_train_iter=int(1e10), max_env_step=...) as in
    # LightZero's scripts: the schedule spans max_env_step x replay_ratio learner steps, as when it is left out
    train_alphazero(tiny_config("alphazero", lr_schedule="cosine"), seed=0, max_train_iter=LIGHTZERO_NO_LIMIT,
                    max_env_step=200, run_dir=str(tmp_path), progress=False)
    lr = load_checkpoint(str(tmp_path / "ckpt" / "last.pt"))["learner"]["optimizer"]["param_groups"][0]["lr"]
    assert 0.0003 <= lr < 0.0006, lr  # near the 10% floor of 0.003, not the peak


def test_calculate_update_per_collect_takes_lightzero_collected_data():
    cfg = EasyDict(policy=dict(update_per_collect=None, replay_ratio=0.5, game_segment_length=400))
    # LightZero's collector returns new_data = [game_segments, meta_list]
    new_data = [[Seg(5), Seg(7)], [dict(done=True, unroll_plus_td_steps=8), dict(done=False, unroll_plus_td_steps=8)]]
    assert calculate_update_per_collect(cfg, new_data) == 6
    assert calculate_update_per_collect(cfg, new_data, 1) == 6  # LightZero's positional world_size
    assert calculate_update_per_collect(cfg, ([Seg(4)], [dict(done=True)])) == 2
    # lzlite's own forms are unchanged: the segments themselves, or a count
    assert calculate_update_per_collect(cfg, [Seg(5), Seg(7)]) == 6
    assert calculate_update_per_collect(cfg, [Seg(5), Seg(7), Seg(2)]) == 7
    assert calculate_update_per_collect(cfg, 12) == 6


def test_ddp_helpers_are_importable_from_entry_utils():
    from lzlite.distributed import ddp
    from lzlite.entry.utils import ddp_all_reduce_sum, ddp_synchronize, is_ddp_enabled

    assert (ddp_all_reduce_sum, ddp_synchronize, is_ddp_enabled) == (
        ddp.ddp_all_reduce_sum, ddp.ddp_synchronize, ddp.is_ddp_enabled)
    assert not is_ddp_enabled()
    ddp_synchronize()  # a no-op without torchrun
    assert torch.equal(ddp_all_reduce_sum(torch.tensor([3, 4])), torch.tensor([3, 4]))


def test_missing_gymnasium_is_a_one_line_error_naming_the_extra(tmp_path, monkeypatch, capsys):
    from lzlite.entry.__main__ import main

    monkeypatch.setitem(sys.modules, "gymnasium", None)  # `import gymnasium` now fails as if it were not installed
    code = main(["--cfg", os.path.join(ROOT, "zoo", "cartpole", "config.py"), "--max-env-step", "1", "--run-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("lzlite: error:"), err
    assert "'gymnasium'" in err and "lzlite[gym]" in err and '-e ".[gym]"' in err


def test_other_import_errors_keep_their_traceback():
    from lzlite.entry.__main__ import missing_optional_package

    assert missing_optional_package(ModuleNotFoundError("x", name="gymnasium.spaces")) == "gymnasium"
    assert missing_optional_package(ModuleNotFoundError("x", name="numpyy")) is None
    wrapped = ImportError("gymnasium is needed")
    wrapped.__cause__ = ModuleNotFoundError("x", name="gymnasium")
    assert missing_optional_package(wrapped) == "gymnasium"
    assert missing_optional_package(ImportError("cannot import name 'foo'")) is None
