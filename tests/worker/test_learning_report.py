"""benchmarks/learning_report.py reads a run's TensorBoard log and says where a bar was first met."""
from __future__ import annotations

import os
import sys

from torch.utils.tensorboard import SummaryWriter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks.learning_report import main  # noqa: E402


def _run(tmp_path, rows):
    with SummaryWriter(str(tmp_path / "tb")) as w:
        for step, first, second in rows:
            w.add_scalar("eval/alpha_beta/win_as_first", first, step)
            w.add_scalar("eval/alpha_beta/win_as_second", second, step)
    return str(tmp_path)


def test_a_bar_met_exactly_counts_although_tensorboard_stores_float32(tmp_path, capsys):
    # 0.95 is stored as 0.949999988: the bar ">=0.95" must still hold at step 300, not only at step 400
    run = _run(tmp_path, [(100, 1.0, 0.5), (200, 0.9, 1.0), (300, 1.0, 0.95), (400, 1.0, 1.0)])
    assert main([run, "--bar", "eval/alpha_beta/win_as_first>=0.95", "--bar", "eval/alpha_beta/win_as_second>=0.95"]) == 0
    out = capsys.readouterr().out
    assert "first met at 300 env steps" in out


def test_a_bar_never_met_says_so(tmp_path, capsys):
    run = _run(tmp_path, [(100, 1.0, 0.5), (200, 0.9, 0.925)])
    assert main([run, "--bar", "eval/alpha_beta/win_as_second>=0.95"]) == 0
    assert "not met" in capsys.readouterr().out
