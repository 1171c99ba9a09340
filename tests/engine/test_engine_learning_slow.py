"""Slow learning check through the engine (run with
`python -m pytest -q -m slow tests/engine/test_engine_learning_slow.py`; a few minutes on one core).

The tic-tac-toe default experiment, collected by 'engine_collector' instead of the lock-step collector, meets
the same perfect-play bar as tests/entry/test_learning_slow.py.
"""
import copy
import os

import pytest

from lzlite.config import load_config_file
from lzlite.entry import train_alphazero

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
def test_tictactoe_alphazero_through_the_engine_reaches_perfect_play(tmp_path):
    """>= 99% optimal moves over all reachable positions, and no losing line from either side."""
    main, create = copy.deepcopy(list(load_config_file(os.path.join(REPO, "zoo", "tictactoe", "config.py"))))
    create["collector"] = dict(type="engine_collector")
    policy = train_alphazero([main, create], seed=0, run_dir=str(tmp_path), progress=False)
    ev = policy.final_eval
    assert ev["optimal_move_rate"] >= 0.99, ev
    assert ev["losing_lines_as_first"] == 0 and ev["losing_lines_as_second"] == 0, ev
    assert ev["perfect/loss"] == 0, ev
