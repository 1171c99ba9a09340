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
