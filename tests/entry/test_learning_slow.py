"""Slow learning checks (run with `python -m pytest -q -m slow tests/entry/test_learning_slow.py`).

Each trains a shipped config and checks the bar docs/results.md reports for it.
"""
import os

import pytest

from lzlite.config import load_config_file
from lzlite.entry import train_alphazero

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
def test_tictactoe_alphazero_reaches_perfect_play(tmp_path):
    """The default experiment: >= 99% optimal moves over all reachable positions, never loses."""
    cfg = list(load_config_file(os.path.join(REPO, "zoo", "tictactoe", "config.py")))
    policy = train_alphazero(cfg, seed=0, run_dir=str(tmp_path), progress=False)
    ev = policy.final_eval
    assert ev["optimal_move_rate"] >= 0.99, ev
    assert ev["losing_lines_as_first"] == 0 and ev["losing_lines_as_second"] == 0, ev
    assert ev["perfect/loss"] == 0, ev
